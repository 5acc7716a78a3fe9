// Data movement on the cuda device: every op becomes one strided copy (or pad / gather /
// scatter kernel) over element sizes, so all whole-byte dtypes are covered, c64 and c128 included.
#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/megakernel.h"
#include <cstring>

#include "util/scalar.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

bool claims_bytes(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  for (const auto& t : in)
    if (t.dtype == DType::i4) return false;  // whole-byte elements of 1 to 16 bytes
  return true;
}

bool index_dtype(DType d) { return d == DType::i32 || d == DType::i64; }

bool claims_gather(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype != DType::i4 && index_dtype(in[1].dtype);
}

bool claims_scatter(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype != DType::i4 && !is_complex(in[0].dtype) && index_dtype(in[1].dtype);
}

// The pad value travels as 8 bytes: c128 is left out.
bool claims_pad(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  return claims_bytes(op, in, out, a) && in[0].dtype != DType::c128 && in[0].shape.size() <= static_cast<size_t>(kMaxRank);
}

int elem_bytes(DType d) { return static_cast<int>(dtype_size(d)); }

// One strided copy from precomputed geometry.
struct Copy {
  int bytes;
  int64_t src_base = 0, dst_base = 0;
  Space sp;
  Strides ss, ds;
};

Copy plan_copy(DType dt, std::vector<int64_t> shape, std::vector<int64_t> ss, std::vector<int64_t> ds, int64_t src_base, int64_t dst_base,
               const char* what) {
  collapse(shape, {&ss, &ds}, what);
  return {elem_bytes(dt), src_base, dst_base, make_space(shape), make_strides(ss), make_strides(ds)};
}

void run_copy(const Copy& c, const void* src, void* dst, cudaStream_t s) {
  launch_strided_copy(c.bytes, src, c.src_base, c.ss, dst, c.dst_base, c.ds, c.sp, s);
}

Kernel make_reshape(const ir::Node&, const ir::Graph&) {
  return {[](const LaunchArgs& a) {
    size_t bytes = dtype_bytes(a.out[0].dtype, a.out[0].numel);
    if (bytes && a.out[0].data != a.in[0].data)
      check(cudaMemcpyAsync(a.out[0].data, a.in[0].data, bytes, cudaMemcpyDeviceToDevice, a.stream), "copying a reshape");
  }};
}

Kernel make_transpose(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> out = static_shape(g, n.outputs[0]), cs = contiguous_strides(static_shape(g, n.inputs[0])), ss;
  for (int64_t p : n.attrs.ints("perm")) ss.push_back(cs[static_cast<size_t>(p)]);
  Copy c = plan_copy(out_type(g, n, 0).dtype, out, ss, contiguous_strides(out), 0, 0, "mir.transpose");
  return {[c](const LaunchArgs& a) { run_copy(c, a.in[0].data, a.out[0].data, a.stream); }};
}

Kernel make_broadcast(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> out = static_shape(g, n.outputs[0]);
  Copy c = plan_copy(out_type(g, n, 0).dtype, out, broadcast_strides(out, static_shape(g, n.inputs[0])), contiguous_strides(out), 0, 0,
                     "mir.broadcast");
  return {[c](const LaunchArgs& a) { run_copy(c, a.in[0].data, a.out[0].data, a.stream); }};
}

Kernel make_slice(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> out = static_shape(g, n.outputs[0]), cs = contiguous_strides(static_shape(g, n.inputs[0])), ss(out.size());
  const Shape& start = n.attrs.dims("start");
  const auto& step = n.attrs.ints("stride");
  int64_t base = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    ss[d] = cs[d] * step[d];
    base += start[d].value() * cs[d];
  }
  Copy c = plan_copy(out_type(g, n, 0).dtype, out, ss, contiguous_strides(out), base, 0, "mir.slice");
  return {[c](const LaunchArgs& a) { run_copy(c, a.in[0].data, a.out[0].data, a.stream); }};
}

Kernel make_concat(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> out = static_shape(g, n.outputs[0]), os = contiguous_strides(out);
  size_t axis = static_cast<size_t>(norm_axis(n.attrs.i("axis"), out.size()));
  std::vector<Copy> parts;
  int64_t at = 0;
  for (ir::ValueId v : n.inputs) {
    std::vector<int64_t> s = static_shape(g, v);
    parts.push_back(plan_copy(g.type(v).dtype, s, contiguous_strides(s), os, 0, at * os[axis], "mir.concat"));
    at += s[axis];
  }
  return {[parts](const LaunchArgs& a) {
    for (size_t k = 0; k < parts.size(); ++k) run_copy(parts[k], a.in[k].data, a.out[0].data, a.stream);
  }};
}

Kernel make_pad(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> out = static_shape(g, n.outputs[0]), in = static_shape(g, n.inputs[0]), cs = contiguous_strides(in);
  if (out.size() > static_cast<size_t>(kMaxRank)) return {};
  DType dt = out_type(g, n, 0).dtype;
  PadSpec p{};
  p.rank = static_cast<int>(out.size());
  const std::string& mode = n.attrs.s("mode");
  p.mode = mode == "constant" ? 0 : mode == "reflect" ? 1 : 2;
  const auto& lo = n.attrs.ints("lo");
  for (size_t d = 0; d < out.size(); ++d) {
    p.lo[d] = lo[d];
    p.interior[d] = n.attrs.has("interior") ? n.attrs.ints("interior")[d] : 0;
    p.in_shape[d] = in[d];
    p.in_stride[d] = cs[d];
  }
  // the constant in the element type, as the reference stores it
  uint8_t bytes[16] = {};  // room for any element type; 8 of them travel (c128 is not claimed)
  if (dt == DType::c64) store_c128(bytes, dt, 0, c128(n.attrs.f("value"), 0));
  else store_f64(bytes, dt, 0, n.attrs.f("value"));
  std::memcpy(&p.value, bytes, 8);
  Space sp = make_space(out);
  int eb = elem_bytes(dt);
  return {[=](const LaunchArgs& a) { launch_pad(eb, a.in[0].data, a.out[0].data, sp, p, a.stream); }};
}

// outer × n × inner around `axis` of `shape`
void split_at(const std::vector<int64_t>& shape, size_t axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  n = shape[axis];
}

Kernel make_gather(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  size_t axis = static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size()));
  int64_t outer, len, inner;
  split_at(x, axis, outer, len, inner);
  Dt idt = to_dt(in_type(g, n, 1).dtype);
  int eb = elem_bytes(in_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) {
    launch_gather(eb, a.in[0].data, a.in[1].data, idt, a.out[0].data, outer, len, a.in[1].numel, inner, a.error, a.node_index, a.stream);
  }};
}

Kernel make_scatter(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  size_t axis = static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size()));
  int64_t outer, len, inner;
  split_at(x, axis, outer, len, inner);
  const std::string& r = n.attrs.s("reduce");
  int reduce = r == "none" ? 0 : r == "add" ? 1 : r == "max" ? 2 : 3;
  Dt dt = to_dt(in_type(g, n, 0).dtype), idt = to_dt(in_type(g, n, 1).dtype);
  int64_t K = 1;
  for (int64_t d : static_shape(g, n.inputs[1])) K *= d;
  Kernel k{[=](const LaunchArgs& a) {
              size_t bytes = dtype_bytes(a.in[0].dtype, a.in[0].numel);
              if (bytes && a.out[0].data != a.in[0].data)
                check(cudaMemcpyAsync(a.out[0].data, a.in[0].data, bytes, cudaMemcpyDeviceToDevice, a.stream), "copying a scatter's input");
              launch_scatter(dt, reduce, a.out[0].data, a.in[1].data, idt, a.in[2].data, outer, len, a.in[1].numel, inner, a.error, a.node_index,
                             a.stream, static_cast<uint8_t*>(a.scratch));
            },
            static_cast<size_t>(std::max<int64_t>(K, 1))};
  // a KV cache's new rows, updated in place: one column of the update a thread
  if (K <= 4)
    k.mega = [=](const LaunchArgs& a, MegaOp& op) {
      if (a.out[0].data != a.in[0].data && a.in[0].numel) return false;  // the copy first: a kernel's job
      MegaScatter& m = op.scatter;
      op.kind = MegaKind::scatter;
      m.y = a.out[0].data;
      m.idx = a.in[1].data;
      m.upd = a.in[2].data;
      m.outer = outer;
      m.n = len;
      m.K = a.in[1].numel;
      m.inner = inner;
      m.dt = dt;
      m.idx_dt = idt;
      m.reduce = reduce;
      op.tiles = (outer * inner + kMegaThreads - 1) / kMegaThreads;
      return true;
    };
  return k;
}

}  // namespace

void register_movement(KernelTable& t) {
  t[static_cast<size_t>(Op::reshape)] = {claims_bytes, make_reshape};
  t[static_cast<size_t>(Op::transpose)] = {claims_bytes, make_transpose};
  t[static_cast<size_t>(Op::broadcast)] = {claims_bytes, make_broadcast};
  t[static_cast<size_t>(Op::slice)] = {claims_bytes, make_slice};
  t[static_cast<size_t>(Op::concat)] = {claims_bytes, make_concat};
  t[static_cast<size_t>(Op::pad)] = {claims_pad, make_pad};
  t[static_cast<size_t>(Op::gather)] = {claims_gather, make_gather};
  t[static_cast<size_t>(Op::scatter)] = {claims_scatter, make_scatter};
}

}  // namespace rlx::backends::cuda
