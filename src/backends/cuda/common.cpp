#include <algorithm>

#include "backends/cuda/kernels.h"
#include "backends/cuda/device.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

#define RLX_SAME(name) static_assert(static_cast<int>(Dt::name) == static_cast<int>(DType::name), "Dt must mirror rlx::DType");
RLX_SAME(f32)
RLX_SAME(f16)
RLX_SAME(bf16)
RLX_SAME(f64)
RLX_SAME(c64)
RLX_SAME(i8)
RLX_SAME(u8)
RLX_SAME(i16)
RLX_SAME(i32)
RLX_SAME(i64)
RLX_SAME(boolean)
RLX_SAME(c128)
#undef RLX_SAME

Dt to_dt(DType d) { return static_cast<Dt>(d); }

bool pdl_enabled() {
  static const bool sm90 = gpu_info().major >= 9;
  return sm90 && flags().RLX_CUDA_PDL;
}

void dependent_launch(cudaLaunchConfig_t& cfg, cudaLaunchAttribute* attrs) {
  cfg.attrs = attrs;
  if (!pdl_enabled()) return;
  cudaLaunchAttribute& a = attrs[cfg.numAttrs++];
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
}

bool is_one_of(DType d, std::initializer_list<DType> set) { return std::find(set.begin(), set.end(), d) != set.end(); }

bool is_half_or_f32(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16; }
bool storable_out(DType x, const ir::Attrs& a) {
  if (!a.has("out")) return true;
  DType o = a.dtype("out");
  return o == x || (x == DType::f32 && (o == DType::f16 || o == DType::bf16));
}

void collapse(std::vector<int64_t>& shape, std::vector<std::vector<int64_t>*> strides, const char* what) {
  codegen::collapse_dims(shape, strides);
  if (shape.size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorKind::unsupported, cat(what, ": the cuda device handles at most ", kMaxRank, " non-contiguous dims, got ", shape.size()));
}

Space make_space(const std::vector<int64_t>& shape) {
  Space sp;
  sp.rank = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size() && d < static_cast<size_t>(kMaxRank); ++d) sp.shape[d] = shape[d];
  return sp;
}

Strides make_strides(const std::vector<int64_t>& strides) {
  Strides st;
  for (size_t d = 0; d < strides.size() && d < static_cast<size_t>(kMaxRank); ++d) st.s[d] = strides[d];
  return st;
}

std::vector<int64_t> static_shape(const ir::Graph& g, ir::ValueId v) { return shape_values(g.type(v).shape); }

const ir::Type& in_type(const ir::Graph& g, const ir::Node& n, size_t k) { return g.type(n.inputs[k]); }
const ir::Type& out_type(const ir::Graph& g, const ir::Node& n, size_t k) { return g.type(n.outputs[k]); }

std::string node_label(const ir::Node& n) { return n.name.empty() ? ir::op_keyword(n.op) : cat(ir::op_keyword(n.op), " \"", n.name, "\""); }

void check_launch(const LaunchArgs& a) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw Error(ErrorKind::runtime, cat("cuda: launching ", node_label(a.node), " failed: ", cudaGetErrorString(e)));
}

}  // namespace rlx::backends::cuda
