// Fused ops on the cuda device. mir.elementwise_region: the body becomes a RegionProgram that
// region.cu runs per element (one pass over memory for the whole chain). mir.fused_dot: the
// GEMM through cuBLASLt — a leading bias add folded into its epilogue — then the rest of the
// epilogue as a region over the product. mir.fused_reduce: the prologue evaluated as the
// reduction reads it (one NVRTC kernel).
#include <cstring>
#include <optional>

#include "backends/cuda/gemm.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/region_jit.h"
#include "backends/cuda/device.h"
#include "codegen/scalar.h"
#include "ops/builder.h"
#include "ops/region.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;
using ir::ValueId;

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool region_dtype(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16 || d == DType::boolean; }

uint8_t round_of(DType d) { return d == DType::f16 ? 1 : d == DType::bf16 ? 2 : d == DType::boolean ? 3 : 0; }

std::shared_ptr<const ir::Graph> parse_body(const std::string& text) {
  try {
    return ops::region_body(text);
  } catch (const Error&) {
    return nullptr;
  }
}

// The body as a program; nullopt when the register machine cannot run it. `as_copy` names a
// node whose result is already in input 0 (a bias add done by the GEMM).
std::optional<RegionProgram> compile_body(const ir::Graph& body, int as_copy = -1) {
  RegionProgram p{};
  if (body.inputs().size() > static_cast<size_t>(kRegionMaxInputs) || body.outputs().size() > static_cast<size_t>(kRegionMaxOutputs) ||
      body.num_values() > static_cast<size_t>(kRegionMaxRegs) || body.num_nodes() > kRegionMaxCode)
    return std::nullopt;
  for (size_t v = 0; v < body.num_values(); ++v)
    if (!region_dtype(body.type(static_cast<ValueId>(v)).dtype)) return std::nullopt;
  p.n_in = static_cast<int>(body.inputs().size());
  for (int k = 0; k < p.n_in; ++k) {
    p.in_reg[k] = static_cast<uint8_t>(body.inputs()[static_cast<size_t>(k)]);
    p.in_dt[k] = to_dt(body.type(body.inputs()[static_cast<size_t>(k)]).dtype);
  }
  for (int i = 0; i < body.num_nodes(); ++i) {
    const ir::Node& n = body.node(i);
    uint8_t dst = static_cast<uint8_t>(n.outputs[0]);
    if (n.op == Op::constant) {
      const Tensor& t = n.attrs.tensor("value");
      if (t.numel() != 1) return std::nullopt;
      p.const_reg[p.n_const] = dst;
      p.const_val[p.n_const++] = static_cast<float>(t.at_f64(0));
      continue;
    }
    RegionInstr in{};
    if (i == as_copy) {
      in.op = Op::cast;  // the value as it is: the GEMM already added the bias
      in.a = static_cast<uint8_t>(body.inputs()[0]);
    } else {
      if (n.op != Op::cast && !(codegen::is_elementwise(n.op) && codegen::defines(codegen::ValueClass::floating, n.op))) return std::nullopt;
      in.op = n.op;
      if (n.outputs.size() != 1 || n.inputs.size() > 3) return std::nullopt;
      if (n.inputs.size() > 0) in.a = static_cast<uint8_t>(n.inputs[0]);
      if (n.inputs.size() > 1) in.b = static_cast<uint8_t>(n.inputs[1]);
      if (n.inputs.size() > 2) in.c = static_cast<uint8_t>(n.inputs[2]);
    }
    in.dst = dst;
    in.round = round_of(body.type(n.outputs[0]).dtype);
    p.code[p.n_code++] = in;
  }
  p.n_out = static_cast<int>(body.outputs().size());
  for (int o = 0; o < p.n_out; ++o) {
    p.out_reg[o] = static_cast<uint8_t>(body.outputs()[static_cast<size_t>(o)]);
    p.out_dt[o] = to_dt(body.type(body.outputs()[static_cast<size_t>(o)]).dtype);
  }
  return p;
}

// Fills the iteration space and every input's broadcast strides; false past kRegionRank dims.
bool set_geometry(RegionProgram& p, std::vector<int64_t> shape, const std::vector<std::vector<int64_t>>& in_shapes) {
  std::vector<std::vector<int64_t>> st;
  for (const auto& s : in_shapes) st.push_back(broadcast_strides(shape, s));
  std::vector<int64_t> out_st = contiguous_strides(shape);
  std::vector<std::vector<int64_t>*> all = {&out_st};
  for (auto& s : st) all.push_back(&s);
  collapse(shape, all, "mir.elementwise_region");
  if (shape.size() > static_cast<size_t>(kRegionRank)) return false;
  p.rank = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) p.shape[d] = shape[d];
  for (size_t k = 0; k < st.size(); ++k)
    for (size_t d = 0; d < shape.size(); ++d) p.in_stride[k][d] = st[k][d];
  return true;
}

// The program as its own NVRTC kernel where possible, else on the register machine.
struct RegionRun {
  RegionProgram p;
  std::shared_ptr<const RegionKernel> jit;
  void operator()(const void* const* in, void* const* out, int64_t n, cudaStream_t s) const {
    if (jit) launch_region_jit(*jit, p, in, out, n, s);
    else launch_region(p, in, out, n, s);
  }
};

std::shared_ptr<RegionRun> make_run(const RegionProgram& p) {
  auto r = std::make_shared<RegionRun>();
  r->p = p;
  InputAccess access[kRegionMaxInputs];
  std::vector<int64_t> shape(p.shape, p.shape + p.rank), cs = contiguous_strides(shape);
  for (int k = 0; k < p.n_in; ++k) {
    bool full = true, scalar = true;
    for (int d = 0; d < p.rank; ++d) {
      full = full && (p.in_stride[k][d] == cs[static_cast<size_t>(d)] || p.shape[d] == 1);
      scalar = scalar && p.in_stride[k][d] == 0;
    }
    access[k] = scalar ? InputAccess::scalar : full ? InputAccess::full : InputAccess::strided;
  }
  r->jit = jit_region(p, access);
  return r;
}

bool claims_region(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  auto body = parse_body(attrs.s("body"));
  if (!body || out.empty() || out[0].shape.size() > static_cast<size_t>(kRegionRank)) return false;
  for (const auto& t : out)
    if (t.shape != out[0].shape) return false;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].dtype != body->type(body->inputs()[k]).dtype) return false;
  return compile_body(*body).has_value();
}

Kernel make_region(const ir::Node& n, const ir::Graph& g) {
  auto body = parse_body(n.attrs.s("body"));
  std::optional<RegionProgram> p = body ? compile_body(*body) : std::nullopt;
  std::vector<std::vector<int64_t>> in_shapes;
  for (ValueId v : n.inputs) in_shapes.push_back(static_shape(g, v));
  if (!p || !set_geometry(*p, static_shape(g, n.outputs[0]), in_shapes)) return {};
  auto run = make_run(*p);
  Kernel k{[run](const LaunchArgs& a) {
             const void* in[kRegionMaxInputs];
             void* out[kRegionMaxOutputs];
             for (size_t k = 0; k < a.in.size(); ++k) in[k] = a.in[k].data;
             for (size_t k = 0; k < a.out.size(); ++k) out[k] = a.out[k].data;
             (*run)(in, out, a.out[0].numel, a.stream);
           },
           0, run->jit ? "NVRTC" : "interpreted"};
  return k;
}

// ---- fused_dot

DType product_dtype(const std::vector<ir::Type>& in, const ir::Attrs& attrs) {
  const ir::AttrValue* o = attrs.find("out");
  return o ? std::get<DType>(*o) : in[0].dtype;
}

bool claims_fused_dot(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType d = in[0].dtype, pd = product_dtype(in, attrs);
  if (in[1].dtype != d || !is_half_or_f32(d) || !is_half_or_f32(pd)) return false;
  if (d == DType::f32 && pd != DType::f32) return false;
  if (const ir::AttrValue* c = attrs.find("compute"); c && std::get<DType>(*c) != d) return false;
  auto body = parse_body(attrs.s("epilogue"));
  if (!body || body->inputs().empty() || body->outputs().size() != 1 || out[0].shape.size() > static_cast<size_t>(kRegionRank)) return false;
  if (body->type(body->inputs()[0]).dtype != pd) return false;
  for (size_t k = 2; k < in.size(); ++k)
    if (in[k].dtype != body->type(body->inputs()[k - 1]).dtype) return false;
  return compile_body(*body).has_value();
}

// The fused_dot input k (≥ 2) that the body's f32 add node n adds to `prev` (body input j is
// the node's input j + 1): an f32 input of the epilogue, not a value it computes; -1 otherwise.
int addend_input(const ir::Graph& body, const ir::Node& n, ValueId prev, const ir::Node& node) {
  if (n.op != Op::add || body.type(n.outputs[0]).dtype != DType::f32) return -1;
  ValueId other = n.inputs[0] == prev ? n.inputs[1] : n.inputs[1] == prev ? n.inputs[0] : ir::kNoValue;
  if (other == ir::kNoValue || other == prev || body.value(other).node >= 0 || body.type(other).dtype != DType::f32) return -1;
  size_t k = static_cast<size_t>(body.value(other).index) + 1;
  return k >= 2 && k < node.inputs.size() ? static_cast<int>(k) : -1;
}

// The extra input k that a first node add(product, bias) reads, when bias is an f32 [N] row
// that cuBLASLt's bias epilogue can add; -1 otherwise.
int bias_input(const ir::Graph& body, const ir::Node& node, const ir::Graph& g, int64_t N, DType product, int& at) {
  at = 0;
  while (at < body.num_nodes() && body.node(at).op == Op::constant) ++at;
  if (at == body.num_nodes() || product != DType::f32) return -1;
  int k = addend_input(body, body.node(at), body.inputs()[0], node);
  if (k < 0) return -1;
  std::vector<int64_t> s = static_shape(g, node.inputs[static_cast<size_t>(k)]);
  int64_t numel = 1;
  for (int64_t d : s) numel *= d;
  return !s.empty() && s.back() == N && numel == N ? k : -1;
}

// The extra input k that the epilogue's last node adds in full to `prev` (the product, or the
// product plus its bias) — a residual [M, N] f32 tensor that cuBLASLt adds as C (D = A·B + C,
// then the bias) — when that sum is the epilogue's result; -1 otherwise.
int residual_input(const ir::Graph& body, const ir::Node& node, const ir::Graph& g, int at, ValueId prev, DType product,
                   const std::vector<int64_t>& y) {
  if (product != DType::f32 || at + 1 != body.num_nodes() || body.outputs().size() != 1) return -1;
  const ir::Node& n = body.node(at);
  if (body.outputs()[0] != n.outputs[0]) return -1;
  int k = addend_input(body, n, prev, node);
  return k >= 0 && static_shape(g, node.inputs[static_cast<size_t>(k)]) == y ? k : -1;
}

Kernel make_fused_dot(const ir::Node& n, const ir::Graph& g) {
  auto body = parse_body(n.attrs.s("epilogue"));
  if (!body) return {};
  std::vector<ir::Type> in_types;
  for (ValueId v : n.inputs) in_types.push_back(g.type(v));
  DType d = in_types[0].dtype, pd = product_dtype(in_types, n.attrs);
  std::vector<int64_t> x = static_shape(g, n.inputs[0]), w = static_shape(g, n.inputs[1]), y = static_shape(g, n.outputs[0]);
  int64_t N = y.empty() ? 1 : y.back();
  int add_at = 0;
  int bias_k = bias_input(*body, n, g, N, pd, add_at);
  // a residual added after the bias (or to the bare product), stored as the output itself
  int res_k = g.type(n.outputs[0]).dtype == pd
                  ? residual_input(*body, n, g, bias_k >= 0 ? add_at + 1 : add_at, bias_k >= 0 ? body->node(add_at).outputs[0] : body->inputs()[0], pd, y)
                  : -1;
  GemmEpilogue ep;
  if (bias_k >= 0) ep.kind = GemmEpilogue::Kind::bias;
  ep.residual = res_k >= 0;
  std::shared_ptr<GemmPlan> plan;
  try {
    plan = std::make_shared<GemmPlan>(x, w, n.attrs.intss("batch"), n.attrs.intss("contract"), d, pd, ep);
  } catch (const Error&) {
    if (bias_k < 0 && res_k < 0) throw;
    bias_k = res_k = -1;  // no algorithm with the epilogue: the region adds the bias and the residual
    plan = std::make_shared<GemmPlan>(x, w, n.attrs.intss("batch"), n.attrs.intss("contract"), d, pd);
  }
  // The whole epilogue was the bias and residual adds: the GEMM writes the output itself.
  bool bias_only = bias_k >= 0 && body->num_nodes() == add_at + 1 && body->outputs()[0] == body->node(add_at).outputs[0] && g.type(n.outputs[0]).dtype == pd;
  if (bias_only || res_k >= 0)
    return {[plan, bias_k, res_k](const LaunchArgs& a) {
              plan->run(a.in[0].data, a.in[1].data, a.out[0].data, bias_k >= 0 ? a.in[static_cast<size_t>(bias_k)].data : nullptr,
                        res_k >= 0 ? a.in[static_cast<size_t>(res_k)].data : nullptr, a.scratch, a.stream);
            },
            plan->scratch(), plan->describe()};
  std::optional<RegionProgram> p = compile_body(*body, bias_k >= 0 ? add_at : -1);
  std::vector<std::vector<int64_t>> in_shapes = {y};
  for (size_t k = 2; k < n.inputs.size(); ++k) in_shapes.push_back(static_shape(g, n.inputs[k]));
  if (!p || !set_geometry(*p, y, in_shapes)) return {};
  auto run = make_run(*p);
  size_t product_at = (plan->scratch() + 255) / 256 * 256;
  int64_t numel = 1;
  for (int64_t v : y) numel *= v;
  size_t scratch = product_at + dtype_bytes(pd, numel);
  return {[plan, run, product_at, bias_k](const LaunchArgs& a) {
            void* product = static_cast<uint8_t*>(a.scratch) + product_at;
            plan->run(a.in[0].data, a.in[1].data, product, bias_k >= 0 ? a.in[static_cast<size_t>(bias_k)].data : nullptr, nullptr,
                      a.scratch, a.stream);
            const void* in[kRegionMaxInputs];
            void* out[kRegionMaxOutputs] = {a.out[0].data};
            in[0] = product;
            for (size_t k = 2; k < a.in.size(); ++k) in[k - 1] = a.in[k].data;
            (*run)(in, out, a.out[0].numel, a.stream);
          },
          scratch, cat(plan->describe(), run->jit ? " + NVRTC epilogue" : " + interpreted epilogue")};
}

// ---- fused_reduce

bool claims_fused_reduce(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& attrs) {
  auto body = parse_body(attrs.s("prologue"));
  if (!body || body->outputs().size() != 1 || body->inputs().size() != in.size()) return false;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].dtype != body->type(body->inputs()[k]).dtype || in[k].shape.size() > static_cast<size_t>(kRegionRank)) return false;
  return is_half_or_f32(body->type(body->outputs()[0]).dtype) && compile_body(*body).has_value();
}

Kernel make_fused_reduce(const ir::Node& n, const ir::Graph& g) {
  auto body = parse_body(n.attrs.s("prologue"));
  std::optional<RegionProgram> p = body ? compile_body(*body) : std::nullopt;
  if (!p) return {};
  // the prologue's shape: its output's for these inputs
  ir::Graph types;
  ops::Builder b(types);
  std::vector<ValueId> ins;
  std::vector<std::vector<int64_t>> in_shapes;
  for (ValueId v : n.inputs) {
    ins.push_back(types.add_input(g.type(v)));
    in_shapes.push_back(static_shape(g, v));
  }
  std::vector<int64_t> full = static_shape(types, b.emit(Op::elementwise_region, ins, ir::Attrs{{"body", n.attrs.s("prologue")}})[0]);
  std::vector<bool> reduced(full.size(), false);
  for (int64_t ax : n.attrs.ints("axes")) reduced[static_cast<size_t>(norm_axis(ax, full.size()))] = true;
  Red kind = red_of(n.attrs.s("kind"));
  DType pd = body->type(body->outputs()[0]).dtype;
  Dt od = to_dt(out_type(g, n, 0).dtype);

  // Every input's strides over the kept and the reduced dims, each group collapsed.
  ReduceGeometry geo;
  std::vector<int64_t> kshape, rshape;
  std::vector<std::vector<int64_t>> kst(in_shapes.size()), rst(in_shapes.size());
  for (size_t k = 0; k < in_shapes.size(); ++k) {
    std::vector<int64_t> st = broadcast_strides(full, in_shapes[k]);
    for (size_t d = 0; d < full.size(); ++d) (reduced[d] ? rst[k] : kst[k]).push_back(st[d]);
  }
  for (size_t d = 0; d < full.size(); ++d) (reduced[d] ? rshape : kshape).push_back(full[d]);
  std::vector<std::vector<int64_t>*> ks, rs;
  for (size_t k = 0; k < in_shapes.size(); ++k) {
    ks.push_back(&kst[k]);
    rs.push_back(&rst[k]);
  }
  collapse(kshape, ks, "mir.fused_reduce");
  collapse(rshape, rs, "mir.fused_reduce");
  if (kshape.size() > static_cast<size_t>(kRegionRank) || rshape.size() > static_cast<size_t>(kRegionRank)) return {};
  geo.krank = static_cast<int>(kshape.size());
  geo.rrank = static_cast<int>(rshape.size());
  for (size_t d = 0; d < kshape.size(); ++d) geo.kshape[d] = kshape[d];
  for (size_t d = 0; d < rshape.size(); ++d) geo.rshape[d] = rshape[d];
  size_t widest = 0;
  for (size_t k = 0; k < in_shapes.size(); ++k) {
    for (size_t d = 0; d < kshape.size(); ++d) geo.kst[k][d] = kst[k][d];
    for (size_t d = 0; d < rshape.size(); ++d) geo.rst[k][d] = rst[k][d];
    if (numel_of(in_shapes[k]) > numel_of(in_shapes[widest])) widest = k;
  }
  geo.K = numel_of(kshape);
  geo.R = numel_of(rshape);
  // lanes along the reduced elements where the largest input has them side by side; a whole
  // block per output where outputs are too few to fill the GPU with warps
  geo.rows = !rshape.empty() && rst[widest].back() == 1 && geo.R > 1;
  geo.group = geo.K < 2 * std::max(1, gpu_info().sm_count) ? 256 : 32;
  // under a warp's worth of elements per output, lanes or warps sharing an output mostly idle
  // (the SH gradient's sum over 3 channels of [1M,16,3]: 3.9 ms a warp per output on an H100)
  geo.serial = geo.R < 32 && geo.K >= 32;
  // Few outputs, each very long (a loss: a 1080p image to one number): one block per output
  // would walk millions of elements alone (5.2 ms on an H100). The prologue is written out
  // instead and the reduce kernel splits each output over many blocks (launch_reduce), where
  // its own rule says it would.
  ReduceSpaces sp = reduce_spaces(full, reduced, "mir.fused_reduce");
  const bool few_long = geo.rows && block_splits(sp.kept, sp.red) > 1;
  auto jit = few_long ? nullptr : jit_reduce_region(*p, kind, od, geo);
  if (jit) {
    RegionProgram prog = *p;
    return {[jit, prog, geo](const LaunchArgs& a) {
              const void* in[kRegionMaxInputs];
              for (size_t k = 0; k < a.in.size(); ++k) in[k] = a.in[k].data;
              launch_reduce_region_jit(*jit, prog, geo, in, a.out[0].data, a.stream);
            },
            0, geo.serial ? "NVRTC, a thread per output" : geo.rows ? (geo.group == 32 ? "NVRTC, a warp per output" : "NVRTC, a block per output") : "NVRTC, outputs across lanes"};
  }
  // Without NVRTC: the prologue as a region into scratch, then the reduce kernel over it.
  if (!set_geometry(*p, full, in_shapes)) return {};
  auto run = make_run(*p);
  Dt vd = to_dt(pd);
  size_t values = (dtype_bytes(pd, numel_of(full)) + 255) / 256 * 256;
  return {[run, kind, vd, od, sp, values](const LaunchArgs& a) {
            const void* in[kRegionMaxInputs];
            for (size_t k = 0; k < a.in.size(); ++k) in[k] = a.in[k].data;
            void* out[kRegionMaxOutputs] = {a.scratch};
            int64_t n = 1;
            for (int d = 0; d < sp.kept.rank; ++d) n *= sp.kept.shape[d];
            for (int d = 0; d < sp.red.rank; ++d) n *= sp.red.shape[d];
            (*run)(in, out, n, a.stream);
            launch_reduce(kind, vd, od, a.scratch, a.out[0].data, sp.kept, sp.ks, sp.red, sp.rs, static_cast<uint8_t*>(a.scratch) + values, a.stream);
          },
          values + reduce_scratch_bytes(kind, vd, sp.kept, sp.ks, sp.red, sp.rs),
          cat(run->jit ? "NVRTC" : "interpreted", " prologue, then the reduce kernel", few_long ? " (each output split over blocks)" : "")};
}

}  // namespace

void register_region(KernelTable& t) {
  t[static_cast<size_t>(Op::elementwise_region)] = {claims_region, make_region};
  t[static_cast<size_t>(Op::fused_dot)] = {claims_fused_dot, make_fused_dot};
  t[static_cast<size_t>(Op::fused_reduce)] = {claims_fused_reduce, make_fused_reduce};
}

}  // namespace rlx::backends::cuda
