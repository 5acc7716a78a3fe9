// The HIR ops, written directly from their definitions. They are the oracle that every
// decomposition in src/ops is checked against (compile with force-common vs prefer-native).
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/reference/kernels.h"
#include "util/half.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

void activation(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  for (int64_t i = 0; i < y.numel; ++i) {
    double v = rd(x, i), r = 0;
    switch (a.node.op) {
      case Op::gelu: r = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); break;
      case Op::gelu_tanh: r = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); break;
      case Op::silu: r = v / (1 + std::exp(-v)); break;
      case Op::relu:
        if (!is_float(x.dtype)) {
          wi(y, i, std::max<int64_t>(0, ri(x, i)));
          continue;
        }
        r = std::isnan(v) ? v : std::max(0.0, v);
        break;
      default: break;
    }
    wd(y, i, r);
  }
}

void softmax(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  bool log = a.node.op == Op::log_softmax;
  for_each_line(x.shape, norm_axis(a.node.attrs.i("axis"), x.shape.size()), [&](int64_t base, int64_t st, int64_t n) {
    double m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, rd(x, base + k * st));
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += std::exp(rd(x, base + k * st) - m);
    for (int64_t k = 0; k < n; ++k) {
      double v = rd(x, base + k * st) - m;
      wd(y, base + k * st, log ? v - std::log(s) : std::exp(v) / s);
    }
  });
}

double round_to(double v, DType d) {
  if (d == DType::f32) return static_cast<float>(v);
  if (d == DType::bf16) return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
  if (d == DType::f16) return f16_to_f32(f32_to_f16(static_cast<float>(v)));
  return v;
}

void norm(const KernelArgs& a) {
  const HostView& x = a.in[0];
  const HostView& y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis); d < x.shape.size(); ++d) inner *= x.shape[d];
  double eps = a.node.attrs.f("eps");
  bool rms = a.node.op == Op::rms_norm;
  for (int64_t row = 0; row * inner < x.numel; ++row) {
    int64_t base = row * inner;
    double mean = 0, sq = 0;
    if (!rms) {
      for (int64_t k = 0; k < inner; ++k) mean += rd(x, base + k);
      mean /= static_cast<double>(inner);
    }
    for (int64_t k = 0; k < inner; ++k) {
      double c = rd(x, base + k) - mean;
      sq += c * c;
    }
    double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (int64_t k = 0; k < inner; ++k) {
      double v = (rd(x, base + k) - mean) * inv;
      if (a.in.size() > 1) v *= rd(a.in[1], k);
      if (a.in.size() > 2) v += rd(a.in[2], k);
      // out: rounded to x's type first, as the norm then the cast would store it
      if (y.dtype != x.dtype) v = round_to(v, x.dtype);
      wd(y, base + k, v);
    }
  }
}

void linear(const KernelArgs& a) {
  const HostView &x = a.in[0], &w = a.in[1], &y = a.out[0];
  int64_t K = w.shape[1], N = w.shape[0], M = x.numel / std::max<int64_t>(K, 1);
  if (K == 0) M = y.numel / std::max<int64_t>(N, 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = a.in.size() > 2 ? rd(a.in[2], n) : 0.0;
      int64_t si = a.in.size() > 2 ? ri(a.in[2], n) : 0;
      for (int64_t k = 0; k < K; ++k) {
        if (is_float(x.dtype)) s += rd(x, m * K + k) * rd(w, n * K + k);
        else si = wrap_add(si, wrap_mul(ri(x, m * K + k), ri(w, n * K + k)));
      }
      if (is_float(x.dtype)) wd(y, m * N + n, s);
      else wi(y, m * N + n, si);
    }
}

void matmul(const KernelArgs& a) {
  HostView x = a.in[0], w = a.in[1];
  const HostView& y = a.out[0];
  if (x.shape.size() == 1) x.shape.insert(x.shape.begin(), 1);
  if (w.shape.size() == 1) w.shape.push_back(1);
  int64_t M = x.shape[x.shape.size() - 2], K = x.shape.back(), N = w.shape.back();
  std::vector<int64_t> xb(x.shape.begin(), x.shape.end() - 2), wb(w.shape.begin(), w.shape.end() - 2);
  std::vector<int64_t> ob = xb.size() >= wb.size() ? xb : wb;
  for (size_t i = 0; i < ob.size(); ++i) {
    size_t ix = i + xb.size() - ob.size(), iw = i + wb.size() - ob.size();
    int64_t dx = i + xb.size() >= ob.size() ? xb[ix] : 1, dw = i + wb.size() >= ob.size() ? wb[iw] : 1;
    ob[i] = std::max(dx, dw);
  }
  std::vector<int64_t> bx = broadcast_index(ob, xb), bw = broadcast_index(ob, wb);
  int64_t nb = static_cast<int64_t>(bx.size());
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        int64_t si = 0;
        for (int64_t k = 0; k < K; ++k) {
          int64_t p = bx[static_cast<size_t>(b)] * M * K + m * K + k, q = bw[static_cast<size_t>(b)] * K * N + k * N + n;
          if (is_float(x.dtype)) s += rd(x, p) * rd(w, q);
          else si = wrap_add(si, wrap_mul(ri(x, p), ri(w, q)));
        }
        int64_t o = (b * M + m) * N + n;
        if (is_float(x.dtype)) wd(y, o, s);
        else wi(y, o, si);
      }
}

void embedding(const KernelArgs& a) {
  const HostView &t = a.in[0], &ids = a.in[1], &y = a.out[0];
  int64_t D = t.shape[1], V = t.shape[0];
  for (int64_t k = 0; k < ids.numel; ++k) {
    int64_t id = ri(ids, k);
    if (id < 0 || id >= V) throw Error(ErrorKind::runtime, cat("hir.embedding", a.node.name.empty() ? "" : cat(" \"", a.node.name, "\""), ": index ", id, " is out of range [0, ", V, ")"));
    for (int64_t d = 0; d < D; ++d) copy_element(y, k * D + d, t, id * D + d);
  }
}

void attention(const KernelArgs& a) {
  const HostView &q = a.in[0], &k = a.in[1], &v = a.in[2], &y = a.out[0];
  bool bshd = a.node.attrs.s("layout") == "bshd";
  int64_t B = q.shape[0], Hq = q.shape[bshd ? 2 : 1], Sq = q.shape[bshd ? 1 : 2], D = q.shape[3];
  int64_t Hk = k.shape[bshd ? 2 : 1], Sk = k.shape[bshd ? 1 : 2], Dv = v.shape[3];
  // flat index of (batch, head, position, feature) in a tensor with H heads, S positions, F features
  auto at = [bshd](int64_t b, int64_t h, int64_t s, int64_t f, int64_t H, int64_t S, int64_t F) {
    return bshd ? ((b * S + s) * H + h) * F + f : ((b * H + h) * S + s) * F + f;
  };
  // compute=bf16: the matmul operands (q, k, v and the probabilities) are rounded to bf16
  DType cdt = a.node.attrs.has("compute") ? a.node.attrs.dtype("compute") : q.dtype;
  auto round = [cdt](double x) {
    if (cdt == DType::bf16) return static_cast<double>(bf16_to_f32(f32_to_bf16(static_cast<float>(x))));
    if (cdt == DType::f16) return static_cast<double>(f16_to_f32(f32_to_f16(static_cast<float>(x))));
    return x;
  };
  const std::string& mask = a.node.attrs.s("mask");
  double scale = a.node.attrs.f("scale");
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(D));
  double cap = a.node.attrs.f("softcap");
  int64_t window = a.node.attrs.i("window");
  std::vector<int64_t> bias_idx;
  if (a.in.size() > 3) bias_idx = broadcast_index({B, Hq, Sq, Sk}, a.in[3].shape);
  std::vector<double> s(static_cast<size_t>(Sk));
  std::vector<bool> ok(static_cast<size_t>(Sk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < Sq; ++i) {
        int64_t pos = i + Sk - Sq;
        double m = -INFINITY;
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += round(rd(q, at(b, h, i, d, Hq, Sq, D))) * round(rd(k, at(b, hk, j, d, Hk, Sk, D)));
          double sc = dot * scale;
          if (cap > 0) sc = cap * std::tanh(sc / cap);
          if (!bias_idx.empty()) sc += rd(a.in[3], bias_idx[static_cast<size_t>(((b * Hq + h) * Sq + i) * Sk + j)]);
          bool allowed = true;
          if (mask == "causal" || mask == "sliding_window") allowed = j <= pos;
          if (mask == "sliding_window") allowed = allowed && j > pos - window;
          ok[static_cast<size_t>(j)] = allowed;
          s[static_cast<size_t>(j)] = sc;
          if (allowed) m = std::max(m, sc);
        }
        double total = 0;
        for (int64_t j = 0; j < Sk; ++j) {
          double e = ok[static_cast<size_t>(j)] ? std::exp(s[static_cast<size_t>(j)] - m) : 0.0;
          s[static_cast<size_t>(j)] = e;
          total += e;
        }
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < Sk; ++j) acc += round(s[static_cast<size_t>(j)] / total) * round(rd(v, at(b, hk, j, d, Hk, Sk, Dv)));
          wd(y, at(b, h, i, d, Hq, Sq, Dv), y.dtype != q.dtype ? round_to(acc, q.dtype) : acc);  // out: q's type, then cast
        }
      }
    }
}

void rope(const KernelArgs& a) {
  const HostView &x = a.in[0], &p = a.in[1], &y = a.out[0];
  size_t r = x.shape.size();
  int64_t D = x.shape[r - 1], S = x.shape[r - 2];
  int64_t dims = a.node.attrs.i("dims") ? a.node.attrs.i("dims") : D;
  int64_t half = dims / 2;
  float theta = static_cast<float>(a.node.attrs.f("theta"));
  bool inter = a.node.attrs.b("interleaved");
  // A norm weight: x is rms_norm(x)·g first, stored in x's dtype as the separate op would.
  std::vector<double> normed;
  if (a.node.attrs.has("norm_eps")) {
    double eps = a.node.attrs.f("norm_eps");
    normed.resize(static_cast<size_t>(x.numel));
    for (int64_t base = 0; base < x.numel; base += D) {
      double sq = 0;
      for (int64_t k = 0; k < D; ++k) sq += rd(x, base + k) * rd(x, base + k);
      double inv = 1.0 / std::sqrt(sq / static_cast<double>(D) + eps);
      for (int64_t k = 0; k < D; ++k) {
        double v = rd(x, base + k) * inv * rd(a.in[2], k);
        if (x.dtype == DType::f32) v = static_cast<float>(v);
        else if (x.dtype == DType::bf16) v = bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
        else if (x.dtype == DType::f16) v = f16_to_f32(f32_to_f16(static_cast<float>(v)));
        normed[static_cast<size_t>(base + k)] = v;
      }
    }
  }
  auto xv = [&](int64_t i) { return normed.empty() ? rd(x, i) : normed[static_cast<size_t>(i)]; };
  // Half-precision x: cos and sin in x's dtype, each product and the sum rounded to it — the
  // definition's rounding points (its decomposition, and Hugging Face's rotary embedding, which
  // casts cos/sin to the activations' dtype). Where the two products nearly cancel, rounding
  // only at the end would differ from the definition by more than a half type's tolerance.
  auto in_x_type = [&](double v) {
    if (x.dtype == DType::f16) return static_cast<double>(f16_to_f32(f32_to_f16(static_cast<float>(v))));
    if (x.dtype == DType::bf16) return static_cast<double>(bf16_to_f32(f32_to_bf16(static_cast<float>(v))));
    return v;
  };
  // Appending to a cache (the last input): y is the cache with each rotated row s written at
  // row positions[s] — the cache's rows first, then x's rows over them.
  const bool append = a.node.attrs.has("append_axis");
  int64_t C = S;
  if (append) {
    const HostView& c = a.in.back();
    C = c.shape[r - 2];
    if (y.data != c.data) std::memcpy(y.data, c.data, static_cast<size_t>(c.numel) * dtype_bytes(c.dtype, 1));
  }
  auto at = [&](int64_t i, int64_t s) {
    if (!append) return i;
    int64_t row = i / D;
    int64_t to = ri(p, s);
    if (to < 0 || to >= C)
      throw Error(ErrorKind::runtime, cat(ir::op_keyword(a.node.op), a.node.name.empty() ? "" : cat(" \"", a.node.name, "\""), ": index ", to,
                                          " is out of range [0, ", C, ")"));
    return ((row / S) * C + to) * D + i % D;
  };
  std::vector<int64_t> coord;
  for (int64_t i = 0; i < x.numel; ++i) {
    unravel(i, x.shape, coord);
    int64_t f = coord[r - 1], s = coord[r - 2];
    if (f >= dims) {
      wd(y, at(i, s), xv(i));
      continue;
    }
    int64_t pi = p.shape.size() == 2 ? coord[0] * S + s : s;
    int64_t fi = inter ? f / 2 : f % half;
    // Frequencies and angles in f32, as the definition (and Hugging Face) computes them.
    float inv = 1.0f / std::pow(theta, static_cast<float>(2 * fi) / static_cast<float>(dims));
    float ang = static_cast<float>(ri(p, pi)) * inv;
    double c = in_x_type(std::cos(static_cast<double>(ang))), sn = in_x_type(std::sin(static_cast<double>(ang)));
    int64_t partner;
    double sign;
    if (inter) {
      partner = f % 2 == 0 ? i + 1 : i - 1;
      sign = f % 2 == 0 ? -1 : 1;
    } else {
      partner = f < half ? i + half : i - half;
      sign = f < half ? -1 : 1;
    }
    wd(y, at(i, s), in_x_type(in_x_type(xv(i) * c) + in_x_type(sign * xv(partner) * sn)));
  }
}

void cross_entropy(const KernelArgs& a) {
  const HostView &l = a.in[0], &lab = a.in[1], &y = a.out[0];
  int64_t N = l.shape[0], C = l.shape[1], inner = l.numel / std::max<int64_t>(N * C, 1);
  int64_t ignore = a.node.attrs.i("ignore_index");
  const std::string& red = a.node.attrs.s("reduction");
  double total = 0;
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t label = ri(lab, n * inner + i);
      double loss = 0;
      if (label != ignore) {
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < C; ++c) m = std::max(m, rd(l, (n * C + c) * inner + i));
        for (int64_t c = 0; c < C; ++c) s += std::exp(rd(l, (n * C + c) * inner + i) - m);
        double picked = label >= 0 && label < C ? rd(l, (n * C + label) * inner + i) : NAN;
        loss = std::log(s) + m - picked;
        ++count;
      }
      if (red == "none") wd(y, n * inner + i, loss);
      total += loss;
    }
  if (red == "sum") wd(y, 0, total);
  if (red == "mean") wd(y, 0, total / static_cast<double>(count));
}

void conv2d(const KernelArgs& a) {
  const HostView &x = a.in[0], &w = a.in[1], &y = a.out[0];
  const auto& st = a.node.attrs.ints("strides");
  const auto& pads = a.node.attrs.ints("pads");
  const auto& dil = a.node.attrs.ints("dilations");
  int64_t g = a.node.attrs.i("groups");
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t O = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = y.shape[2], OW = y.shape[3], Og = O / g;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = a.in.size() > 2 ? rd(a.in[2], o) : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * st[0] - pads[0] + kh * dil[0], iw = ow * st[1] - pads[1] + kw * dil[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += rd(x, ((n * C + (o / Og) * Cg + c) * H + ih) * W + iw) * rd(w, ((o * Cg + c) * KH + kh) * KW + kw);
              }
          wd(y, ((n * O + o) * OH + oh) * OW + ow, s);
        }
}

void pool(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  size_t sp = x.shape.size() - 2;
  const auto& kernel = a.node.attrs.ints("kernel");
  std::vector<int64_t> strides = a.node.attrs.has("strides") ? a.node.attrs.ints("strides") : std::vector<int64_t>(sp, 1);
  std::vector<int64_t> pads = a.node.attrs.has("pads") ? a.node.attrs.ints("pads") : std::vector<int64_t>(2 * sp, 0);
  bool is_max = a.node.op == Op::max_pool;
  bool include_pad = !is_max && a.node.attrs.b("count_include_pad");
  std::vector<int64_t> xs = strides_of(x.shape), oc, kc;
  int64_t K = 1;
  for (int64_t k : kernel) K *= k;
  for (int64_t o = 0; o < y.numel; ++o) {
    unravel(o, y.shape, oc);
    double acc = is_max ? -INFINITY : 0;
    int64_t acci = std::numeric_limits<int64_t>::min(), count = 0;
    for (int64_t k = 0; k < K; ++k) {
      unravel(k, kernel, kc);
      int64_t off = oc[0] * xs[0] + oc[1] * xs[1];
      bool inside = true;
      for (size_t s = 0; s < sp; ++s) {
        int64_t p = oc[2 + s] * strides[s] - pads[s] + kc[s];
        inside = inside && p >= 0 && p < x.shape[2 + s];
        off += p * xs[2 + s];
      }
      if (!inside) continue;
      ++count;
      if (!is_max) acc += rd(x, off);
      else if (is_float(x.dtype)) acc = std::isnan(acc) ? acc : std::isnan(rd(x, off)) ? rd(x, off) : std::max(acc, rd(x, off));
      else acci = std::max(acci, ri(x, off));
    }
    if (is_max && !is_float(x.dtype)) wi(y, o, acci);
    else if (is_max) wd(y, o, acc);
    else wd(y, o, acc / static_cast<double>(include_pad ? K : count));
  }
}

}  // namespace

void register_nn(KernelTable& t) {
  for (Op op : {Op::gelu, Op::gelu_tanh, Op::silu, Op::relu}) t[static_cast<size_t>(op)] = activation;
  t[static_cast<size_t>(Op::softmax)] = softmax;
  t[static_cast<size_t>(Op::log_softmax)] = softmax;
  t[static_cast<size_t>(Op::layer_norm)] = norm;
  t[static_cast<size_t>(Op::rms_norm)] = norm;
  t[static_cast<size_t>(Op::linear)] = linear;
  t[static_cast<size_t>(Op::matmul)] = matmul;
  t[static_cast<size_t>(Op::embedding)] = embedding;
  t[static_cast<size_t>(Op::attention)] = attention;
  t[static_cast<size_t>(Op::rope)] = rope;
  t[static_cast<size_t>(Op::cross_entropy)] = cross_entropy;
  t[static_cast<size_t>(Op::conv2d)] = conv2d;
  t[static_cast<size_t>(Op::max_pool)] = pool;
  t[static_cast<size_t>(Op::avg_pool)] = pool;
}

}  // namespace rlx::backends::reference
