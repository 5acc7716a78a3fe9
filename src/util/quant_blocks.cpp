// The block types' sizes and names, and host decoding through gguf_blocks.h's decoders (the
// ones the cuda kernels compile too).
#include "util/quant_blocks.h"

#include <array>

#include "util/gguf_blocks.h"

namespace rlx::quant {

namespace {

using BlockFn = void (*)(const uint8_t*, float*);

struct Info {
  BlockType type;
  const char* name;
  int64_t elems, bytes;
  BlockFn decode;
};

constexpr std::array<Info, kNumBlockTypes> kInfos = {{
    {BlockType::q4_0, "q4_0", 32, 18, decode_q4_0},
    {BlockType::q4_1, "q4_1", 32, 20, decode_q4_1},
    {BlockType::q5_0, "q5_0", 32, 22, decode_q5_0},
    {BlockType::q5_1, "q5_1", 32, 24, decode_q5_1},
    {BlockType::q8_0, "q8_0", 32, 34, decode_q8_0},
    {BlockType::q2_k, "q2_k", 256, 84, decode_q2_k},
    {BlockType::q3_k, "q3_k", 256, 110, decode_q3_k},
    {BlockType::q4_k, "q4_k", 256, 144, decode_q4_k},
    {BlockType::q5_k, "q5_k", 256, 176, decode_q5_k},
    {BlockType::q6_k, "q6_k", 256, 210, decode_q6_k},
    {BlockType::q8_k, "q8_k", 256, 292, decode_q8_k},
    {BlockType::f16, "f16", 1, 2, decode_f16},
    {BlockType::bf16, "bf16", 1, 2, decode_bf16},
    {BlockType::iq4_nl, "iq4_nl", 32, 18, decode_iq4_nl},
    {BlockType::iq4_xs, "iq4_xs", 256, 136, decode_iq4_xs},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kInfos.size(); ++i)
    if (static_cast<size_t>(kInfos[i].type) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kInfos must list BlockType values in declaration order");

const Info& info(BlockType t) { return kInfos[static_cast<size_t>(t)]; }

}  // namespace

const char* block_type_name(BlockType t) { return info(t).name; }

std::optional<BlockType> block_type_from_name(std::string_view name) {
  for (const Info& i : kInfos)
    if (name == i.name) return i.type;
  return std::nullopt;
}

int64_t block_elems(BlockType t) { return info(t).elems; }
int64_t block_bytes(BlockType t) { return info(t).bytes; }

std::optional<int64_t> row_bytes(BlockType t, int64_t k) {
  if (k < 0 || k % info(t).elems != 0) return std::nullopt;
  return k / info(t).elems * info(t).bytes;
}

void decode_blocks(BlockType t, const uint8_t* src, int64_t nblocks, float* dst) {
  const Info& i = info(t);
  for (int64_t b = 0; b < nblocks; ++b) i.decode(src + b * i.bytes, dst + b * i.elems);
}

}  // namespace rlx::quant
