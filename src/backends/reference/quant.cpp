// dequantize: the packed rows are consecutive blocks, decoded in order by the shared ggml
// decoders (util/quant_blocks.h).
#include "backends/reference/kernels.h"
#include "util/quant_blocks.h"

namespace rlx::backends::reference {

namespace {

void dequantize(const KernelArgs& a) {
  quant::BlockType t = *quant::block_type_from_name(a.node.attrs.s("type"));
  int64_t nblocks = a.out[0].numel / quant::block_elems(t);
  std::vector<float> y(static_cast<size_t>(quant::block_elems(t)));
  const auto* src = static_cast<const uint8_t*>(a.in[0].data);
  for (int64_t b = 0; b < nblocks; ++b) {
    quant::decode_blocks(t, src + b * quant::block_bytes(t), 1, y.data());
    for (size_t j = 0; j < y.size(); ++j) wd(a.out[0], b * quant::block_elems(t) + static_cast<int64_t>(j), y[j]);
  }
}

}  // namespace

void register_quant(KernelTable& t) { t[static_cast<size_t>(ir::Op::dequantize)] = dequantize; }

}  // namespace rlx::backends::reference
