// mir.conv through oneDNN's convolutions (jit AVX-512 / AMX). Tensors stay plain [N, C, …] in
// RLX; oneDNN picks its own blocked layouts and every call reorders into and out of them
// (constant weights once, at compile time). As for matmuls, oneDNN runs single-threaded inside
// each of our pool threads, on a slice of the batch (or of the output channels when the batch
// is smaller than the pool). A weight gradient written as a convolution runs as oneDNN's
// backward-weights problem over views of the same bytes, its batch split and summed.
#include "backends/cpu/onednn_conv.h"

#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <unordered_map>

namespace rlx::backends::cpu {

namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;
using md = dnnl::memory::desc;

dnnl::engine& engine() { return onednn_engine(); }

dt to_dnnl(DType d) { return onednn_type(d); }

int64_t prod(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// Row-major strides of `shape` with the first two dims' strides given.
dims view_strides(const std::vector<int64_t>& shape, int64_t s0, int64_t s1) {
  dims st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 2;) {
    st[i] = acc;
    acc *= shape[i];
  }
  st[0] = s0;
  if (shape.size() > 1) st[1] = s1;
  return st;
}

md view(const std::vector<int64_t>& shape, const dims& strides, DType d) { return md(dims(shape.begin(), shape.end()), to_dnnl(d), strides); }
md any(const std::vector<int64_t>& shape, DType d) { return md(dims(shape.begin(), shape.end()), to_dnnl(d), dnnl::memory::format_tag::any); }

// One operand of a slice: its view of the user's bytes, the layout the kernel wants, and the
// reorder between them (absent when they are the same).
struct Operand {
  md user, kernel;
  dnnl::reorder move;
  bool reordered = false;
  void set(const md& u, const md& k, bool to_kernel) {
    user = u;
    kernel = k;
    reordered = !(u == k);
    if (reordered) move = to_kernel ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), u, engine(), k))
                                    : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), k, engine(), u));
  }
};

struct Slice {
  int64_t lo = 0, hi = 0;
  dnnl::primitive prim;
  Operand src, wei, dst;  // weight gradient: src = x, wei = the output gradient, dst = dW
  md scratch;
  std::shared_ptr<dnnl::memory> packed_w;
};

struct Plan {
  bool weight_grad = false;  // slices split the backward batch; their partial dW are summed
  int64_t x_step = 0, w_step = 0, y_step = 0;  // elements a slice's `lo` moves each operand by
  int64_t y_numel = 0;
  size_t elem = 4, y_elem = 4;  // bytes of an x/w element and of a y element
  std::vector<Slice> slices;
};

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // thread-safe runs: scratch is ours
  return attr;
}

dims minus_one(const std::vector<int64_t>& v) {
  dims d;
  for (int64_t x : v) d.push_back(x - 1);
  return d;
}

// Splits [0, len) into at most `parts` contiguous ranges, each a multiple of `align` but the last.
std::vector<std::pair<int64_t, int64_t>> split(int64_t len, int64_t parts, int64_t align) {
  int64_t chunk = (len + parts - 1) / parts;
  chunk = (chunk + align - 1) / align * align;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t lo = 0; lo < len; lo += chunk) out.emplace_back(lo, std::min(len, lo + chunk));
  return out;
}

// Forward convolution: slices over the batch, or over the output channels (groups == 1) when
// the batch is smaller than the pool. Batch slices are small enough (~512 KiB of input and
// output) that the blocked copies stay in cache between the reorders and the kernel.
std::shared_ptr<Plan> forward_plan(const ConvShape& s, const void* const_w) {
  auto p = std::make_shared<Plan>();
  int64_t N = s.x[0], C = s.x[1], O = s.w[0], T = num_threads();
  int64_t X = prod(s.x, 2), Y = prod(s.y, 2), K = prod(s.w, 2), Cg = s.w[1];
  p->elem = dtype_size(s.dtype);
  p->y_elem = dtype_size(s.out);
  bool by_channels = N < T && s.groups == 1 && O >= 32;
  int64_t item_bytes = (C * X + O * Y) * static_cast<int64_t>(p->elem);
  int64_t sub = std::clamp<int64_t>((512 << 10) / std::max<int64_t>(1, item_bytes), 1, (N + T - 1) / T);
  std::vector<std::pair<int64_t, int64_t>> ranges = by_channels ? split(O, T, 16) : split(N, (N + sub - 1) / sub, 1);
  p->x_step = by_channels ? 0 : C * X;
  p->w_step = by_channels ? Cg * K : 0;
  p->y_step = by_channels ? Y : O * Y;
  dims strides(s.strides.begin(), s.strides.end()), pl(s.pad_lo.begin(), s.pad_lo.end()), pr(s.pad_hi.begin(), s.pad_hi.end());
  dims dil = minus_one(s.dilation);
  std::vector<Slice> made;  // batch slices of one size share a primitive (and packed weights)
  for (auto [lo, hi] : ranges) {
    Slice sl;
    int64_t m = hi - lo;
    if (!by_channels) {
      auto same = std::find_if(made.begin(), made.end(), [&](const Slice& t) { return t.hi - t.lo == m; });
      if (same != made.end()) {
        sl = *same;
        sl.lo = lo;
        sl.hi = hi;
        p->slices.push_back(std::move(sl));
        continue;
      }
    }
    sl.lo = lo;
    sl.hi = hi;
    std::vector<int64_t> xs = s.x, ws = s.w, ys = s.y;
    if (by_channels) ws[0] = ys[1] = m;
    else xs[0] = ys[0] = m;
    // grouped weights are [G, O/G, C/G, k…] to oneDNN: the same bytes as [O, C/G, k…]
    std::vector<int64_t> wd = ws;
    if (s.groups > 1) {
      wd[0] = ws[0] / s.groups;
      wd.insert(wd.begin(), s.groups);
    }
    md x_user = view(xs, view_strides(xs, C * X, X), s.dtype);
    md w_user = view(wd, view_strides(wd, wd[1] * prod(wd, 2), prod(wd, 2)), s.dtype);
    if (s.groups > 1) {
      dims st = view_strides(wd, 0, 0);  // [G, Og, Cg, k…]
      st[2] = K;
      st[1] = Cg * K;
      st[0] = wd[1] * Cg * K;
      w_user = view(wd, st, s.dtype);
    }
    md y_user = view(ys, view_strides(ys, O * Y, Y), s.out);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(xs, s.dtype),
                                      any(wd, s.dtype), any(ys, s.out), strides, dil, pl, pr);
    dnnl::convolution_forward::primitive_desc pd(d, user_scratchpad(), engine());
    sl.prim = dnnl::convolution_forward(pd);
    sl.src.set(x_user, pd.src_desc(), true);
    sl.wei.set(w_user, pd.weights_desc(), true);
    sl.dst.set(y_user, pd.dst_desc(), false);
    sl.scratch = pd.scratchpad_desc();
    if (const_w) {
      const uint8_t* base = static_cast<const uint8_t*>(const_w) + lo * p->w_step * static_cast<int64_t>(p->elem);
      dnnl::memory src(w_user, engine(), const_cast<uint8_t*>(base));
      sl.packed_w = std::make_shared<dnnl::memory>(pd.weights_desc(), engine());
      dnnl::stream st(engine());
      dnnl::reorder(src, *sl.packed_w).execute(st, src, *sl.packed_w);
      st.wait();
    }
    made.push_back(sl);
    p->slices.push_back(std::move(sl));
  }
  return p;
}

// y [B, O, k…] = conv(x [B, G·n, …], w [O, n, P…]) with a kernel larger than its output is
// dW of a forward convolution whose batch is n: src = x viewed [n, G·B, …], diff_dst = w
// viewed [n, O, P…], diff_weights = y viewed [G, O/G, B, k…]. Needs groups == 1 or B == 1
// (otherwise the source's channels are not one stride).
std::shared_ptr<Plan> weight_grad_plan(const ConvShape& s) {
  int64_t B = s.x[0], G = s.groups, n = s.x[1] / G, O = s.w[0];
  if (G > 1 && B > 1) return nullptr;
  // The forward problem must give back exactly w's spatial extent (no slack in its windows).
  for (size_t i = 2; i < s.x.size(); ++i) {
    int64_t span = s.x[i] + s.pad_lo[i - 2] + s.pad_hi[i - 2] - (s.y[i] - 1) * s.strides[i - 2] - 1;
    if (span < 0 || span / s.dilation[i - 2] + 1 != s.w[i]) return nullptr;
  }
  auto p = std::make_shared<Plan>();
  p->weight_grad = true;
  p->elem = p->y_elem = dtype_size(s.dtype);
  int64_t X = prod(s.x, 2), P = prod(s.w, 2), Y = prod(s.y, 2);
  p->x_step = X;
  p->w_step = P;
  p->y_step = 0;
  p->y_numel = prod(s.y);
  // the forward problem's strides are our dilation and the other way round
  dims strides(s.dilation.begin(), s.dilation.end()), pl(s.pad_lo.begin(), s.pad_lo.end()), pr(s.pad_hi.begin(), s.pad_hi.end());
  dims dil = minus_one(s.strides);
  // Split the backward batch; each slice must keep enough work to pay for its reorders.
  // (bf16 partial sums would lose precision: one slice)
  int64_t T = s.dtype == DType::bf16 ? 1 : std::min<int64_t>(num_threads(), std::max<int64_t>(1, n / 4));
  for (auto [lo, hi] : split(n, T, 1)) {
    Slice sl;
    sl.lo = lo;
    sl.hi = hi;
    int64_t m = hi - lo;
    std::vector<int64_t> src = s.x, ddst = s.w, dw;
    src[0] = m;
    src[1] = G * B;
    ddst[0] = m;
    ddst[1] = O;
    dims src_st = view_strides(src, X, G > 1 ? n * X : s.x[1] * X);
    dims ddst_st = view_strides(ddst, P, n * P);
    dw = {G, O / G, B};
    dw.insert(dw.end(), s.y.begin() + 2, s.y.end());
    dims dw_st = view_strides(dw, 0, 0);  // [G, Og, B, k…] over y [B, O, k…]
    dw_st[0] = (O / G) * Y;
    dw_st[1] = Y;
    dw_st[2] = O * Y;
    std::vector<int64_t> wd = dw;  // oneDNN's weights dims: [G, Og, Cg, k…], or [O, C, k…]
    if (G == 1) {
      wd.erase(wd.begin());
      dw_st.erase(dw_st.begin());
    }
    md src_user = view(src, src_st, s.dtype), ddst_user = view(ddst, ddst_st, s.dtype), dw_user = view(wd, dw_st, s.dtype);
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, any(src, s.dtype),
                                       any(wd, s.dtype), any(ddst, s.dtype), strides, dil, pl, pr);
    dnnl::convolution_forward::primitive_desc hint(fd, engine());
    dnnl::convolution_backward_weights::desc bd(dnnl::algorithm::convolution_direct, any(src, s.dtype), any(wd, s.dtype),
                                                any(ddst, s.dtype), strides, dil, pl, pr);
    dnnl::convolution_backward_weights::primitive_desc pd(bd, user_scratchpad(), engine(), hint);
    sl.prim = dnnl::convolution_backward_weights(pd);
    sl.src.set(src_user, pd.src_desc(), true);
    sl.wei.set(ddst_user, pd.diff_dst_desc(), true);
    sl.dst.set(dw_user, pd.diff_weights_desc(), false);
    sl.scratch = pd.scratchpad_desc();
    p->slices.push_back(std::move(sl));
  }
  return p;
}

// A per-thread buffer of at least `bytes` (each role its own, reused across kernels).
uint8_t* thread_buffer(int role, size_t bytes) {
  thread_local std::vector<uint8_t> bufs[4];
  auto& b = bufs[role];
  if (b.size() < bytes) b.resize(bytes);
  return b.data();
}

// `w_ready`: this thread's weight buffer already holds this slice's reordered weights.
void run_slice(const Plan& p, const Slice& sl, const uint8_t* x, const uint8_t* w, uint8_t* y, bool w_ready = false) {
  omp_set_num_threads(1);  // oneDNN's OpenMP stays single-threaded inside our pool threads
  thread_local dnnl::stream stream(engine());
  int64_t e = static_cast<int64_t>(p.elem);
  dnnl::memory xu(sl.src.user, engine(), const_cast<uint8_t*>(x + sl.lo * p.x_step * e));
  dnnl::memory xk = xu;
  if (sl.src.reordered) {
    xk = dnnl::memory(sl.src.kernel, engine(), thread_buffer(0, sl.src.kernel.get_size()));
    sl.src.move.execute(stream, xu, xk);
  }
  dnnl::memory wk;
  if (sl.packed_w) {
    wk = *sl.packed_w;
  } else {
    dnnl::memory wu(sl.wei.user, engine(), const_cast<uint8_t*>(w + sl.lo * p.w_step * e));
    wk = wu;
    if (sl.wei.reordered) {
      wk = dnnl::memory(sl.wei.kernel, engine(), thread_buffer(1, sl.wei.kernel.get_size()));
      if (!w_ready) sl.wei.move.execute(stream, wu, wk);
    }
  }
  dnnl::memory yu(sl.dst.user, engine(), y + sl.lo * p.y_step * static_cast<int64_t>(p.y_elem));
  dnnl::memory yk = sl.dst.reordered ? dnnl::memory(sl.dst.kernel, engine(), thread_buffer(2, sl.dst.kernel.get_size())) : yu;
  dnnl::memory sm(sl.scratch, engine(), thread_buffer(3, sl.scratch.get_size()));
  if (p.weight_grad)
    sl.prim.execute(stream, {{DNNL_ARG_SRC, xk}, {DNNL_ARG_DIFF_DST, wk}, {DNNL_ARG_DIFF_WEIGHTS, yk}, {DNNL_ARG_SCRATCHPAD, sm}});
  else
    sl.prim.execute(stream, {{DNNL_ARG_SRC, xk}, {DNNL_ARG_WEIGHTS, wk}, {DNNL_ARG_DST, yk}, {DNNL_ARG_SCRATCHPAD, sm}});
  if (sl.dst.reordered) sl.dst.move.execute(stream, yk, yu);
  stream.wait();
}

}  // namespace

bool conv_is_weight_gradient(const ConvShape& s) { return prod(s.w, 2) > prod(s.y, 2); }

HostKernel make_onednn_conv(const ConvShape& s, const void* const_w) {
  size_t sp = s.x.size() - 2;
  bool int8 = s.dtype == DType::i8 && s.out == DType::i32;
  if (!onednn_available() || sp < 1 || sp > 3 || (s.dtype != DType::f32 && s.dtype != DType::bf16 && !int8)) return {};
  if (!int8 && s.out != s.dtype) return {};
  for (size_t i = 0; i < sp; ++i)
    if (s.pad_lo[i] < 0 || s.pad_hi[i] < 0 || s.strides[i] < 1 || s.dilation[i] < 1) return {};
  if (prod(s.x) == 0 || prod(s.w) == 0 || prod(s.y) == 0) return {};
  omp_set_num_threads(1);  // the weight reorders below must not start an OpenMP team either
  std::shared_ptr<Plan> plan;
  if (conv_is_weight_gradient(s) && !int8) {
    try {
      plan = weight_grad_plan(s);
    } catch (const dnnl::error&) {
      plan = nullptr;
    }
  }
  try {
    if (!plan) plan = forward_plan(s, const_w);
  } catch (const dnnl::error&) {
    return {};
  }
  return [plan](const KernelArgs& a) {
    const Plan& p = *plan;
    const uint8_t* x = static_cast<const uint8_t*>(a.in[0].data);
    const uint8_t* w = static_cast<const uint8_t*>(a.in[1].data);
    uint8_t* y = static_cast<uint8_t*>(a.out[0].data);
    if (!p.weight_grad) {
      rlx::parallel_for(static_cast<int64_t>(p.slices.size()), 1, [&](int64_t lo, int64_t hi) {
        // runtime weights are reordered once per thread when its batch slices share the layout
        const md* last = nullptr;
        for (int64_t i = lo; i < hi; ++i) {
          const Slice& sl = p.slices[static_cast<size_t>(i)];
          bool ready = last && p.w_step == 0 && *last == sl.wei.kernel;
          run_slice(p, sl, x, w, y, ready);
          if (sl.wei.reordered && !sl.packed_w) last = &sl.wei.kernel;
        }
      });
      return;
    }
    // Partial weight gradients of the batch slices: the first lands in y, the others beside.
    size_t extra = p.slices.size() - 1;
    std::vector<float> partial(extra * static_cast<size_t>(p.y_numel));
    rlx::parallel_for(static_cast<int64_t>(p.slices.size()), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        run_slice(p, p.slices[static_cast<size_t>(i)], x, w,
                  i == 0 ? y : reinterpret_cast<uint8_t*>(partial.data() + (i - 1) * p.y_numel));
    });
    float* yf = reinterpret_cast<float*>(y);
    for (size_t k = 0; k < extra; ++k) {
      const float* q = partial.data() + k * static_cast<size_t>(p.y_numel);
      for (int64_t i = 0; i < p.y_numel; ++i) yf[i] += q[i];
    }
  };
}

}  // namespace rlx::backends::cpu
