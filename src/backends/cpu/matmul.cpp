// dot_general: operands are packed into [batch, M, K] and [batch, K, N] (any dim order in,
// one copy each), then multiplied row by row; conv through oneDNN (onednn_conv.cpp), direct loops
// where it cannot.
#include <cblas.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <optional>

#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_conv.h"
#include "backends/cpu/onednn_matmul.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Packs x so that the listed dim groups become three row-major blocks [g0][g1][g2].
template <class T>
std::vector<T> pack(const T* x, const std::vector<int64_t>& shape, const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> st = contiguous_strides(shape), dims, strides;
  for (const auto& g : groups)
    for (int64_t d : g) {
      dims.push_back(shape[static_cast<size_t>(d)]);
      strides.push_back(st[static_cast<size_t>(d)]);
    }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<T> out(static_cast<size_t>(n));
  std::vector<int64_t> c(dims.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = x[off];
    for (size_t d = dims.size(); d-- > 0;) {  // odometer
      off += strides[d];
      if (++c[d] < dims[d]) break;
      off -= c[d] * strides[d];
      c[d] = 0;
    }
  }
  return out;
}

template <class T>
void gemm_batched(const T* A, const T* B, T* C, int64_t batch, int64_t M, int64_t K, int64_t N) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  parallel_items(batch * M, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, N * K)), [&](int64_t bm) {
      int64_t b = bm / M, m = bm % M;
      std::vector<Acc> row(static_cast<size_t>(N), Acc(0));
      const T* a = A + (b * M + m) * K;
      const T* bb = B + b * K * N;
      for (int64_t k = 0; k < K; ++k) {
        Acc av = static_cast<Acc>(a[k]);
        const T* brow = bb + k * N;
        for (int64_t n = 0; n < N; ++n) row[static_cast<size_t>(n)] += av * static_cast<Acc>(brow[n]);
      }
      T* c = C + (b * M + m) * N;
      for (int64_t n = 0; n < N; ++n) c[n] = static_cast<T>(row[static_cast<size_t>(n)]);
    });
}

// Memory order of one operand: [batch…, a…, b…] with both groups in attribute/ascending order?
bool is_layout(const std::vector<int64_t>& batch, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> order = batch;
  order.insert(order.end(), a.begin(), a.end());
  order.insert(order.end(), b.begin(), b.end());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i)) return false;
  return true;
}

void blas_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0f, A, static_cast<int>(ta ? M : K), B, static_cast<int>(tb ? K : N), 0.0f, C, static_cast<int>(N));
}
void blas_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0, A, static_cast<int>(ta ? M : K), B, static_cast<int>(tb ? K : N), 0.0, C, static_cast<int>(N));
}

// f32/f64 through BLAS: operands already laid out as [batch][M][K] or [batch][K][M] (and
// [batch][K][N] or [batch][N][K]) go straight in with transpose flags; others are packed.
template <class T>
void dot_blas(const KernelArgs& a, const std::vector<int64_t>& lb, const std::vector<int64_t>& lf, const std::vector<int64_t>& lc,
              const std::vector<int64_t>& rb, const std::vector<int64_t>& rf, const std::vector<int64_t>& rc, int64_t Bn, int64_t M,
              int64_t K, int64_t N) {
  // OpenBLAS runs single-threaded inside our OpenMP threads: two thread pools spinning on two
  // cores starve each other (measured: 20x slower training steps).
  static const bool threads_set = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)threads_set;
  const T* x = a.in[0].as<T>();
  const T* w = a.in[1].as<T>();
  std::vector<T> xp, wp;
  bool ta = false, tb = false;
  if (is_layout(lb, lf, lc)) ta = false;
  else if (is_layout(lb, lc, lf)) ta = true;
  else {
    xp = pack(x, a.in[0].shape, {lb, lf, lc});
    x = xp.data();
  }
  if (is_layout(rb, rc, rf)) tb = false;
  else if (is_layout(rb, rf, rc)) tb = true;
  else {
    wp = pack(w, a.in[1].shape, {rb, rc, rf});
    w = wp.data();
  }
  T* y = a.out[0].as<T>();
  int nt = num_threads();
  double flops = 2.0 * static_cast<double>(Bn) * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (nt <= 1 || flops < 2e5) {
    for (int64_t b = 0; b < Bn; ++b) blas_gemm(ta, tb, M, N, K, x + b * M * K, w + b * K * N, y + b * M * N);
    return;
  }
  if (Bn >= nt) {
    parallel_items(Bn, 1, [&](int64_t b) { blas_gemm(ta, tb, M, N, K, x + b * M * K, w + b * K * N, y + b * M * N); });
    return;
  }
  // Few large products: split the rows of C (or its columns when M is small) across threads.
  for (int64_t b = 0; b < Bn; ++b) {
    const T* xb = x + b * M * K;
    const T* wb = w + b * K * N;
    T* yb = y + b * M * N;
    bool by_rows = M >= N || M >= 16 * nt;
    int64_t len = by_rows ? M : N;
    rlx::parallel_for(len, 16, [&](int64_t lo, int64_t hi) {
      {
        if (by_rows) {
          // rows lo..hi of C need rows lo..hi of op(A): offset by row (no trans) or column (trans)
          const T* a0 = ta ? xb + lo : xb + lo * K;
          if (!ta) {
            blas_gemm(false, tb, hi - lo, N, K, a0, wb, yb + lo * N);
          } else {
            // op(A) = Aᵀ with A [K, M]: a column block of A is strided; use the full-lda call
            if constexpr (std::is_same_v<T, float>)
              cblas_sgemm(CblasRowMajor, CblasTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(hi - lo), static_cast<int>(N),
                          static_cast<int>(K), 1.0f, a0, static_cast<int>(M), wb, static_cast<int>(tb ? K : N), 0.0f, yb + lo * N,
                          static_cast<int>(N));
            else
              cblas_dgemm(CblasRowMajor, CblasTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(hi - lo), static_cast<int>(N),
                          static_cast<int>(K), 1.0, a0, static_cast<int>(M), wb, static_cast<int>(tb ? K : N), 0.0, yb + lo * N,
                          static_cast<int>(N));
          }
        } else {
          // columns lo..hi of C: columns of op(B), and C's row stride stays N
          const T* b0 = tb ? wb + lo * K : wb + lo;
          if constexpr (std::is_same_v<T, float>)
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M),
                        static_cast<int>(hi - lo), static_cast<int>(K), 1.0f, xb, static_cast<int>(ta ? M : K), b0,
                        static_cast<int>(tb ? K : N), 0.0f, yb + lo, static_cast<int>(N));
          else
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M),
                        static_cast<int>(hi - lo), static_cast<int>(K), 1.0, xb, static_cast<int>(ta ? M : K), b0,
                        static_cast<int>(tb ? K : N), 0.0, yb + lo, static_cast<int>(N));
        }
      }
    });
  }
}

// c64/c128 through cblas_cgemm/zgemm on packed [batch][M][K] · [batch][K][N] operands, products in
// parallel over the batch.
template <class T>
void dot_complex(const KernelArgs& a, const std::vector<int64_t>& lb, const std::vector<int64_t>& lf, const std::vector<int64_t>& lc,
                 const std::vector<int64_t>& rb, const std::vector<int64_t>& rf, const std::vector<int64_t>& rc, int64_t Bn, int64_t M,
                 int64_t K, int64_t N) {
  std::vector<T> A = pack(a.in[0].as<T>(), a.in[0].shape, {lb, lf, lc});
  std::vector<T> B = pack(a.in[1].as<T>(), a.in[1].shape, {rb, rc, rf});
  T* y = a.out[0].as<T>();
  const T one(1), zero(0);
  parallel_items(Bn, 1, [&](int64_t b) {
    const T* x = A.data() + b * M * K;
    const T* w = B.data() + b * K * N;
    auto mi = static_cast<int>(M), ni = static_cast<int>(N), ki = static_cast<int>(K);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, ki, &one, x, ki, w, ni, &zero, y + b * M * N, ni);
    else
      cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, ki, &one, x, ki, w, ni, &zero, y + b * M * N, ni);
  });
}

}  // namespace

// The oneDNN path when the operands' dims form [batch…][M…][K…] / [batch…][K…][M…] (and the
// same for B) in memory, so transposes are strides; nullopt otherwise.
std::optional<MatmulShape> onednn_shape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws, const ir::Attrs& attrs) {
  ir::Intss batch = attrs.intss("batch"), contract = attrs.intss("contract");
  auto norm = [](std::vector<int64_t> v, size_t r) {
    for (auto& d : v) d = normalize_axis(d, r);
    return v;
  };
  std::vector<int64_t> lb = norm(batch[0], xs.size()), rb = norm(batch[1], ws.size());
  std::vector<int64_t> lc = norm(contract[0], xs.size()), rc = norm(contract[1], ws.size());
  std::vector<int64_t> lf, rf;
  for (size_t d = 0; d < xs.size(); ++d)
    if (!has(lb, static_cast<int64_t>(d)) && !has(lc, static_cast<int64_t>(d))) lf.push_back(static_cast<int64_t>(d));
  for (size_t d = 0; d < ws.size(); ++d)
    if (!has(rb, static_cast<int64_t>(d)) && !has(rc, static_cast<int64_t>(d))) rf.push_back(static_cast<int64_t>(d));
  MatmulShape s;
  if (is_layout(lb, lf, lc)) s.a_km = false;
  else if (is_layout(lb, lc, lf)) s.a_km = true;
  else return std::nullopt;
  if (is_layout(rb, rc, rf)) s.b_nk = false;
  else if (is_layout(rb, rf, rc)) s.b_nk = true;
  else return std::nullopt;
  auto prod = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
    int64_t p = 1;
    for (int64_t d : dims) p *= shape[static_cast<size_t>(d)];
    return p;
  };
  s.batch = prod(xs, lb);
  s.M = prod(xs, lf);
  s.K = prod(xs, lc);
  s.N = prod(ws, rf);
  if (s.batch == 0 || s.M == 0 || s.N == 0 || s.K == 0) return std::nullopt;
  return s;
}

HostKernel onednn_dot_kernel(const ir::Node& node, const ir::Graph& lir) {
  DType ad = lir.type(node.inputs[0]).dtype, cd = lir.type(node.outputs[0]).dtype;
  if (!onednn_available() || (ad != DType::f32 && ad != DType::bf16 && !(ad == DType::i8 && cd == DType::i32))) return {};
  DType compute = node.attrs.has("compute") ? node.attrs.dtype("compute") : ad;
  auto shape = onednn_shape(shape_values(lir.type(node.inputs[0]).shape), shape_values(lir.type(node.inputs[1]).shape), node.attrs);
  if (!shape) return {};
  MatmulShape s = *shape;
  s.a_dtype = ad;
  s.b_dtype = ad;
  s.c_dtype = cd;
  s.compute = compute;
  // f32 has BLAS to fall back on where oneDNN has only its reference kernel for this shape
  if (ad == DType::f32 && compute == DType::f32 && !onednn_matmul_buildable(s)) return {};
  // Weights that are constants of the program are packed once, now.
  const void* const_b = passes::constant_bytes(lir, node.inputs[1]);
  return make_onednn_matmul(s, const_b);
}

namespace {

HostKernel make_dot_general(const ir::Node& node, const ir::Graph& lir) {
  DType in = lir.type(node.inputs[0]).dtype;
  if (!is_complex(in) && (flags().RLX_CPU_GEMM != "blas" || in == DType::bf16 || in == DType::i8 || node.attrs.has("compute")))
    if (HostKernel k = onednn_dot_kernel(node, lir)) return k;
  if (in == DType::i8)
    throw Error(ErrorKind::unsupported, cat("cpu: oneDNN has no int8 matmul for mir.dot_general ", shape_str(lir.type(node.inputs[0]).shape), " · ",
                                            shape_str(lir.type(node.inputs[1]).shape)));
  ir::Intss batch = node.attrs.intss("batch"), contract = node.attrs.intss("contract");
  return [=](const KernelArgs& a) {
    const auto &xs = a.in[0].shape, &ws = a.in[1].shape;
    auto norm = [](std::vector<int64_t> v, size_t r) {
      for (auto& d : v) d = normalize_axis(d, r);
      return v;
    };
    std::vector<int64_t> lb = norm(batch[0], xs.size()), rb = norm(batch[1], ws.size());
    std::vector<int64_t> lc = norm(contract[0], xs.size()), rc = norm(contract[1], ws.size());
    std::vector<int64_t> lf, rf;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!has(lb, d) && !has(lc, d)) lf.push_back(static_cast<int64_t>(d));
    for (size_t d = 0; d < ws.size(); ++d)
      if (!has(rb, d) && !has(rc, d)) rf.push_back(static_cast<int64_t>(d));
    auto prod = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
      int64_t p = 1;
      for (int64_t d : dims) p *= shape[static_cast<size_t>(d)];
      return p;
    };
    int64_t Bn = prod(xs, lb), M = prod(xs, lf), K = prod(xs, lc), N = prod(ws, rf);
    if (M == 0 || N == 0 || Bn == 0) return;
    if (K == 0) {
      std::memset(a.out[0].data, 0, dtype_bytes(a.out[0].dtype, a.out[0].numel));
      return;
    }
    if (a.in[0].dtype == DType::f32) return dot_blas<float>(a, lb, lf, lc, rb, rf, rc, Bn, M, K, N);
    if (a.in[0].dtype == DType::f64) return dot_blas<double>(a, lb, lf, lc, rb, rf, rc, Bn, M, K, N);
    if (a.in[0].dtype == DType::c64) return dot_complex<std::complex<float>>(a, lb, lf, lc, rb, rf, rc, Bn, M, K, N);
    if (a.in[0].dtype == DType::c128) return dot_complex<std::complex<double>>(a, lb, lf, lc, rb, rf, rc, Bn, M, K, N);
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> A = pack(a.in[0].as<T>(), xs, {lb, lf, lc});
      std::vector<T> B = pack(a.in[1].as<T>(), ws, {rb, rc, rf});
      gemm_batched(A.data(), B.data(), a.out[0].as<T>(), Bn, M, K, N);
    });
  };
}

}  // namespace

HostKernel onednn_conv_kernel(const ir::Node& node, const ir::Graph& lir) {
  ConvShape s;
  s.dtype = lir.type(node.inputs[0]).dtype;
  s.out = lir.type(node.outputs[0]).dtype;
  if (s.dtype != DType::f32 && s.dtype != DType::bf16 && s.dtype != DType::i8) return {};
  s.x = shape_values(lir.type(node.inputs[0]).shape);
  s.w = shape_values(lir.type(node.inputs[1]).shape);
  s.y = shape_values(lir.type(node.outputs[0]).shape);
  s.strides = node.attrs.ints("strides");
  s.dilation = node.attrs.ints("dilation");
  for (const auto& p : node.attrs.intss("padding")) {
    s.pad_lo.push_back(p[0]);
    s.pad_hi.push_back(p[1]);
  }
  s.groups = node.attrs.i("groups");
  const void* const_w = passes::constant_bytes(lir, node.inputs[1]);
  return make_onednn_conv(s, const_w);
}

namespace {

HostKernel make_conv(const ir::Node& node, const ir::Graph& lir) {
  DType in = lir.type(node.inputs[0]).dtype;
  if (flags().RLX_CPU_GEMM != "blas" || in == DType::bf16 || in == DType::i8)
    if (HostKernel k = onednn_conv_kernel(node, lir)) return k;
  if (in == DType::i8)
    throw Error(ErrorKind::unsupported, cat("cpu: oneDNN has no int8 convolution for mir.conv ", shape_str(lir.type(node.inputs[0]).shape), " * ",
                                            shape_str(lir.type(node.inputs[1]).shape)));
  if (lir.type(node.inputs[0]).dtype == DType::bf16)
    throw Error(ErrorKind::unsupported, cat("cpu: oneDNN has no bf16 convolution for mir.conv ", shape_str(lir.type(node.inputs[0]).shape), " * ",
                                            shape_str(lir.type(node.inputs[1]).shape), "; cast it to f32"));
  ir::Ints strides = node.attrs.ints("strides"), dilation = node.attrs.ints("dilation");
  ir::Intss padding = node.attrs.intss("padding");
  int64_t groups = node.attrs.i("groups");
  return [=](const KernelArgs& a) {
    const auto &xs = a.in[0].shape, &ws = a.in[1].shape, &ys = a.out[0].shape;
    size_t sp = xs.size() - 2;
    int64_t N = xs[0], C = xs[1], O = ws[0], Cg = C / groups, Og = O / groups;
    int64_t K = 1, P = 1, X = 1;
    for (size_t s = 0; s < sp; ++s) {
      K *= ws[2 + s];
      P *= ys[2 + s];
      X *= xs[2 + s];
    }
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      const T* w = a.in[1].as<T>();
      T* y = a.out[0].as<T>();
      parallel_items(N * O, 1, [&](int64_t no) {
          int64_t n = no / O, o = no % O;
          int64_t g = o / Og;
          std::vector<int64_t> pc(sp), kc(sp);
          for (int64_t p = 0; p < P; ++p) {
            int64_t rem = p;
            for (size_t s = sp; s-- > 0;) {
              pc[s] = rem % ys[2 + s];
              rem /= ys[2 + s];
            }
            T acc = 0;
            for (int64_t c = 0; c < Cg; ++c) {
              const T* xc = x + (n * C + g * Cg + c) * X;
              const T* wc = w + (o * Cg + c) * K;
              for (int64_t k = 0; k < K; ++k) {
                int64_t kr = k, xoff = 0, xstride = 1;
                bool inside = true;
                for (size_t s = sp; s-- > 0;) {
                  kc[s] = kr % ws[2 + s];
                  kr /= ws[2 + s];
                  int64_t pos = pc[s] * strides[s] - padding[s][0] + kc[s] * dilation[s];
                  inside = inside && pos >= 0 && pos < xs[2 + s];
                  xoff += pos * xstride;
                  xstride *= xs[2 + s];
                }
                if (inside) acc += xc[xoff] * wc[k];
              }
            }
            y[(n * O + o) * P + p] = acc;
          }
        });
    });
  };
}

bool claims_dot(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (attrs.has("compute")) {
    // f32 × f32 rounded to bf16 inside: the oneDNN path (AMX), where the layout allows it
    DType c = attrs.dtype("compute");
    if (c == in[0].dtype) return in[0].dtype == out[0].dtype && is_one_of(in[0].dtype, {DType::f32, DType::f64});
    if (c != DType::bf16 || in[0].dtype != DType::f32 || out[0].dtype != DType::f32 || !onednn_available()) return false;
    if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return true;
    return onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), attrs).has_value();
  }
  // i8 × i8 summed in i32: oneDNN's int8 matmul (AVX512-VNNI, AMX-INT8 where the CPU has it)
  if (in[0].dtype == DType::i8 && in[1].dtype == DType::i8 && out[0].dtype == DType::i32) {
    if (!onednn_available()) return false;
    if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return true;
    return onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), attrs).has_value();
  }
  // bf16 × bf16 → f32 (or bf16) runs on AMX through oneDNN
  if (in[0].dtype == DType::bf16) {
    if (!onednn_available() || (out[0].dtype != DType::f32 && out[0].dtype != DType::bf16)) return false;
    if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return true;  // decided per shape; layouts don't depend on it
    return onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), attrs).has_value();
  }
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::i32, DType::i64, DType::c64, DType::c128}) && out[0].dtype == in[0].dtype;
}

bool claims_conv(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (in[0].dtype == DType::i8 && out[0].dtype == DType::i32) {
    // int8 products summed in i32: oneDNN's VNNI kernels (1 to 3 spatial dims, no crops)
    if (!onednn_available() || in[0].shape.size() < 3 || in[0].shape.size() > 5) return false;
    for (const auto& p : attrs.intss("padding"))
      if (p[0] < 0 || p[1] < 0) return false;
    return true;
  }
  if (out[0].dtype != in[0].dtype) return false;
  if (in[0].dtype == DType::bf16) {
    // oneDNN only (AMX / avx512_bf16), which takes 1 to 3 spatial dims and no crops
    if (!onednn_available() || in[0].shape.size() < 3 || in[0].shape.size() > 5) return false;
    for (const auto& p : attrs.intss("padding"))
      if (p[0] < 0 || p[1] < 0) return false;
    return true;
  }
  return is_one_of(in[0].dtype, {DType::f32, DType::f64});
}

}  // namespace

void register_matmul(KernelTable& t) {
  t[static_cast<size_t>(Op::dot_general)] = {claims_dot, make_dot_general};
  t[static_cast<size_t>(Op::conv)] = {claims_conv, make_conv};
}

}  // namespace rlx::backends::cpu
