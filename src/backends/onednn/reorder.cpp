// Data movement oneDNN has primitives for: cast, transpose, slice and broadcast are reorders
// between strided views of the same bytes (a transpose reads with permuted strides, a slice from
// its start with its steps, a broadcast with zero strides); concat is the concat primitive. The first output dim is the rows.
#include "backends/onednn/broadcast.h"
#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> with_rows(int64_t n, const std::vector<int64_t>& dims) {
  std::vector<int64_t> d{n};
  d.insert(d.end(), dims.begin() + 1, dims.end());
  return d;
}

// out[i…] = in viewed with `strides` (elements) from `offset`, rows along out's first dim.
HostKernel view_reorder(const std::vector<int64_t>& out, DType from, DType to, const std::vector<int64_t>& strides, int64_t offset) {
  size_t ei = dtype_size(from), eo = dtype_size(to);
  std::vector<int64_t> o = out.empty() ? std::vector<int64_t>{1} : out;
  std::vector<int64_t> st = strides.empty() ? std::vector<int64_t>{1} : strides;
  int64_t row_out = numel(o) / std::max<int64_t>(o[0], 1);
  return split_kernel(o[0], row_out,
                      {{DNNL_ARG_SRC, 0, st[0] * static_cast<int64_t>(ei), offset * static_cast<int64_t>(ei)},
                       {DNNL_ARG_DST, output(0), row_out * static_cast<int64_t>(eo)}},
                      [=](int64_t n) {
                        dnnl::memory::desc src = strided(with_rows(n, o), from, st), dst = dense(with_rows(n, o), to);
                        dnnl::reorder::primitive_desc pd(cpu::onednn_engine(), src, cpu::onednn_engine(), dst, user_scratchpad());
                        return Prim{dnnl::reorder(pd), {src, dst}, pd.scratchpad_desc()};
                      });
}

// Conversions oneDNN performs as ops.def defines them: between float types (round to nearest
// even) and from integers to floats or wider integers. Float → integer truncates in RLX and
// rounds in oneDNN, and narrowing integers wraps in RLX and saturates in oneDNN: not claimed.
bool exact_cast(DType from, DType to) {
  auto is_float = [](DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16; };
  auto is_int = [](DType d) { return d == DType::i8 || d == DType::u8 || d == DType::boolean || d == DType::i32; };
  if (is_float(from) && is_float(to)) return true;
  if (is_int(from) && is_float(to)) return from != DType::i32 || to == DType::f32;  // i32 → bf16 would round twice
  return is_int(from) && to == DType::i32;
}

HostKernel cast_kernel(const ir::Type& in, const ir::Type& out) {
  int64_t n = numel(shape_values(in.shape));
  return view_reorder({n}, in.dtype, out.dtype, {1}, 0);
}

HostKernel transpose_kernel(const ir::Type& in, const ir::Type& out, const ir::Ints& perm) {
  std::vector<int64_t> xs = codegen::contiguous_strides(shape_values(in.shape)), st;
  for (int64_t p : perm) st.push_back(xs[static_cast<size_t>(p)]);
  return view_reorder(shape_values(out.shape), in.dtype, out.dtype, st, 0);
}

HostKernel slice_kernel(const ir::Type& in, const ir::Type& out, const ir::Attrs& attrs) {
  std::vector<int64_t> xs = codegen::contiguous_strides(shape_values(in.shape)), st;
  std::vector<int64_t> start = shape_values(attrs.dims("start"));
  const ir::Ints& step = attrs.ints("stride");
  int64_t offset = 0;
  for (size_t d = 0; d < xs.size(); ++d) {
    st.push_back(xs[d] * step[d]);
    offset += start[d] * xs[d];
  }
  return view_reorder(shape_values(out.shape), in.dtype, out.dtype, st, offset);
}

HostKernel concat_kernel(const std::vector<ir::Type>& in, const ir::Type& out, int64_t axis_attr) {
  std::vector<int64_t> os = shape_values(out.shape);
  size_t axis = static_cast<size_t>(codegen::normalize_axis(axis_attr, os.size()));
  int64_t rows = 1;
  for (size_t d = 0; d < axis; ++d) rows *= os[d];
  auto inner = [&](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end()); };
  DType dt = out.dtype;
  size_t e = dtype_size(dt);
  std::vector<std::vector<int64_t>> parts;
  std::vector<Arg> args;
  for (size_t i = 0; i < in.size(); ++i) {
    parts.push_back(inner(shape_values(in[i].shape)));
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), static_cast<int>(i), numel(parts.back()) * static_cast<int64_t>(e)});
  }
  std::vector<int64_t> out_inner = inner(os);
  args.push_back({DNNL_ARG_DST, output(0), numel(out_inner) * static_cast<int64_t>(e)});
  return split_kernel(rows, numel(out_inner), args, [=](int64_t n) {
    std::vector<dnnl::memory::desc> srcs;
    Prim p;
    for (const auto& part : parts) {
      std::vector<int64_t> d{n};
      d.insert(d.end(), part.begin(), part.end());
      srcs.push_back(dense(d, dt));
    }
    std::vector<int64_t> d{n};
    d.insert(d.end(), out_inner.begin(), out_inner.end());
    dnnl::memory::desc dst = dense(d, dt);
    dnnl::concat::primitive_desc pd(dst, 1, srcs, cpu::onednn_engine(), user_scratchpad());
    p.descs = srcs;
    p.descs.push_back(dst);
    p.prim = dnnl::concat(pd);
    p.scratch = pd.scratchpad_desc();
    return p;
  });
}

// out = x broadcast (numpy rules): x read through a zero-stride view with out's dims.
HostKernel broadcast_kernel(const ir::Type& in, const ir::Type& out) {
  BroadcastLayout lay(shape_values(out.shape), {shape_values(in.shape)});
  DType dt = in.dtype;
  size_t e = dtype_size(dt);
  return split_kernel(lay.rows(), lay.row_elems(), {{DNNL_ARG_SRC, 0, lay.operand_row_bytes(0, e)}, {DNNL_ARG_DST, output(0), lay.out_row_bytes(e)}},
                      [=](int64_t n) {
                        dnnl::memory::desc src = strided(lay.out_dims(n), dt, lay.operand_view_strides(0, n)), dst = dense(lay.out_dims(n), dt);
                        dnnl::reorder::primitive_desc pd(cpu::onednn_engine(), src, cpu::onednn_engine(), dst, user_scratchpad());
                        return Prim{dnnl::reorder(pd), {src, dst}, pd.scratchpad_desc()};
                      });
}

bool static_types(const std::vector<ir::Type>& ts) {
  for (const ir::Type& t : ts)
    if (!shape_is_static(t.shape)) return false;
  return true;
}

bool nonempty(const std::vector<ir::Type>& ts) {
  for (const ir::Type& t : ts)
    for (int64_t d : shape_values(t.shape))
      if (d == 0) return false;
  return true;
}

// Casts from or to a type oneDNN has none of (i64 ids and masks, f64) are conversions, not math:
// the cpu device's cast kernel runs them, on the same memory.
bool borrowed_cast(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out) {
  return op == Op::cast && (!dnnl_type(in[0].dtype) || !dnnl_type(out[0].dtype));
}

bool claims_move(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (borrowed_cast(op, in, out)) {
    const KernelEntry& cast = cpu::kernel_table()[static_cast<size_t>(Op::cast)];
    return cast.claims && cast.claims(op, in, out, attrs);
  }
  DType d = in[0].dtype;
  if (!dnnl_type(d) || !dnnl_type(out[0].dtype)) return false;
  for (const ir::Type& t : in)
    if (t.dtype != d) return false;
  if (op == Op::cast ? !exact_cast(d, out[0].dtype) : out[0].dtype != d) return false;
  if (op == Op::slice)
    for (int64_t s : attrs.ints("stride"))
      if (s <= 0) return false;
  if (!static_types(in) || !static_types(out)) return true;
  if (!nonempty(in) || !nonempty(out)) return false;
  return buildable(claim_key(op, in, out, attrs), [&] {
    if (op == Op::cast) cast_kernel(in[0], out[0]);
    else if (op == Op::transpose) transpose_kernel(in[0], out[0], attrs.ints("perm"));
    else if (op == Op::slice) slice_kernel(in[0], out[0], attrs);
    else if (op == Op::broadcast) broadcast_kernel(in[0], out[0]);
    else concat_kernel(in, out[0], attrs.i("axis"));
  });
}

HostKernel make_move(const ir::Node& n, const ir::Graph& g) {
  std::vector<ir::Type> in;
  for (ir::ValueId v : n.inputs) in.push_back(g.type(v));
  const ir::Type& out = g.type(n.outputs[0]);
  if (borrowed_cast(n.op, in, {out})) return cpu::kernel_table()[static_cast<size_t>(Op::cast)].make(n, g);
  switch (n.op) {
    case Op::cast: return cast_kernel(in[0], out);
    case Op::transpose: return transpose_kernel(in[0], out, n.attrs.ints("perm"));
    case Op::slice: return slice_kernel(in[0], out, n.attrs);
    case Op::broadcast: return broadcast_kernel(in[0], out);
    default: return concat_kernel(in, out, n.attrs.i("axis"));
  }
}

}  // namespace

void register_reorder(KernelTable& t) {
  for (Op op : {Op::cast, Op::transpose, Op::slice, Op::concat, Op::broadcast}) t[static_cast<size_t>(op)] = {claims_move, make_move};
}

}  // namespace rlx::backends::onednn
