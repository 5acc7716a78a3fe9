#include "common/op_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <array>
#include <numeric>

#include "ops/builder.h"
#include "ops/rules.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/half.h"
#include "util/quant_blocks.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::testing {

namespace {

using ir::Attrs;
using ir::Op;
using ir::Type;

// cache_mask: an additive attention mask over the last axis, 0 on its first `range` positions
// and −inf after them (a KV cache filled that far). causal_bias: a causal mask as a bias over
// [.., Sq, Sk], 0 where key ≤ row + `range` and −1e30 after (how the llama graph masks its cache).
// spread: distinct indices in [0, range), not in order ((7i + 3) mod range; range prime to 7)
// int8: the full range of an int8 value, [−128, 127] (what quantized tensors hold).
// multiplier: fixed-point multipliers in [2^30, 2^31); shift: in [range − 8, range].
// spd: per matrix M Mᵀ/n + I (symmetric positive definite); well_conditioned: normal with n added
// to the diagonal (triangles, solves and LU far from singular).
enum class Fill { spd, well_conditioned, normal, positive, unit, distinct, spread, boolean, index, label, small_int, int8, multiplier, shift, packed, cache_mask, causal_bias };

struct Operand {
  Type type;
  Fill fill = Fill::normal;
  int64_t range = 0;  // index/label: values in [0, range); packed: the quant::BlockType
  bool constant = false;  // a constant of the graph instead of an input (devices may repack it)
  std::vector<double> fixed = {};  // these values instead of a fill (sparse index arrays)
};

struct Spec {
  std::vector<Operand> in;
  Attrs attrs;
  std::string note;
};

const std::vector<DType> kAll = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64,
                                 DType::i8,  DType::u8,  DType::i16, DType::boolean, DType::c64, DType::c128};
const std::vector<DType> kFloats = {DType::f32, DType::f64, DType::f16, DType::bf16};

Shape S(std::vector<int64_t> d) { return shape_of(d); }

// Valid blocks of a packed type: random quants with small finite scales (random f16 bits
// would often be inf or NaN).
Tensor packed_input(const Operand& o, std::mt19937& rng) {
  std::vector<int64_t> shape = shape_values(o.type.shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  auto t = static_cast<quant::BlockType>(o.range);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto put_half = [&](int64_t at, float v) {
    uint16_t h = t == quant::BlockType::bf16 ? f32_to_bf16(v) : f32_to_f16(v);
    std::memcpy(&bytes[static_cast<size_t>(at)], &h, 2);
  };
  // Byte offsets of the f16 scales in a block, and the largest |quant × sub-scale| of the type:
  // scales are drawn so that decoded values stay below ~1 (dot products then keep f32 accuracy).
  std::vector<int> halves;
  float range = 1;
  switch (t) {
    case quant::BlockType::q4_0: halves = {0}, range = 8; break;
    case quant::BlockType::q5_0: halves = {0}, range = 16; break;
    case quant::BlockType::q8_0: halves = {0}, range = 128; break;
    case quant::BlockType::q4_1: halves = {0, 2}, range = 16; break;
    case quant::BlockType::q5_1: halves = {0, 2}, range = 32; break;
    case quant::BlockType::q4_k: halves = {0, 2}, range = 1000; break;
    case quant::BlockType::q5_k: halves = {0, 2}, range = 2000; break;
    case quant::BlockType::q2_k: halves = {80, 82}, range = 45; break;
    case quant::BlockType::q3_k: halves = {108}, range = 128; break;
    case quant::BlockType::q6_k: halves = {208}, range = 4096; break;
    case quant::BlockType::iq4_nl: halves = {0}, range = 128; break;
    case quant::BlockType::iq4_xs: halves = {0}, range = 4096; break;  // 127 × a 6-bit signed scale
    default: break;
  }
  std::uniform_real_distribution<float> scale(0.2f / range, 1.0f / range);
  int64_t bb = quant::block_bytes(t);
  for (int64_t b = 0; b + bb <= n; b += bb) {
    if (t == quant::BlockType::f16 || t == quant::BlockType::bf16) put_half(b, normal(rng));
    if (t == quant::BlockType::q8_k) {
      float d = scale(rng) / 128;
      std::memcpy(&bytes[static_cast<size_t>(b)], &d, 4);
    }
    for (int off : halves) put_half(b + off, scale(rng));
  }
  return Tensor::from_bytes(DType::u8, shape, bytes.data(), bytes.size());
}

Tensor make_input(const Operand& o, std::mt19937& rng, bool transposed_view) {
  if (o.fill == Fill::packed) return packed_input(o, rng);
  if (!o.fixed.empty()) return Tensor::from_f64(o.type.dtype, shape_values(o.type.shape), o.fixed);
  std::vector<int64_t> shape = shape_values(o.type.shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uni(0.1, 2.0);
  DType d = o.type.dtype;
  bool is_int = is_integer(d);
  for (size_t i = 0; i < v.size(); ++i) {
    switch (o.fill) {
      case Fill::normal:
        v[i] = is_int ? std::round(normal(rng) * 20) : normal(rng);
        if (d == DType::u8) v[i] = std::fabs(v[i]);
        break;
      case Fill::positive: v[i] = is_int ? 1 + static_cast<int>(rng() % 20) : uni(rng); break;
      case Fill::unit: v[i] = std::uniform_real_distribution<double>(-0.9, 0.9)(rng); break;
      case Fill::boolean: v[i] = rng() % 2; break;
      case Fill::index: v[i] = static_cast<double>(rng() % static_cast<uint32_t>(o.range)); break;
      case Fill::label: v[i] = static_cast<double>(rng() % static_cast<uint32_t>(o.range)); break;
      case Fill::small_int: v[i] = static_cast<double>(static_cast<int>(rng() % 7) - 3); break;
      case Fill::int8: v[i] = static_cast<double>(static_cast<int>(rng() % 256) - 128); break;
      case Fill::multiplier: v[i] = static_cast<double>((int64_t{1} << 30) + static_cast<int64_t>(rng() % (1u << 30))); break;
      case Fill::shift: v[i] = static_cast<double>(o.range - static_cast<int64_t>(rng() % 9)); break;
      case Fill::distinct: v[i] = static_cast<double>(i); break;
      case Fill::spread: v[i] = static_cast<double>((7 * static_cast<int64_t>(i) + 3) % o.range); break;
      case Fill::cache_mask: v[i] = static_cast<int64_t>(i) % shape.back() < o.range ? 0.0 : -INFINITY; break;
      case Fill::causal_bias: {
        int64_t cols = shape.back(), rows = shape[shape.size() - 2];
        int64_t key = static_cast<int64_t>(i) % cols, row = static_cast<int64_t>(i) / cols % rows;
        v[i] = key <= row + o.range ? 0.0 : -1e30;
        break;
      }
      case Fill::packed: break;
      case Fill::spd:
      case Fill::well_conditioned: v[i] = normal(rng); break;
    }
  }
  if (o.fill == Fill::spd || o.fill == Fill::well_conditioned) {
    int64_t m = shape.back();
    for (int64_t at = 0; at + m * m <= n; at += m * m) {
      double* a = v.data() + at;
      if (o.fill == Fill::well_conditioned) {
        for (int64_t i = 0; i < m; ++i) a[i * m + i] += static_cast<double>(m);
        continue;
      }
      std::vector<double> g(a, a + m * m);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) {
          double dot = 0;
          for (int64_t k = 0; k < m; ++k) dot += g[static_cast<size_t>(i * m + k)] * g[static_cast<size_t>(j * m + k)];
          a[i * m + j] = dot / static_cast<double>(m) + (i == j ? 1.0 : 0.0);
        }
    }
  }
  if (o.fill == Fill::distinct) {
    std::shuffle(v.begin(), v.end(), rng);
    if (is_float(d) && d != DType::bf16) for (auto& x : v) x = x * 0.37 - 3;
  }
  // complex values get an imaginary part of their own (from_f64 gives 0)
  auto build = [&](const std::vector<int64_t>& s, const std::vector<double>& vals) {
    Tensor t = Tensor::from_f64(d, s, vals);
    if (is_complex(d))
      for (int64_t i = 0; i < t.numel(); ++i) store_c128(t.data(), d, i, {vals[static_cast<size_t>(i)], 0.5 * normal(rng)});
    return t;
  };
  if (!transposed_view || shape.size() < 2 || d == DType::i4) return build(shape, v);
  // Same values, held as the transpose of a transposed buffer: a non-contiguous view.
  std::vector<int64_t> tshape = shape;
  std::swap(tshape[0], tshape[1]);
  std::vector<double> tv(v.size());
  int64_t inner = n / (shape[0] * shape[1]);
  for (int64_t a = 0; a < shape[0]; ++a)
    for (int64_t b = 0; b < shape[1]; ++b)
      for (int64_t k = 0; k < inner; ++k) tv[static_cast<size_t>((b * shape[0] + a) * inner + k)] = v[static_cast<size_t>((a * shape[1] + b) * inner + k)];
  std::vector<int64_t> perm(shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  return build(tshape, tv).transpose(perm);
}

bool valid(Op op, const Spec& s) {
  std::vector<Type> in;
  for (const auto& o : s.in) in.push_back(o.type);
  Attrs a = s.attrs;
  try {
    ir::normalize_attrs(op, a);
    ops::infer_types(op, in, a);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// ---- per-family specs

// splat_rasterize of fixed operands (means2d, conics, colors, opacities, depths, radii,
// background) on the reference device: the forward outputs a gradient case must carry.
void rasterize_on_reference(DType d, int64_t n, int64_t channels, int64_t width, int64_t height, const std::vector<std::vector<double>>& v,
                            std::vector<double> (&out)[2]) {
  auto g = std::make_shared<ir::Graph>();
  ops::Builder b(*g);
  std::vector<std::vector<int64_t>> shapes = {{n, 2}, {n, 3}, {n, channels}, {n}, {n}, {n}, {channels}};
  std::vector<ir::ValueId> in;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < shapes.size(); ++i) {
    DType t = i == 5 ? DType::i32 : d;
    Shape shape;
    for (int64_t x : shapes[i]) shape.push_back(Dim(x));
    in.push_back(g->add_input({t, shape}, cat("in", i)));
    tensors.push_back(Tensor::from_f64(t, shapes[i], v[i]));
  }
  g->set_outputs(b.emit(Op::splat_rasterize, in, Attrs{{"width", width}, {"height", height}}));
  std::vector<Tensor> y = Session("reference").compile(Graph(g)).run(tensors);
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < y[static_cast<size_t>(k)].numel(); ++i) out[k].push_back(y[static_cast<size_t>(k)].at_f64(i));
}

// Gaussian-splatting scenes: Gaussians in front of a camera (one behind it and one off to the
// side, both culled) for the projection; 2D footprints over a 40×24 image (two tile rows, the
// second partial) for the rasterizer, with one zero radius and, in f32, two equal depths.
std::vector<Spec> splat_specs(Op op, std::mt19937& rng) {
  std::vector<Spec> out;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto uni = [&](double lo, double hi) { return lo + (hi - lo) * unit(rng); };
  auto fixed = [](DType d, std::vector<int64_t> shape, std::vector<double> v) { return Operand{{d, S(std::move(shape))}, Fill::normal, 0, false, std::move(v)}; };
  const int64_t width = 40, height = 24, n = 12;
  if (op == Op::splat_project || op == Op::splat_project_grad) {
    for (DType d : {DType::f32, DType::f64})
      for (int64_t k : {int64_t{1}, int64_t{4}, int64_t{16}}) {
        if (d == DType::f32 && k == 4) continue;
        std::vector<double> means, quats, scales, sh;
        for (int64_t g = 0; g < n; ++g) {
          double z = g == 0 ? -1.0 : uni(2.5, 5.0), x = g == 1 ? 60.0 : uni(-1.2, 1.2);
          means.insert(means.end(), {x, uni(-0.8, 0.8), z});
          for (int j = 0; j < 4; ++j) quats.push_back(normal(rng));
          for (int j = 0; j < 3; ++j) scales.push_back(uni(0.05, 0.4));
        }
        for (int64_t i = 0; i < n * k * 3; ++i) sh.push_back(0.5 * normal(rng));
        // a camera turned a little about y and x, then moved
        double ay = 0.2, ax = -0.1;
        double ry[3][3] = {{std::cos(ay), 0, std::sin(ay)}, {0, 1, 0}, {-std::sin(ay), 0, std::cos(ay)}};
        double rx[3][3] = {{1, 0, 0}, {0, std::cos(ax), -std::sin(ax)}, {0, std::sin(ax), std::cos(ax)}};
        std::vector<double> view(16, 0.0);
        double t[3] = {0.1, -0.2, 0.3};
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j)
            for (int l = 0; l < 3; ++l) view[static_cast<size_t>(i * 4 + j)] += rx[i][l] * ry[l][j];
          view[static_cast<size_t>(i * 4 + 3)] = t[i];
        }
        view[15] = 1;
        Attrs a{{"fx", 36.0}, {"fy", 30.0}, {"cx", 20.5}, {"cy", 11.0}, {"width", width}, {"height", height}};
        std::vector<Operand> in = {fixed(d, {n, 3}, means), fixed(d, {n, 4}, quats), fixed(d, {n, 3}, scales), fixed(d, {n, k, 3}, sh),
                                   fixed(d, {4, 4}, view)};
        if (op == Op::splat_project_grad)  // the cotangents of means2d, conics, colors and depths
          for (std::vector<int64_t> shape : {std::vector<int64_t>{n, 2}, {n, 3}, {n, 3}, {n}}) in.push_back({{d, S(std::move(shape))}});
        out.push_back({in, a, cat("SH degree ", k == 1 ? 0 : k == 4 ? 1 : 3)});
      }
    return out;
  }
  for (DType d : {DType::f32, DType::f64})
    for (int64_t channels : {int64_t{3}, int64_t{1}})
      for (bool with_background : {false, true}) {
        if (channels == 1 && with_background) continue;
        std::vector<double> m, conics, colors, opacities, depths, radii, background;
        for (int64_t g = 0; g < n; ++g) {
          m.insert(m.end(), {uni(-3, width + 3), uni(-3, height + 3)});
          double sx = uni(1.5, 6), sy = uni(1.5, 6), th = uni(0, 3.14159);
          double c = std::cos(th), s = std::sin(th);
          double a = c * c * sx * sx + s * s * sy * sy, b = c * s * (sx * sx - sy * sy), cc = s * s * sx * sx + c * c * sy * sy;
          double det = a * cc - b * b;
          conics.insert(conics.end(), {cc / det, -b / det, a / det});
          double mid = 0.5 * (a + cc);
          radii.push_back(g == 3 ? 0 : std::ceil(3 * std::sqrt(mid + std::sqrt(std::max(0.1, mid * mid - det)))));
          for (int64_t k = 0; k < channels; ++k) colors.push_back(uni(0, 1));
          opacities.push_back(uni(0.3, 0.95));
          depths.push_back(d == DType::f32 && g == 7 ? depths[5] : uni(1, 10));
        }
        for (int64_t k = 0; k < channels; ++k) background.push_back(uni(0, 1));
        std::vector<Operand> in = {fixed(d, {n, 2}, m),        fixed(d, {n, 3}, conics),   fixed(d, {n, channels}, colors),
                                   fixed(d, {n}, opacities),   fixed(d, {n}, depths),      fixed(DType::i32, {n}, radii)};
        if (op == Op::splat_rasterize_grad || with_background) in.push_back(fixed(d, {channels}, background));
        if (op == Op::splat_rasterize_grad) {
          if (with_background) continue;
          in.push_back({{d, S({height, width, channels})}});
          in.push_back({{d, S({height, width})}});
          // the forward's image and alpha, as the op requires them: the reference's rasterizer
          std::vector<double> forward[2];
          rasterize_on_reference(d, n, channels, width, height, {m, conics, colors, opacities, depths, radii, background}, forward);
          in.push_back(fixed(d, {height, width, channels}, forward[0]));
          in.push_back(fixed(d, {height, width}, forward[1]));
        }
        out.push_back({in, Attrs{{"width", width}, {"height", height}}, with_background ? "with a background" : ""});
      }
  return out;
}

std::vector<Spec> elementwise_specs(Op op) {
  std::vector<Spec> out;
  bool unary = ir::op_info(op).min_inputs == 1;
  Fill fill = Fill::normal;
  if (op == Op::log || op == Op::sqrt || op == Op::rsqrt || op == Op::reciprocal) fill = Fill::positive;
  if (op == Op::log1p) fill = Fill::positive;
  if (op == Op::logical_not) fill = Fill::boolean;
  for (DType d : kAll) {
    Fill f = d == DType::boolean ? Fill::boolean : fill;
    if (d == DType::f32) {  // large enough to take the threaded paths
      if (unary) out.push_back({{{{d, S({301, 150})}, f}}, {}, "threaded"});
      else out.push_back({{{{d, S({301, 150})}, f}, {{d, S({150})}, f == Fill::positive ? f : Fill::positive}}, {}, "threaded broadcast"});
    }
    if (unary) {
      out.push_back({{{{d, S({7, 13})}, f}}, {}, ""});
      out.push_back({{{{d, S({3, 1, 5})}, f}}, {}, ""});
    } else {
      Fill rhs = f;
      if (op == Op::div || op == Op::rem) rhs = d == DType::boolean ? f : Fill::positive;
      if (op == Op::pow) {
        f = is_integer(d) ? Fill::small_int : Fill::positive;
        rhs = is_integer(d) ? Fill::small_int : Fill::normal;
        if (is_integer(d)) rhs = Fill::positive;
      }
      out.push_back({{{{d, S({5, 7})}, f}, {{d, S({5, 7})}, rhs}}, {}, "same shape"});
      out.push_back({{{{d, S({4, 3, 5})}, f}, {{d, S({5})}, rhs}}, {}, "broadcast rhs"});
      out.push_back({{{{d, S({3, 1})}, f}, {{d, S({1, 6})}, rhs}}, {}, "broadcast both"});
      out.push_back({{{{d, S({})}, f}, {{d, S({2, 9})}, rhs}}, {}, "scalar lhs"});
    }
  }
  return out;
}

// Dense linear algebra in f32 and f64, single matrices and batches. Gradients are checked on the
// f64 cases, so shapes whose gradient is undefined (lu and qr of a wide matrix) are f32 only.
std::vector<Spec> linalg_specs(Op op) {
  std::vector<Spec> out;
  auto add = [&](std::vector<Operand> in, Attrs a = {}, std::string note = "") { out.push_back({std::move(in), std::move(a), std::move(note)}); };
  for (DType d : {DType::f32, DType::f64}) {
    auto m = [&](std::vector<int64_t> s, Fill f = Fill::normal) { return Operand{{d, S(std::move(s))}, f}; };
    switch (op) {
      case Op::cholesky:
        add({m({4, 4}, Fill::spd)});
        add({m({2, 3, 5, 5}, Fill::spd)}, {}, "batch");
        break;
      case Op::triangular_solve:
        for (bool lower : {true, false})
          for (bool left : {true, false})
            for (bool tr : {false, true})
              for (bool unit : {false, true}) {
                Attrs a{{"lower", lower}, {"left", left}, {"transpose", tr}, {"unit_diagonal", unit}};
                add({m({4, 4}, Fill::well_conditioned), left ? m({4, 3}) : m({3, 4})}, a);
              }
        add({m({2, 5, 5}, Fill::well_conditioned), m({2, 5, 2})}, {}, "batch");
        break;
      case Op::lu:
        add({m({4, 4}, Fill::well_conditioned)});
        add({m({3, 5, 5})}, {}, "batch");
        if (d == DType::f32) {
          add({m({6, 4})}, {}, "tall");
          add({m({3, 5})}, {}, "wide");
        }
        break;
      case Op::solve:
        add({m({4, 4}, Fill::well_conditioned), m({4, 3})});
        add({m({3, 5, 5}, Fill::well_conditioned), m({3, 5, 1})}, {}, "batch, one column");
        break;
      case Op::inv:
      case Op::matrix_exp:
      case Op::det:
      case Op::slogdet:
        add({m({4, 4}, op == Op::inv ? Fill::well_conditioned : Fill::normal)});
        add({m({2, 3, 3})}, {}, "batch");
        if (op == Op::matrix_exp) add({m({6, 6}, Fill::well_conditioned)}, {}, "large norm (squarings)");
        break;
      case Op::qr:
        add({m({5, 3})}, {}, "tall");
        add({m({4, 4})});
        add({m({2, 6, 4})}, {}, "batch");
        if (d == DType::f32) add({m({3, 5})}, {}, "wide");
        break;
      case Op::eigh:
        add({m({4, 4})});
        add({m({2, 5, 5})}, {}, "batch");
        break;
      case Op::svd:
        add({m({5, 3})}, {}, "tall");
        add({m({3, 5})}, {}, "wide");
        add({m({4, 4})});
        add({m({2, 5, 4})}, {}, "batch");
        break;
      case Op::lstsq:
        add({m({6, 4}), m({6, 2})});
        add({m({2, 5, 3}), m({2, 5, 1})}, {}, "batch");
        break;
      default: break;
    }
  }
  return out;
}

// A CSR matrix [m, n] with three entries per row — the diagonal (when square: 4 plus a little,
// far from singular), its right neighbour and the column half a row away — as operands (row_ptr,
// col_idx, values); symmetric: the tridiagonal 4 / −1 + a little (positive definite, and symmetric in
// its values too).
std::vector<Operand> csr_operands(DType d, int64_t m, int64_t n, bool symmetric) {
  std::vector<double> ptr = {0}, cols, vals;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<int64_t> c = symmetric ? std::vector<int64_t>{i - 1, i, i + 1} : std::vector<int64_t>{i % n, (i + 1) % n, (i + n / 2) % n};
    std::sort(c.begin(), c.end());
    for (int64_t col : c) {
      if (col < 0 || col >= n) continue;
      cols.push_back(static_cast<double>(col));
      double off = 0.3 * std::sin(static_cast<double>(7 * std::min(i, col) + 3 * std::max(i, col)));
      vals.push_back(col == i ? 4 + off : symmetric ? -1 + off : off + 0.5);
    }
    ptr.push_back(static_cast<double>(cols.size()));
  }
  int64_t nnz = static_cast<int64_t>(cols.size());
  return {Operand{{DType::i64, S({m + 1})}, Fill::normal, 0, false, ptr}, Operand{{DType::i64, S({nnz})}, Fill::normal, 0, false, cols},
          Operand{{d, S({nnz})}, Fill::normal, 0, false, vals}};
}

std::vector<Spec> sparse_specs(Op op) {
  std::vector<Spec> out;
  for (DType d : {DType::f32, DType::f64}) {
    auto with = [&](std::vector<Operand> a, Operand x) {
      a.push_back(std::move(x));
      return a;
    };
    switch (op) {
      case Op::csr_matmul:
        out.push_back({with(csr_operands(d, 5, 7, false), Operand{{d, S({7, 3})}}), Attrs{{"n", int64_t{7}}}, ""});
        out.push_back({with(csr_operands(d, 5, 7, false), Operand{{d, S({5, 2})}}), Attrs{{"n", int64_t{7}}, {"transpose", true}}, ""});
        out.push_back({with(csr_operands(d, 6, 6, true), Operand{{d, S({6, 1})}}), Attrs{{"n", int64_t{6}}}, "symmetric, one column"});
        break;
      case Op::csr_solve:
        for (bool t : {false, true}) {
          out.push_back({with(csr_operands(d, 6, 6, false), Operand{{d, S({6, 2})}}), Attrs{{"method", std::string("lu")}, {"transpose", t}}, ""});
          out.push_back({with(csr_operands(d, 6, 6, false), Operand{{d, S({6, 1})}}), Attrs{{"transpose", t}}, "auto, not symmetric"});
        }
        for (const char* m : {"auto", "cholesky", "lu"})
          out.push_back({with(csr_operands(d, 7, 7, true), Operand{{d, S({7, 2})}}), Attrs{{"method", std::string(m)}}, "symmetric positive definite"});
        break;
      case Op::csr_row_ids:
        if (d == DType::f32) {
          std::vector<Operand> a = csr_operands(d, 5, 7, false);
          out.push_back({{a[0]}, Attrs{{"nnz", a[1].type.shape[0].value()}}, ""});
        }
        break;
      default: break;
    }
  }
  return out;
}

// Complex parts and the Fourier transforms, in both precisions: one and several axes, axes out
// of order, odd and prime lengths (FFTW's non-power-of-two codelets), every norm.
std::vector<Spec> complex_specs(Op op) {
  std::vector<Spec> out;
  auto add = [&](std::vector<Operand> in, Attrs a = {}, std::string note = "") { out.push_back({std::move(in), std::move(a), std::move(note)}); };
  auto axes = [](std::vector<int64_t> v) { return Attrs{{"axes", ir::Ints(std::move(v))}}; };
  for (DType r : {DType::f32, DType::f64}) {
    DType c = r == DType::f32 ? DType::c64 : DType::c128;
    auto t = [&](DType d, std::vector<int64_t> s) { return Operand{{d, S(std::move(s))}}; };
    switch (op) {
      case Op::complex: add({t(r, {4, 6}), t(r, {4, 6})}); break;
      case Op::real:
      case Op::imag:
      case Op::conj:
      case Op::angle:
        add({t(c, {5, 7})});
        add({t(c, {})}, {}, "scalar");
        break;
      case Op::fft:
        for (bool inv : {false, true}) {
          Attrs a = axes({0});
          a.set("inverse", inv);
          add({t(c, {16})}, a);
          a = axes({1});
          a.set("inverse", inv);
          add({t(c, {3, 13})}, a, "prime length");
          a = axes({2, 0});
          a.set("inverse", inv);
          for (const char* nm : {"backward", "ortho", "forward"}) {
            a.set("norm", std::string(nm));
            add({t(c, {4, 3, 6})}, a, "two axes out of order");
          }
        }
        add({t(c, {6, 5})}, axes({0}), "a leading axis");
        break;
      case Op::rfft:
        add({t(r, {16})}, axes({0}));
        add({t(r, {3, 9})}, axes({1}), "odd length");
        add({t(r, {6, 8})}, axes({0, 1}), "two axes");
        for (const char* nm : {"backward", "ortho", "forward"}) {
          Attrs a = axes({2, 0});
          a.set("norm", std::string(nm));
          add({t(r, {4, 3, 5})}, a, "halved axis 0");
        }
        break;
      case Op::irfft: {
        auto with_n = [](Attrs a, int64_t n) {
          a.set("n", n);
          return a;
        };
        add({t(c, {9})}, with_n(axes({0}), 16));
        add({t(c, {3, 5})}, with_n(axes({1}), 9), "odd length");
        add({t(c, {6, 5})}, with_n(axes({0, 1}), 8), "two axes");
        for (const char* nm : {"backward", "ortho", "forward"}) {
          Attrs a = with_n(axes({1, 0}), 6);
          a.set("norm", std::string(nm));
          add({t(c, {4, 3, 2})}, a, "halved axis 0");
        }
        break;
      }
      default: break;
    }
  }
  return out;
}

std::vector<Spec> specs_for(Op op, std::mt19937& rng) {
  std::vector<Spec> out;
  auto add = [&](std::vector<Operand> in, Attrs a = {}, std::string note = "") { out.push_back({std::move(in), std::move(a), std::move(note)}); };
  switch (op) {
    case Op::constant:
      for (DType d : kAll) {
        Operand o{{d, S({3, 2})}, d == DType::boolean ? Fill::boolean : Fill::normal};
        add({}, Attrs{{"value", make_input(o, rng, false)}});
      }
      break;
    case Op::iota:
      for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::bf16, DType::i8})
        for (int64_t axis : {0, 1, -1}) add({}, Attrs{{"shape", S({4, 6})}, {"dtype", d}, {"axis", axis}});
      break;
    case Op::select:
      for (DType d : kAll) {
        add({{{DType::boolean, S({4, 5})}, Fill::boolean}, {{d, S({4, 5})}}, {{d, S({4, 5})}}});
        add({{{DType::boolean, S({3, 1})}, Fill::boolean}, {{d, S({1, 7})}}, {{d, S({})}}}, {}, "broadcast");
      }
      break;
    case Op::cast:
      for (DType from : kAll)
        for (DType to : kAll) add({{{from, S({6, 5})}, from == DType::boolean ? Fill::boolean : Fill::normal}}, Attrs{{"to", to}});
      break;
    case Op::reduce:
      add({{{DType::f32, S({300, 170})}, Fill::unit}}, Attrs{{"kind", std::string("sum")}, {"axes", ir::Ints{1}}}, "threaded");
      add({{{DType::f32, S({300, 170})}, Fill::distinct}}, Attrs{{"kind", std::string("argmax")}, {"axes", ir::Ints{0}}}, "threaded");
      // few long rows (a gradient summed back to a scalar): split over blocks / threads, then merged
      add({{{DType::f32, S({100003})}, Fill::unit}}, Attrs{{"kind", std::string("sum")}, {"axes", ir::Ints{0}}}, "one long row");
      add({{{DType::f32, S({3, 70001})}, Fill::unit}}, Attrs{{"kind", std::string("sum")}, {"axes", ir::Ints{1}}, {"keepdims", true}}, "three long rows");
      add({{{DType::f64, S({2, 40000})}, Fill::unit}}, Attrs{{"kind", std::string("sum")}, {"axes", ir::Ints{-1}}}, "two long f64 rows");
      add({{{DType::f64, S({1, 40001})}, Fill::small_int}}, Attrs{{"kind", std::string("argmax")}, {"axes", ir::Ints{1}}}, "one long f64 row, ties");
      // long f32 lines (a greedy step's argmax over a vocabulary): even lengths in float4s, odd
      // ones element by element, and many ties (small integers) so the first index must win
      for (const char* kind : {"max", "min", "argmax", "argmin"}) {
        add({{{DType::f32, S({2, 30000})}, Fill::normal}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{1}}}, "long line");
        add({{{DType::f32, S({3, 4099})}, Fill::small_int}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{-1}}}, "long odd line, ties");
        add({{{DType::f32, S({1, 20001})}, Fill::small_int}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{1}}}, "split odd line, ties");
        add({{{DType::f32, S({2, 3, 520})}, Fill::small_int}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{2}}, {"keepdims", true}}, "lines, ties");
      }
      for (DType d : kAll)
        for (const char* kind : {"sum", "prod", "max", "min", "argmax", "argmin"}) {
          bool arg = std::string(kind).substr(0, 3) == "arg";
          Fill f = d == DType::boolean ? Fill::boolean : (arg || std::string(kind) == "max" || std::string(kind) == "min") ? Fill::distinct : Fill::unit;
          if (std::string(kind) == "prod" && is_integer(d)) f = Fill::small_int;
          if (!arg) add({{{d, S({4, 6, 5})}, f}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{0, 2}}});
          add({{{d, S({5, 7})}, f}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{-1}}, {"keepdims", true}});
          add({{{d, S({3, 9})}, f}}, Attrs{{"kind", std::string(kind)}, {"axes", ir::Ints{0}}});
        }
      break;
    case Op::all_reduce:  // one rank (test_backend_ops lends a runtime::SingleRankGroup): the value itself
      for (DType d : kAll)
        for (const char* o : {"sum", "max", "avg"}) add({{{d, S({3, 5})}, is_integer(d) ? Fill::small_int : Fill::normal}}, Attrs{{"op", std::string(o)}});
      break;
    case Op::all_gather:
      for (DType d : kAll) {
        add({{{d, S({3, 5})}, Fill::normal}}, Attrs{{"axis", int64_t{1}}, {"ranks", int64_t{1}}});
        add({{{d, S({2, 3, 4})}, Fill::normal}}, Attrs{{"axis", int64_t{-1}}, {"ranks", int64_t{1}}});
      }
      break;
    case Op::reduce_scatter:  // one rank: its one slice of the value itself
      for (DType d : kAll)
        for (const char* o : {"sum", "max", "avg"}) {
          if (std::string(o) == "avg" && !is_float(d)) continue;
          add({{{d, S({3, 5})}, is_integer(d) ? Fill::small_int : Fill::normal}}, Attrs{{"op", std::string(o)}, {"axis", int64_t{1}}, {"ranks", int64_t{1}}});
          add({{{d, S({2, 3, 4})}, is_integer(d) ? Fill::small_int : Fill::normal}}, Attrs{{"op", std::string(o)}, {"axis", int64_t{-1}}, {"ranks", int64_t{1}}});
        }
      break;
    case Op::broadcast_from:
      for (DType d : kAll) add({{{d, S({3, 5})}, Fill::normal}}, Attrs{{"root", int64_t{0}}});
      break;
    case Op::cumsum:
      for (DType d : kAll)
        for (bool ex : {false, true}) {
          add({{{d, S({4, 7})}, is_integer(d) ? Fill::small_int : Fill::normal}}, Attrs{{"axis", int64_t{1}}, {"exclusive", ex}});
          add({{{d, S({5, 3})}, is_integer(d) ? Fill::small_int : Fill::normal}}, Attrs{{"axis", int64_t{0}}, {"exclusive", ex}, {"reverse", true}});
        }
      break;
    case Op::sort:
      for (DType d : kAll)
        for (bool desc : {false, true}) {
          add({{{d, S({4, 9})}, Fill::distinct}}, Attrs{{"axis", int64_t{-1}}, {"descending", desc}});
          add({{{d, S({6, 3})}, Fill::distinct}}, Attrs{{"axis", int64_t{0}}, {"descending", desc}});
        }
      break;
    case Op::topk:
      for (DType d : kAll)
        for (bool largest : {true, false}) {
          add({{{d, S({4, 9})}, Fill::distinct}}, Attrs{{"k", int64_t{3}}, {"largest", largest}});
          add({{{d, S({7, 5})}, Fill::distinct}}, Attrs{{"k", int64_t{2}}, {"axis", int64_t{0}}, {"largest", largest}});
        }
      break;
    case Op::dot_general:
      for (DType d : kAll) {
        Fill f = is_integer(d) ? Fill::small_int : Fill::normal;
        add({{{d, S({5, 7})}, f}, {{d, S({7, 3})}, f}}, Attrs{{"contract", ir::Intss{{1}, {0}}}}, "matmul");
        add({{{d, S({13, 8})}, f}, {{d, S({6, 8})}, f}}, Attrs{{"contract", ir::Intss{{1}, {1}}}}, "x·wᵀ");
        add({{{d, S({2, 4, 5})}, f}, {{d, S({2, 5, 3})}, f}}, Attrs{{"batch", ir::Intss{{0}, {0}}}, {"contract", ir::Intss{{2}, {1}}}}, "batched");
        add({{{d, S({3, 2, 4})}, f}, {{d, S({4, 2, 5})}, f}}, Attrs{{"batch", ir::Intss{{1}, {1}}}, {"contract", ir::Intss{{2}, {0}}}}, "batch in the middle");
        add({{{d, S({4, 3, 2})}, f}, {{d, S({3, 2, 5})}, f}}, Attrs{{"contract", ir::Intss{{1, 2}, {0, 1}}}}, "two contracting dims");
      }
      // int8 products accumulated in i32 (an int8 kernel's), small and big enough for blocked paths
      for (auto [m, k, n] : {std::array<int64_t, 3>{5, 7, 3}, {33, 100, 70}, {64, 784, 128}}) {
        Attrs a{{"contract", ir::Intss{{1}, {1}}}, {"out", DType::i32}};
        add({{{DType::i8, S({m, k})}, Fill::int8}, {{DType::i8, S({n, k})}, Fill::int8}}, a, "int8 x·wᵀ");
        add({{{DType::i8, S({m, k})}, Fill::int8}, {{DType::i8, S({n, k})}, Fill::int8, 0, true}}, a, "int8 x·wᵀ, constant w");
      }
      for (DType d : {DType::f32, DType::f64}) {  // big enough for the threaded GEMM paths
        add({{{d, S({64, 96})}}, {{d, S({96, 80})}}}, Attrs{{"contract", ir::Intss{{1}, {0}}}}, "rows split");
        add({{{d, S({96, 66})}}, {{d, S({70, 96})}}}, Attrs{{"contract", ir::Intss{{0}, {1}}}}, "transposed rows split");
        add({{{d, S({3, 256})}}, {{d, S({256, 301})}}}, Attrs{{"contract", ir::Intss{{1}, {0}}}}, "columns split");
        add({{{d, S({256, 3})}}, {{d, S({301, 256})}}}, Attrs{{"contract", ir::Intss{{0}, {1}}}}, "transposed columns split");
        add({{{d, S({6, 40, 32})}}, {{d, S({6, 32, 40})}}}, Attrs{{"batch", ir::Intss{{0}, {0}}}, {"contract", ir::Intss{{2}, {1}}}}, "batches split");
      }
      add({{{DType::bf16, S({4, 6})}}, {{DType::bf16, S({6, 3})}}}, Attrs{{"contract", ir::Intss{{1}, {0}}}, {"out", DType::f32}}, "bf16→f32");
      for (DType d : {DType::f16, DType::bf16}) {  // big enough for tensor-core tiles: in place (f16), staged (bf16, strided)
        add({{{d, S({130, 96})}}, {{d, S({72, 96})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}}, "x·wᵀ, ragged tiles");
        add({{{d, S({2, 128, 64})}}, {{d, S({2, 64, 192})}}}, Attrs{{"batch", ir::Intss{{0}, {0}}}, {"contract", ir::Intss{{2}, {1}}}}, "batched, [k][n]");
        add({{{d, S({100, 200})}}, {{d, S({100, 70})}}}, Attrs{{"contract", ir::Intss{{0}, {0}}}}, "transposed, k ragged");
        add({{{d, S({300, 520})}}, {{d, S({520, 136})}}}, Attrs{{"contract", ir::Intss{{1}, {0}}}, {"out", DType::f32}}, "long k, →f32");
        add({{{d, S({96, 3072})}}, {{d, S({80, 3072})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}}, "few tiles, k split");
      }
      add({{{DType::f32, S({70, 64})}}, {{DType::f32, S({96, 64})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}, {"compute", DType::bf16}}, "compute bf16");
      add({{{DType::f32, S({64, 5})}}, {{DType::f32, S({64, 300})}}}, Attrs{{"contract", ir::Intss{{0}, {0}}}, {"compute", DType::bf16}}, "compute bf16, transposed, columns");
      add({{{DType::i8, S({4, 6})}, Fill::small_int}, {{DType::i8, S({6, 3})}, Fill::small_int}}, Attrs{{"contract", ir::Intss{{1}, {0}}}, {"out", DType::i32}}, "i8→i32");
      break;
    case Op::conv:
      for (DType d : kAll) {
        Fill f = is_integer(d) ? Fill::small_int : Fill::normal;
        add({{{d, S({2, 3, 7, 6})}, f}, {{d, S({4, 3, 3, 3})}, f}},
            Attrs{{"strides", ir::Ints{1, 1}}, {"padding", ir::Intss{{1, 1}, {0, 1}}}, {"dilation", ir::Ints{1, 1}}});
        add({{{d, S({1, 4, 9, 8})}, f}, {{d, S({6, 2, 3, 2})}, f}},
            Attrs{{"strides", ir::Ints{2, 1}}, {"padding", ir::Intss{{0, 0}, {1, 1}}}, {"dilation", ir::Ints{1, 2}}, {"groups", int64_t{2}}});
        add({{{d, S({2, 2, 11})}, f}, {{d, S({3, 2, 4})}, f}}, Attrs{{"strides", ir::Ints{2}}, {"padding", ir::Intss{{2, 1}}}, {"dilation", ir::Ints{1}}}, "1-D");
      }
      for (bool constant : {false, true}) {  // int8 convolutions accumulated in i32
        add({{{DType::i8, S({2, 3, 7, 6})}, Fill::int8}, {{DType::i8, S({4, 3, 3, 3})}, Fill::int8, 0, constant}},
            Attrs{{"strides", ir::Ints{1, 1}}, {"padding", ir::Intss{{1, 1}, {0, 1}}}, {"dilation", ir::Ints{1, 1}}, {"out", DType::i32}},
            constant ? "int8, constant w" : "int8");
        add({{{DType::i8, S({4, 16, 14, 14})}, Fill::int8}, {{DType::i8, S({32, 16, 3, 3})}, Fill::int8, 0, constant}},
            Attrs{{"strides", ir::Ints{1, 1}}, {"padding", ir::Intss{{1, 1}, {1, 1}}}, {"dilation", ir::Ints{1, 1}}, {"out", DType::i32}},
            constant ? "int8 CNN layer, constant w" : "int8 CNN layer");
      }
      for (DType d : {DType::f32, DType::f64, DType::bf16}) {  // big enough for the oneDNN paths and their thread splits
        auto conv = [&](std::vector<int64_t> x, std::vector<int64_t> w, ir::Ints st, ir::Intss pad, ir::Ints dil, int64_t groups,
                        const char* note) {
          add({{{d, S(x)}}, {{d, S(w)}}}, Attrs{{"strides", st}, {"padding", pad}, {"dilation", dil}, {"groups", groups}}, note);
        };
        conv({3, 16, 13, 11}, {32, 16, 3, 3}, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 1, "batch split");
        if (d != DType::f64) conv({20, 8, 30, 30}, {16, 8, 3, 3}, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 1, "many batch slices of one size");
        conv({1, 8, 9, 10}, {48, 8, 3, 3}, {2, 2}, {{1, 0}, {2, 1}}, {1, 1}, 1, "output channels split, strided");
        conv({2, 12, 10, 9}, {12, 4, 3, 3}, {1, 2}, {{2, 2}, {1, 0}}, {2, 1}, 3, "groups, dilation");
        conv({2, 8, 7, 7}, {8, 1, 3, 3}, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 8, "depthwise");
        conv({3, 5, 9, 8}, {4, 5, 7, 6}, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 1, "kernel larger than the output");
        conv({2, 6, 11, 10}, {4, 6, 5, 5}, {1, 1}, {{1, 0}, {1, 1}}, {2, 2}, 1, "kernel larger than the output, dilated");
        conv({2, 12, 9, 9}, {5, 12, 7, 7}, {1, 1}, {{0, 0}, {0, 0}}, {1, 1}, 1, "kernel larger than the output, batch split");
        conv({1, 15, 8, 8}, {6, 5, 6, 6}, {1, 1}, {{0, 0}, {0, 0}}, {1, 1}, 3, "kernel larger than the output, groups");
        conv({2, 4, 5, 6, 5}, {8, 4, 3, 3, 2}, {1, 2, 1}, {{1, 1}, {0, 1}, {1, 0}}, {1, 1, 1}, 1, "3-D");
        conv({4, 6, 17}, {10, 6, 5}, {3}, {{2, 3}}, {2}, 1, "1-D, strided, dilated");
        conv({1, 2, 8, 8}, {3, 2, 3, 3}, {1, 1}, {{-1, 0}, {0, -1}}, {1, 1}, 1, "negative padding (crops)");
      }
      break;
    case Op::reshape:
      for (DType d : kAll) {
        add({{{d, S({4, 6})}}}, Attrs{{"shape", S({2, 12})}});
        add({{{d, S({2, 3, 4})}}}, Attrs{{"shape", Shape{Dim(6), Dim(-1)}}});
      }
      break;
    case Op::transpose:
      add({{{DType::f32, S({250, 3, 90})}}}, Attrs{{"perm", ir::Ints{2, 0, 1}}}, "threaded");
      for (DType d : kAll) {
        add({{{d, S({5, 7})}}}, Attrs{{"perm", ir::Ints{1, 0}}});
        add({{{d, S({2, 3, 4})}}}, Attrs{{"perm", ir::Ints{2, 0, 1}}});
      }
      break;
    case Op::broadcast:
      for (DType d : kAll) {
        add({{{d, S({3, 1})}}}, Attrs{{"shape", S({2, 3, 5})}});
        add({{{d, S({})}}}, Attrs{{"shape", S({4, 2})}});
      }
      break;
    case Op::slice:
      for (DType d : kAll) {
        add({{{d, S({7, 9})}}}, Attrs{{"start", S({1, 2})}, {"limit", S({6, 9})}, {"stride", ir::Ints{2, 3}}});
        add({{{d, S({4, 5, 6})}}}, Attrs{{"start", S({0, 1, 0})}, {"limit", S({4, 3, 6})}, {"stride", ir::Ints{1, 1, 1}}});
      }
      break;
    case Op::concat:
      for (DType d : kAll) {
        add({{{d, S({2, 3})}}, {{d, S({2, 5})}}, {{d, S({2, 1})}}}, Attrs{{"axis", int64_t{1}}});
        add({{{d, S({1, 4})}}, {{d, S({3, 4})}}}, Attrs{{"axis", int64_t{0}}});
      }
      break;
    case Op::pad:
      for (DType d : kAll) {
        add({{{d, S({3, 4})}}}, Attrs{{"lo", ir::Ints{1, 2}}, {"hi", ir::Ints{2, 0}}, {"value", 1.5}});
        add({{{d, S({4, 5})}}}, Attrs{{"lo", ir::Ints{-1, 2}}, {"hi", ir::Ints{1, -2}}}, "negative crops");
        add({{{d, S({4, 5})}}}, Attrs{{"lo", ir::Ints{2, 1}}, {"hi", ir::Ints{1, 3}}, {"mode", std::string("reflect")}});
        add({{{d, S({3, 4})}}}, Attrs{{"lo", ir::Ints{0, 3}}, {"hi", ir::Ints{2, 1}}, {"mode", std::string("edge")}});
        add({{{d, S({3, 4})}}}, Attrs{{"lo", ir::Ints{1, 0}}, {"hi", ir::Ints{0, -1}}, {"interior", ir::Ints{2, 1}}}, "interior");
        add({{{d, S({2, 3, 5})}}}, Attrs{{"lo", ir::Ints{0, -2, -3}}, {"hi", ir::Ints{1, 1, -2}}, {"interior", ir::Ints{1, 0, 2}}}, "interior, crops");
      }
      add({{{DType::f32, S({8, 16, 14, 14})}}}, Attrs{{"lo", ir::Ints{0, 0, 1, 0}}, {"hi", ir::Ints{0, 0, 0, 1}}, {"interior", ir::Ints{0, 0, 1, 1}}},
          "threaded, pooling gradient");
      break;
    case Op::gather:
      for (DType d : kAll)
        for (DType it : {DType::i32, DType::i64}) {
          add({{{d, S({6, 4})}}, {{it, S({5})}, Fill::index, 6}}, Attrs{{"axis", int64_t{0}}});
          add({{{d, S({3, 7, 2})}}, {{it, S({2, 2})}, Fill::index, 7}}, Attrs{{"axis", int64_t{1}}});
        }
      break;
    case Op::scatter:
      for (DType d : kAll)
        for (const char* red : {"none", "add", "max", "min"}) {
          // "none" with repeated indices would make the result depend on write order.
          Fill idx = std::string(red) == "none" ? Fill::distinct : Fill::index;
          add({{{d, S({6, 3})}}, {{DType::i64, S({4})}, idx, 6}, {{d, S({4, 3})}}}, Attrs{{"axis", int64_t{0}}, {"reduce", std::string(red)}});
        }
      break;
    case Op::elementwise_region: {
      // what fusion makes of a bias + GELU + residual, and of a masked select chain
      const char* body1 =
          "graph @region(%x: f32[5,70], %b: f32[70], %r: f32[5,70]) {\n"
          "  %h = mir.add(%x, %b) : f32[5,70]\n  %g = hir.gelu(%h) : f32[5,70]\n  %y = mir.add(%g, %r) : f32[5,70]\n"
          "  %c = mir.constant() {value=tensor<f32[]>[0.5]} : f32[]\n  %s = mir.mul(%y, %c) : f32[5,70]\n  return %s, %h\n}\n";
      add({{{DType::f32, S({5, 70})}}, {{DType::f32, S({70})}}, {{DType::f32, S({5, 70})}}}, Attrs{{"body", std::string(body1)}}, "bias gelu residual");
      const char* body2 =
          "graph @region(%x: f32[3,600], %m: bool[3,1]) {\n"
          "  %z = mir.constant() {value=tensor<f32[]>[0.0]} : f32[]\n  %p = mir.gt(%x, %z) : bool[3,600]\n"
          "  %q = mir.logical_and(%p, %m) : bool[3,600]\n  %e = mir.exp(%x) : f32[3,600]\n  %t = hir.silu(%x) : f32[3,600]\n"
          "  %y = mir.select(%q, %e, %t) : f32[3,600]\n  %f = mir.cast(%q) {to=f32} : f32[3,600]\n  %o = mir.sub(%y, %f) : f32[3,600]\n"
          "  return %o, %q\n}\n";
      add({{{DType::f32, S({3, 600})}}, {{DType::boolean, S({3, 1})}, Fill::boolean}}, Attrs{{"body", std::string(body2)}}, "masks, tiles");
      const char* body3 = "graph @region(%x: f32[], %y: f32[]) {\n  %a = mir.mul(%x, %y) : f32[]\n  %b = mir.exp(%a) : f32[]\n  return %b\n}\n";
      const char* body4 =
          "graph @region(%x: f32[4,33], %b: bf16[33]) {\n  %c = mir.cast(%b) {to=f32} : f32[33]\n  %y = mir.add(%x, %c) : f32[4,33]\n"
          "  %g = hir.gelu(%y) : f32[4,33]\n  %h = mir.cast(%g) {to=bf16} : bf16[4,33]\n  return %h, %g\n}\n";
      add({{{DType::f32, S({4, 33})}}, {{DType::bf16, S({33})}}}, Attrs{{"body", std::string(body4)}}, "bf16 in and out");
      add({{{DType::f32, S({})}}, {{DType::f32, S({})}}}, Attrs{{"body", std::string(body3)}}, "scalars");
      // chains (one primitive with post-ops on oneapi): scaled scores plus a broadcast mask; a
      // broadcast first operand of a subtraction; a comparison ending the chain; a constant head
      const char* body5 =
          "graph @region(%x: f32[2,3,4,8], %m: f32[2,1,1,8]) {\n  %c = mir.constant() {value=tensor<f32[]>[0.25]} : f32[]\n"
          "  %y = mir.mul(%x, %c) : f32[2,3,4,8]\n  %z = mir.add(%y, %m) : f32[2,3,4,8]\n  return %z\n}\n";
      add({{{DType::f32, S({2, 3, 4, 8})}}, {{DType::f32, S({2, 1, 1, 8})}}}, Attrs{{"body", std::string(body5)}}, "scaled scores + mask");
      const char* body6 =
          "graph @region(%x: f32[6,10], %w: f32[10]) {\n  %a = mir.sub(%w, %x) : f32[6,10]\n  %b = hir.relu(%a) : f32[6,10]\n"
          "  %c = mir.mul(%b, %w) : f32[6,10]\n  return %c\n}\n";
      add({{{DType::f32, S({6, 10})}}, {{DType::f32, S({10})}}}, Attrs{{"body", std::string(body6)}}, "broadcast minuend");
      const char* body7 =
          "graph @region(%x: f32[5,9], %y: f32[9]) {\n  %c = mir.constant() {value=tensor<f32[]>[2.0]} : f32[]\n"
          "  %a = mir.mul(%x, %c) : f32[5,9]\n  %b = mir.lt(%y, %a) : bool[5,9]\n  return %b\n}\n";
      add({{{DType::f32, S({5, 9})}}, {{DType::f32, S({9})}}}, Attrs{{"body", std::string(body7)}}, "ends in a comparison");
      const char* body8 =
          "graph @region(%x: f32[7,5]) {\n  %c = mir.constant() {value=tensor<f32[]>[1.0]} : f32[]\n  %a = mir.sub(%c, %x) : f32[7,5]\n"
          "  %k = mir.constant() {value=tensor<f32[]>[-3.0]} : f32[]\n  %b = mir.mul(%a, %k) : f32[7,5]\n  %e = mir.exp(%b) : f32[7,5]\n  return %e\n}\n";
      add({{{DType::f32, S({7, 5})}}}, Attrs{{"body", std::string(body8)}}, "constant head");
      break;
    }
    case Op::fused_reduce: {
      // what fuse_reduce_prologues makes: masked mean pooling's sum, a sum of squares, max of a
      // shifted exp over two axes, a min in f16; lanes along the reduced elements (few outputs:
      // a block each; many: a warp each) or across neighbouring outputs
      auto reduce = [](const char* kind, ir::Ints axes, bool keep, const std::string& body) {
        return Attrs{{"kind", std::string(kind)}, {"axes", axes}, {"keepdims", keep}, {"prologue", body}};
      };
      const char* pool = "graph @prologue(%x: f32[2,7,33], %m: f32[2,7,1]) {\n  %y = mir.mul(%x, %m) : f32[2,7,33]\n  return %y\n}\n";
      add({{{DType::f32, S({2, 7, 33})}}, {{DType::f32, S({2, 7, 1})}, Fill::boolean}}, reduce("sum", {1}, false, pool), "masked pooling");
      for (int64_t rows : {3, 600}) {
        std::string sq = cat("graph @prologue(%x: f32[", rows, ",70]) {\n  %y = mir.mul(%x, %x) : f32[", rows, ",70]\n  return %y\n}\n");
        add({{{DType::f32, S({rows, 70})}}}, reduce("sum", {-1}, true, sq), rows > 100 ? "sum of squares, many rows" : "sum of squares");
      }
      const char* line = "graph @prologue(%x: f32[2,5000]) {\n  %y = mir.abs(%x) : f32[2,5000]\n  return %y\n}\n";
      add({{{DType::f32, S({2, 5000})}}}, reduce("sum", {1}, false, line), "long lines");
      // short reductions over many outputs (a thread each): 3 channels of each row, 16 strided rows
      const char* sh = "graph @prologue(%x: f32[700,16,3], %w: f32[700,1,3]) {\n  %y = mir.mul(%x, %w) : f32[700,16,3]\n  return %y\n}\n";
      add({{{DType::f32, S({700, 16, 3})}}, {{DType::f32, S({700, 1, 3})}}}, reduce("sum", {2}, true, sh), "short rows, many outputs");
      add({{{DType::f32, S({700, 16, 3})}}, {{DType::f32, S({700, 1, 3})}}}, reduce("sum", {1}, false, sh), "short strided reductions, many outputs");
      // a loss: |image − target| over every pixel to one number (few outputs, each very long)
      const char* loss = "graph @prologue(%x: f32[300,256], %t: f32[300,256]) {\n  %d = mir.sub(%x, %t) : f32[300,256]\n"
                         "  %a = mir.abs(%d) : f32[300,256]\n  return %a\n}\n";
      add({{{DType::f32, S({300, 256})}}, {{DType::f32, S({300, 256})}}}, reduce("sum", {0, 1}, false, loss), "a whole image to one number");
      const char* shifted =
          "graph @prologue(%x: bf16[4,5,6], %c: f32[4,1,1]) {\n  %f = mir.cast(%x) {to=f32} : f32[4,5,6]\n  %d = mir.sub(%f, %c) : f32[4,5,6]\n"
          "  %e = mir.exp(%d) : f32[4,5,6]\n  return %e\n}\n";
      add({{{DType::bf16, S({4, 5, 6})}}, {{DType::f32, S({4, 1, 1})}}}, reduce("max", {0, 2}, false, shifted), "max over two axes");
      const char* half = "graph @prologue(%x: f16[9,40]) {\n  %y = mir.mul(%x, %x) : f16[9,40]\n  return %y\n}\n";
      add({{{DType::f16, S({9, 40})}}}, reduce("min", {0}, true, half), "f16 min across outputs");
      break;
    }
    case Op::fused_dot: {
      // the epilogues fusion makes: bias + GELU, bias + residual, scale + cast to bf16, and
      // one no device can fuse (sin) that must still run through its decomposition
      auto ep = [](const std::string& extra_in, const std::string& ops, const std::string& ret, const char* dt = "f32") {
        return cat("graph @epilogue(%p: f32[M,N]", extra_in, ") {\n", ops, "  return ", ret, "\n}\n");
      };
      (void)ep;
      for (auto [m, k, n] : {std::array<int64_t, 3>{6, 16, 10}, std::array<int64_t, 3>{70, 64, 96}}) {
        std::string M = std::to_string(m), N = std::to_string(n);
        auto sub = [&](std::string t) {
          for (auto [from, to] : {std::pair<std::string, std::string>{"M", M}, {"N", N}}) {
            size_t pos;
            while ((pos = t.find("[" + from + ",")) != std::string::npos) t.replace(pos + 1, from.size(), to);
            while ((pos = t.find("," + from + "]")) != std::string::npos) t.replace(pos + 1, from.size(), to);
            while ((pos = t.find("[" + from + "]")) != std::string::npos) t.replace(pos + 1, from.size(), to);
          }
          return t;
        };
        std::string b1 = sub("graph @epilogue(%p: f32[M,N], %b: f32[N]) {\n  %y = mir.add(%p, %b) : f32[M,N]\n  %g = hir.gelu(%y) : f32[M,N]\n  return %g\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({n, k})}}, {{DType::f32, S({n})}}},
            Attrs{{"contract", ir::Intss{{1}, {1}}}, {"epilogue", b1}}, "bias + gelu");
        std::string b2 = sub("graph @epilogue(%p: f32[M,N], %b: f32[N], %r: f32[M,N]) {\n  %y = mir.add(%p, %b) : f32[M,N]\n  %z = mir.add(%r, %y) : f32[M,N]\n  return %z\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({k, n})}}, {{DType::f32, S({n})}}, {{DType::f32, S({m, n})}}},
            Attrs{{"contract", ir::Intss{{1}, {0}}}, {"epilogue", b2}}, "bias + residual");
        std::string b2h = sub("graph @epilogue(%p: f32[M,N], %r: f32[M,N], %b: f32[N]) {\n  %y = mir.add(%p, %b) : f32[M,N]\n  %z = mir.add(%y, %r) : f32[M,N]\n  return %z\n}\n");
        add({{{DType::f16, S({m, k})}}, {{DType::f16, S({n, k})}}, {{DType::f32, S({m, n})}}, {{DType::f32, S({n})}}},
            Attrs{{"contract", ir::Intss{{1}, {1}}}, {"out", DType::f32}, {"epilogue", b2h}}, "f16 product, bias + residual");
        std::string b2r = sub("graph @epilogue(%p: f32[M,N], %r: f32[M,N]) {\n  %z = mir.add(%r, %p) : f32[M,N]\n  return %z\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({n, k})}}, {{DType::f32, S({m, n})}}},
            Attrs{{"contract", ir::Intss{{1}, {1}}}, {"epilogue", b2r}}, "residual only");
        std::string b3 = sub("graph @epilogue(%p: f32[M,N]) {\n  %c = mir.constant() {value=tensor<f32[]>[0.5]} : f32[]\n  %y = mir.mul(%p, %c) : f32[M,N]\n  %s = hir.silu(%y) : f32[M,N]\n  %h = mir.cast(%s) {to=bf16} : bf16[M,N]\n  return %h\n}\n");
        add({{{DType::bf16, S({m, k})}}, {{DType::bf16, S({n, k})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}, {"out", DType::f32}, {"epilogue", b3}}, "bf16, scale, silu, cast");
        // two affine steps with different constants (oneDNN 2.6's jit gave every eltwise_linear
        // post-op the first one's alpha and beta): a soft-cap, cap·tanh(p/cap), and p·5 + 1
        std::string b5 = sub("graph @epilogue(%p: f32[M,N]) {\n  %c = mir.constant() {value=tensor<f32[]>[3.0]} : f32[]\n  %y = mir.div(%p, %c) : f32[M,N]\n  %t = mir.tanh(%y) : f32[M,N]\n  %z = mir.mul(%t, %c) : f32[M,N]\n  return %z\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({n, k})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}, {"epilogue", b5}}, "soft-cap");
        std::string b6 = sub("graph @epilogue(%p: f32[M,N]) {\n  %a = mir.constant() {value=tensor<f32[]>[5.0]} : f32[]\n  %b = mir.constant() {value=tensor<f32[]>[1.0]} : f32[]\n  %y = mir.mul(%p, %a) : f32[M,N]\n  %z = mir.add(%y, %b) : f32[M,N]\n  return %z\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({n, k})}}}, Attrs{{"contract", ir::Intss{{1}, {1}}}, {"epilogue", b6}}, "scale then shift");
        // an int8 product's dequantization: its i32 sums to f32, times the weights' per-column
        // and the activations' per-row scale, then bias and GELU (the int8 precision's linears)
        std::string b7 = sub(
            "graph @epilogue(%p: i32[M,N], %w: f32[N], %x: f32[M,1], %b: f32[N]) {\n  %f = mir.cast(%p) {to=f32} : f32[M,N]\n"
            "  %k = mir.constant() {value=tensor<f32[]>[0.001]} : f32[]\n  %s = mir.mul(%f, %k) : f32[M,N]\n"
            "  %y = mir.mul(%s, %w) : f32[M,N]\n  %z = mir.mul(%y, %x) : f32[M,N]\n  %a = mir.add(%z, %b) : f32[M,N]\n"
            "  %g = hir.gelu(%a) : f32[M,N]\n  return %g\n}\n");
        add({{{DType::i8, S({m, k})}}, {{DType::i8, S({n, k})}}, {{DType::f32, S({n})}, Fill::unit}, {{DType::f32, S({m, 1})}, Fill::positive},
             {{DType::f32, S({n})}}},
            Attrs{{"contract", ir::Intss{{1}, {1}}}, {"out", DType::i32}, {"epilogue", b7}}, "int8, dequantize + bias + gelu");
        std::string b4 = sub("graph @epilogue(%p: f32[M,N]) {\n  %y = mir.sin(%p) : f32[M,N]\n  return %y\n}\n");
        add({{{DType::f32, S({m, k})}}, {{DType::f32, S({k, n})}}}, Attrs{{"contract", ir::Intss{{1}, {0}}}, {"epilogue", b4}}, "unfusable sin");
      }
      break;
    }
    case Op::linear:
      for (DType d : kFloats) {
        add({{{d, S({5, 8})}}, {{d, S({3, 8})}}});
        add({{{d, S({2, 3, 8})}}, {{d, S({6, 8})}}, {{d, S({6})}}}, {}, "bias");
      }
      break;
    case Op::matmul:
      for (DType d : kFloats) {
        add({{{d, S({5, 8})}}, {{d, S({8, 3})}}});
        add({{{d, S({2, 1, 4, 5})}}, {{d, S({3, 5, 2})}}}, {}, "broadcast batch");
        add({{{d, S({7})}}, {{d, S({2, 7, 3})}}}, {}, "1-D lhs");
        add({{{d, S({2, 4, 7})}}, {{d, S({7})}}}, {}, "1-D rhs");
      }
      break;
    case Op::attention:
      for (DType d : kFloats) {
        add({{{d, S({2, 4, 5, 8})}}, {{d, S({2, 2, 5, 8})}}, {{d, S({2, 2, 5, 8})}}}, {}, "GQA, no mask");
        add({{{d, S({1, 2, 3, 4})}}, {{d, S({1, 2, 7, 4})}}, {{d, S({1, 2, 7, 6})}}}, Attrs{{"mask", std::string("causal")}}, "causal, cached keys");
        add({{{d, S({1, 2, 6, 4})}}, {{d, S({1, 1, 6, 4})}}, {{d, S({1, 1, 6, 4})}}},
            Attrs{{"mask", std::string("sliding_window")}, {"window", int64_t{3}}, {"softcap", 5.0}}, "sliding window + softcap");
        add({{{d, S({2, 2, 3, 4})}}, {{d, S({2, 2, 5, 4})}}, {{d, S({2, 2, 5, 4})}}, {{d, S({2, 1, 1, 5})}}},
            Attrs{{"mask", std::string("additive")}, {"scale", 0.3}}, "additive bias");
        add({{{d, S({2, 5, 4, 8})}}, {{d, S({2, 7, 2, 8})}}, {{d, S({2, 7, 2, 6})}}},
            Attrs{{"mask", std::string("causal")}, {"layout", std::string("bshd")}}, "bshd, GQA, causal");
        add({{{d, S({2, 3, 2, 4})}}, {{d, S({2, 3, 2, 4})}}, {{d, S({2, 3, 2, 4})}}, {{d, S({2, 1, 1, 3})}}},
            Attrs{{"mask", std::string("additive")}, {"layout", std::string("bshd")}}, "bshd, additive");
        if (d != DType::f32) {  // half operands with enough rows for tensor cores (vulkan, cuda)
          add({{{d, S({1, 4, 100, 128})}}, {{d, S({1, 2, 100, 128})}}, {{d, S({1, 2, 100, 128})}}}, Attrs{{"mask", std::string("causal")}},
              "tensor cores: causal, GQA, head 128");
          add({{{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 1, 1, 40})}}},
              Attrs{{"mask", std::string("additive")}, {"layout", std::string("bshd")}}, "tensor cores: bshd, additive, head 32");
          add({{{d, S({1, 4, 150, 64})}}, {{d, S({1, 2, 260, 64})}}, {{d, S({1, 2, 260, 64})}}, {{d, S({1, 1, 150, 260})}, Fill::causal_bias, 30}},
              Attrs{{"mask", std::string("additive")}}, "tensor cores: prompt into a cache, causal bias");
          add({{{d, S({1, 2, 80, 64})}}, {{d, S({1, 1, 80, 64})}}, {{d, S({1, 1, 80, 32})}}},
              Attrs{{"mask", std::string("sliding_window")}, {"window", int64_t{20}}, {"softcap", 5.0}}, "tensor cores: sliding window, softcap, Dv 32");
        }
        if (d == DType::f32) {
          add({{{d, S({2, 4, 9, 8})}}, {{d, S({2, 2, 9, 8})}}, {{d, S({2, 2, 9, 8})}}},
              Attrs{{"mask", std::string("causal")}, {"compute", DType::bf16}}, "bf16 matmuls");
          add({{{d, S({2, 9, 4, 8})}}, {{d, S({2, 9, 4, 8})}}, {{d, S({2, 9, 4, 8})}}, {{d, S({2, 1, 1, 9})}}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::bf16}, {"layout", std::string("bshd")}}, "bf16 matmuls, bshd");
          // f16 products on f32 inputs (the f16 precision policy; tensor cores on cuda from 16 rows)
          add({{{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 1, 1, 40})}}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::f16}, {"layout", std::string("bshd")}}, "f16 matmuls, bshd");
          add({{{d, S({1, 4, 20, 64})}}, {{d, S({1, 2, 20, 64})}}, {{d, S({1, 2, 20, 64})}}}, Attrs{{"mask", std::string("causal")}, {"compute", DType::f16}},
              "f16 matmuls, causal, GQA");
          // stored as the half type the output projection reads (out=): tensor cores, the exact
          // kernel (few rows) and the decode kernel
          add({{{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 40, 4, 32})}}, {{d, S({2, 1, 1, 40})}}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::f16}, {"layout", std::string("bshd")}, {"out", DType::f16}}, "f16 matmuls, stored f16");
          add({{{d, S({1, 4, 20, 64})}}, {{d, S({1, 2, 20, 64})}}, {{d, S({1, 2, 20, 64})}}},
              Attrs{{"mask", std::string("causal")}, {"compute", DType::bf16}, {"out", DType::bf16}}, "bf16 matmuls, stored bf16");
          add({{{d, S({1, 2, 3, 8})}}, {{d, S({1, 2, 5, 8})}}, {{d, S({1, 2, 5, 8})}}}, Attrs{{"out", DType::f16}}, "few rows, stored f16");
          add({{{d, S({2, 4, 1, 8})}}, {{d, S({2, 2, 11, 8})}}, {{d, S({2, 2, 11, 8})}}, {{d, S({1, 1, 1, 11})}, Fill::cache_mask, 5}},
              Attrs{{"mask", std::string("additive")}, {"out", DType::bf16}}, "decode, stored bf16");
          // decode over a KV cache filled to position 5 of 11: the cpu kernel skips the masked tail
          add({{{d, S({2, 4, 1, 8})}}, {{d, S({2, 2, 11, 8})}}, {{d, S({2, 2, 11, 8})}}, {{d, S({1, 1, 1, 11})}, Fill::cache_mask, 5}},
              Attrs{{"mask", std::string("additive")}}, "decode, cache mask, GQA");
          add({{{d, S({1, 2, 2, 40})}}, {{d, S({1, 2, 9, 40})}}, {{d, S({1, 2, 9, 24})}}, {{d, S({1, 1, 2, 9})}, Fill::cache_mask, 7}},
              Attrs{{"mask", std::string("additive")}, {"scale", 0.2}}, "two decode rows, odd head size");
          // long prompts: the cpu kernel cuts the queries into tiles that keep scores in cache
          add({{{d, S({1, 4, 512, 16})}}, {{d, S({1, 2, 512, 16})}}, {{d, S({1, 2, 512, 16})}}}, Attrs{{"mask", std::string("causal")}},
              "long causal prompt, GQA");
          add({{{d, S({1, 384, 4, 16})}}, {{d, S({1, 384, 2, 16})}}, {{d, S({1, 384, 2, 16})}}, {{d, S({1, 1, 384, 384})}}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::bf16}, {"layout", std::string("bshd")}}, "long prompt, bias mask, bf16, bshd");
          // a prompt of 150 at positions 30.. of a cache of 260, causal through the bias: the
          // cuda tensor-core kernel skips the key tiles no row of a block may see
          add({{{d, S({1, 4, 150, 64})}}, {{d, S({1, 2, 260, 64})}}, {{d, S({1, 2, 260, 64})}}, {{d, S({1, 1, 150, 260})}, Fill::causal_bias, 30}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::bf16}}, "prompt into a cache, causal bias, bf16");
          add({{{d, S({1, 2, 70, 32})}}, {{d, S({1, 1, 130, 32})}}, {{d, S({1, 1, 130, 32})}}, {{d, S({1, 1, 70, 130})}, Fill::causal_bias, 60}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::bf16}}, "causal bias, odd cache length, bf16");
          // rows 0..69 with every key masked (each a mean of V); split keys skip masked tiles
          // and the cuda combine kernel recomputes the rows no share could settle
          add({{{d, S({1, 2, 150, 64})}}, {{d, S({1, 1, 150, 64})}}, {{d, S({1, 1, 150, 64})}}, {{d, S({1, 1, 150, 150})}, Fill::causal_bias, -70}},
              Attrs{{"mask", std::string("additive")}, {"compute", DType::bf16}}, "fully masked rows, split keys, bf16");
          // few query tiles: the cuda tensor-core kernel splits each tile's keys over blocks
          add({{{d, S({1, 2, 200, 32})}}, {{d, S({1, 1, 200, 32})}}, {{d, S({1, 1, 200, 32})}}}, Attrs{{"mask", std::string("causal")}, {"compute", DType::bf16}},
              "causal, few query tiles, bf16");
        }
      }
      break;
    case Op::layer_norm:
    case Op::rms_norm:
      for (DType d : kFloats) {
        add({{{d, S({4, 16})}}});
        add({{{d, S({3, 2, 8})}}, {{d, S({8})}}}, {}, "gamma");
        if (op == Op::layer_norm) add({{{d, S({2, 3, 4})}}, {{d, S({3, 4})}}, {{d, S({3, 4})}}}, Attrs{{"axis", int64_t{1}}}, "gamma, beta, two dims");
      }
      // stored in a half type (a norm feeding f16/bf16 matmuls): many rows (a warp each), few long ones
      for (DType to : {DType::f16, DType::bf16}) {
        add({{{DType::f32, S({1100, 48})}}, {{DType::f32, S({48})}}}, Attrs{{"out", to}}, "stored as a half type, many rows");
        add({{{DType::f32, S({2, 1500})}}, {{DType::f32, S({1500})}}}, Attrs{{"out", to}}, "stored as a half type, long rows");
      }
      break;
    case Op::rope:
      for (DType d : kFloats)
        for (bool inter : {false, true}) {
          add({{{d, S({1, 2, 5, 8})}}, {{DType::i64, S({5})}, Fill::index, 40}}, Attrs{{"interleaved", inter}});
          add({{{d, S({2, 3, 4, 10})}}, {{DType::i32, S({2, 4})}, Fill::index, 100}}, Attrs{{"interleaved", inter}, {"dims", int64_t{6}}, {"theta", 500.0}}, "partial, batched positions");
          // q/k norm first (Qwen3): rms_norm over the features with a weight, then the rotation
          add({{{d, S({1, 4, 3, 128})}}, {{DType::i64, S({3})}, Fill::index, 4000}, {{d, S({128})}}}, Attrs{{"interleaved", inter}, {"norm_eps", 1e-6}},
              "normed first");
          add({{{d, S({2, 3, 4, 10})}}, {{DType::i32, S({2, 4})}, Fill::index, 100}, {{d, S({10})}}},
              Attrs{{"interleaved", inter}, {"dims", int64_t{6}}, {"norm_eps", 1e-5}}, "normed first, partial, batched positions");
          // written into a cache of 9 rows at the positions (a decode step's key), plain and normed
          add({{{d, S({2, 3, 4, 10})}}, {{DType::i64, S({4})}, Fill::spread, 9}, {{d, S({2, 3, 9, 10})}}},
              Attrs{{"interleaved", inter}, {"dims", int64_t{6}}, {"append_axis", int64_t{2}}}, "partial, into a cache");
          add({{{d, S({1, 2, 1, 128})}}, {{DType::i32, S({1})}, Fill::spread, 5}, {{d, S({128})}}, {{d, S({1, 2, 5, 128})}}},
              Attrs{{"interleaved", inter}, {"norm_eps", 1e-6}, {"append_axis", int64_t{2}}}, "normed first, into a cache");
        }
      break;
    case Op::embedding:
      for (DType d : kFloats) add({{{d, S({11, 6})}}, {{DType::i64, S({2, 5})}, Fill::index, 11}});
      break;
    case Op::gelu:
    case Op::gelu_tanh:
    case Op::silu:
    case Op::relu:
      for (DType d : kFloats) add({{{d, S({7, 9})}}});
      if (op == Op::relu) add({{{DType::i32, S({5, 3})}}});
      break;
    case Op::softmax:
    case Op::log_softmax:
      for (DType d : kFloats) {
        add({{{d, S({4, 9})}}});
        add({{{d, S({3, 5, 2})}}}, Attrs{{"axis", int64_t{1}}});
      }
      break;
    case Op::cross_entropy:
      for (DType d : kFloats) {
        add({{{d, S({6, 5})}}, {{DType::i64, S({6})}, Fill::label, 5}});
        add({{{d, S({4, 3})}}, {{DType::i32, S({4})}, Fill::label, 3}}, Attrs{{"reduction", std::string("sum")}});
        add({{{d, S({2, 4, 3})}}, {{DType::i64, S({2, 3})}, Fill::label, 4}}, Attrs{{"reduction", std::string("none")}}, "spatial");
      }
      break;
    case Op::conv2d:
      for (DType d : kFloats) {
        add({{{d, S({2, 3, 6, 5})}}, {{d, S({4, 3, 3, 3})}}, {{d, S({4})}}}, Attrs{{"pads", ir::Ints{1, 0, 1, 2}}});
        add({{{d, S({1, 4, 7, 7})}}, {{d, S({4, 2, 3, 3})}}}, Attrs{{"strides", ir::Ints{2, 2}}, {"groups", int64_t{2}}, {"dilations", ir::Ints{1, 2}}});
      }
      break;
    case Op::max_pool:
    case Op::avg_pool:
      for (DType d : kFloats) {
        add({{{d, S({2, 3, 7, 6})}}}, Attrs{{"kernel", ir::Ints{2, 2}}, {"strides", ir::Ints{2, 2}}});
        add({{{d, S({1, 2, 5, 5})}}}, Attrs{{"kernel", ir::Ints{3, 3}}, {"pads", ir::Ints{1, 1, 1, 1}}}, "padded");
        if (op == Op::avg_pool)
          add({{{d, S({1, 2, 5, 5})}}}, Attrs{{"kernel", ir::Ints{3, 3}}, {"pads", ir::Ints{1, 1, 1, 1}}, {"count_include_pad", true}}, "count pads");
      }
      if (op == Op::max_pool) add({{{DType::i32, S({1, 2, 6, 6})}}}, Attrs{{"kernel", ir::Ints{2, 3}}, {"strides", ir::Ints{2, 3}}});
      break;
    case Op::quantize_linear:  // f32/f64 only: a fused region's wider registers would round f16 ties differently
      for (DType d : {DType::f32, DType::f64})
        for (DType q : {DType::i8, DType::u8}) {
          add({{{d, S({4, 6})}}, {{d, S({})}, Fill::positive}, {{q, S({})}, q == DType::u8 ? Fill::positive : Fill::small_int}}, {}, "per tensor");
          add({{{d, S({2, 3, 5})}}, {{d, S({1, 3, 1})}, Fill::unit}, {{q, S({1, 3, 1})}, q == DType::u8 ? Fill::positive : Fill::small_int}}, {}, "per channel");
        }
      break;
    case Op::quantize_rows:
      for (DType d : {DType::f32, DType::f64}) {
        add({{{d, S({4, 6})}}});
        add({{{d, S({2, 3, 37})}}}, {}, "rows of 37");
        add({{{d, S({16, 3})}, Fill::boolean}}, {}, "rows of zeros among them");
      }
      break;
    case Op::dequantize_linear:
      for (DType q : {DType::i8, DType::u8, DType::i32})
        for (DType d : kFloats) {
          add({{{q, S({4, 6})}, q == DType::i8 ? Fill::int8 : Fill::normal}, {{d, S({})}, Fill::positive}, {{q, S({})}, Fill::small_int}}, {}, "per tensor");
          add({{{q, S({2, 3, 5})}, Fill::normal}, {{d, S({3, 1})}, Fill::positive}, {{q, S({3, 1})}, Fill::positive}}, {}, "per channel");
        }
      break;
    case Op::requantize:
      for (int64_t shift : {int64_t{8}, int64_t{38}, int64_t{50}}) {
        Operand acc{{DType::i32, S({6, 10})}, Fill::normal}, m{{DType::i32, S({10})}, Fill::multiplier}, sh{{DType::i32, S({10})}, Fill::shift, shift};
        add({acc, m, sh}, {}, cat("per channel, shifts near ", shift));
        add({acc, m, sh}, Attrs{{"zero_point", int64_t{-5}}, {"lo", int64_t{-5}}}, cat("relu folded in, shifts near ", shift));
        add({acc, {{DType::i32, S({})}, Fill::multiplier}, {{DType::i32, S({})}, Fill::shift, shift}},
            Attrs{{"zero_point", int64_t{3}}, {"lo", int64_t{0}}, {"hi", int64_t{255}}, {"out", DType::u8}}, cat("per tensor, u8, shift near ", shift));
      }
      break;
    case Op::fake_quant:
      for (DType d : {DType::f32, DType::f64}) {
        add({{{d, S({4, 6})}}, {{d, S({})}, Fill::positive}, {{d, S({})}, Fill::small_int}}, {}, "per tensor");
        add({{{d, S({5, 3})}}, {{d, S({1, 3})}, Fill::unit}, {{d, S({1, 3})}, Fill::small_int}}, Attrs{{"lo", int64_t{-8}}, {"hi", int64_t{7}}}, "per channel int4");
      }
      break;
    case Op::dequantize:
      for (int i = 0; i < quant::kNumBlockTypes; ++i) {
        auto t = static_cast<quant::BlockType>(i);
        int64_t rb = *quant::row_bytes(t, 256);
        Attrs a{{"type", std::string(quant::block_type_name(t))}, {"shape", S({3, 256})}};
        add({{{DType::u8, S({3, rb})}, Fill::packed, i}}, a);
        if (t == quant::BlockType::q8_0 || t == quant::BlockType::q4_k)
          add({{{DType::u8, S({3 * rb})}, Fill::packed, i}}, a, "flat bytes");
      }
      break;
    case Op::expert_matmul: {
      // 6 experts; tokens choose 3 each (indices may repeat across tokens, so some experts get
      // several rows and some none): decode (1 token), a few tokens, and prefill-sized groups
      const int64_t E = 6, A = 3, N = 40, K = 256;
      Attrs dense{{"n", N}, {"k", K}};
      for (int64_t T : {int64_t{1}, int64_t{5}, int64_t{24}}) {
        Operand idx{{DType::i64, S({T, A})}, Fill::index, E};
        add({{{DType::f32, S({T, K})}}, idx, {{DType::f32, S({E, N, K})}}}, dense, cat(T, " tokens, dense f32"));
        add({{{DType::f32, S({T, A, K})}}, idx, {{DType::f32, S({E, N, K})}}}, dense, cat(T, " tokens, a row per choice, dense f32"));
        for (auto t : {quant::BlockType::q8_0, quant::BlockType::q4_k, quant::BlockType::q6_k, quant::BlockType::bf16, quant::BlockType::q5_0}) {
          int64_t rb = *quant::row_bytes(t, K);
          Attrs a = dense;
          a.set("type", std::string(quant::block_type_name(t)));
          Operand w{{DType::u8, S({E, N, rb})}, Fill::packed, static_cast<int>(t)};
          add({{{DType::f32, S({T, K})}}, idx, w}, a, cat(T, " tokens, ", quant::block_type_name(t)));
          add({{{DType::f32, S({T, A, K})}}, idx, w}, a, cat(T, " tokens, a row per choice, ", quant::block_type_name(t)));
          add({{{DType::bf16, S({T, K})}}, idx, w}, a, cat(T, " tokens, ", quant::block_type_name(t), ", bf16 x"));
          add({{{DType::bf16, S({T, A, K})}}, idx, w}, a, cat(T, " tokens, a row per choice, ", quant::block_type_name(t), ", bf16 x"));
          if (t == quant::BlockType::bf16) continue;
          Attrs q = a;
          q.set("act", std::string("q8"));
          add({{{DType::f32, S({T, K})}}, idx, w}, q, cat(T, " tokens, ", quant::block_type_name(t), ", 8-bit x"));
          add({{{DType::f32, S({T, A, K})}}, idx, w}, q, cat(T, " tokens, a row per choice, ", quant::block_type_name(t), ", 8-bit x"));
        }
      }
      break;
    }
    case Op::dequant_matmul:
      for (int i = 0; i < quant::kNumBlockTypes; ++i) {
        auto t = static_cast<quant::BlockType>(i);
        // every type but Q8_K (a dot-product intermediate, never a weight) has a fast cpu decoder
        bool fast = t != quant::BlockType::q8_k;
        int64_t K = 512, N = 70, rb = *quant::row_bytes(t, K);
        Attrs a{{"type", std::string(quant::block_type_name(t))}, {"n", N}, {"k", K}};
        Operand w{{DType::u8, S({N, rb})}, Fill::packed, i};
        add({{{DType::f32, S({1, K})}}, w}, a, "one row (decode)");
        if (!fast) continue;
        add({{{DType::f32, S({2, 3, K})}}, w}, a, "six rows");
        add({{{DType::f32, S({20, K})}}, w}, a, "tiles + GEMM");
        add({{{DType::bf16, S({3, K})}}, w}, a, "bf16 x");
        Attrs f32_out = a;
        f32_out.set("out", DType::f32);
        add({{{DType::bf16, S({2, K})}}, w}, f32_out, "bf16 x, f32 out");
        add({{{DType::bf16, S({2, 9, K})}}, w}, f32_out, "bf16 x, f32 out, GEMM (AMX)");
        add({{{DType::f32, S({2, K})}}, {{DType::u8, S({N * rb})}, Fill::packed, i}}, a, "flat bytes");
        // a residual added as the product is stored (what the epilogue fusion makes of an add)
        add({{{DType::f32, S({1, K})}}, w, {{DType::f32, S({1, N})}}}, a, "one row + addend");
        add({{{DType::f32, S({20, K})}}, w, {{DType::f32, S({20, N})}}}, a, "GEMM + addend");
        add({{{DType::bf16, S({2, K})}}, w, {{DType::bf16, S({2, N})}}}, a, "bf16 x + bf16 addend");
        // glu=silu: gate and up rows stacked, silu(gate)·up stored (decode GEMV and GEMM paths)
        if (t == quant::BlockType::f16 || t == quant::BlockType::bf16) {
          Attrs g = a;
          g.set("glu", std::string("silu"));
          Operand w2{{DType::u8, S({2 * N, rb})}, Fill::packed, i};
          add({{{DType::f32, S({1, K})}}, w2}, g, "glu, one row");
          add({{{DType::f32, S({3, K})}}, w2}, g, "glu, three rows");
          add({{{DType::f32, S({20, K})}}, w2}, g, "glu, GEMM");
          add({{{DType::bf16, S({2, K})}}, w2}, g, "glu, bf16 x");
          Attrs gf = g;
          gf.set("out", DType::f32);
          add({{{DType::bf16, S({2, 9, K})}}, w2}, gf, "glu, bf16 x, f32 out, GEMM");
          add({{{DType::f32, S({2, 4096})}}, {{DType::u8, S({2 * N, *quant::row_bytes(t, 4096)})}, Fill::packed, i}},
              Attrs{{"type", a.s("type")}, {"n", N}, {"k", int64_t{4096}}, {"glu", std::string("silu")}}, "glu, two long rows");
          // norm_eps: x is rms_norm(x, g) first (the third input is g), alone or with glu
          Attrs nm = a;
          nm.set("norm_eps", 1e-6);
          add({{{DType::f32, S({1, K})}}, w, {{DType::f32, S({K})}}}, nm, "rms-normed x, one row");
          add({{{DType::f32, S({3, K})}}, w, {{DType::f32, S({K})}}}, nm, "rms-normed x, three rows");
          add({{{DType::f32, S({20, K})}}, w, {{DType::f32, S({K})}}}, nm, "rms-normed x, GEMM");
          add({{{DType::bf16, S({2, K})}}, w, {{DType::bf16, S({K})}}}, nm, "rms-normed bf16 x");
          Attrs ng = g;
          ng.set("norm_eps", 1e-5);
          add({{{DType::f32, S({1, K})}}, w2, {{DType::f32, S({K})}}}, ng, "rms-normed x, glu");
        }
        // long rows: the decode kernel splits each row over several warps
        int64_t KL = 4096;
        add({{{DType::f32, S({2, KL})}}, {{DType::u8, S({N, *quant::row_bytes(t, KL)})}, Fill::packed, i}}, Attrs{{"type", a.s("type")}, {"n", N}, {"k", KL}},
            "two long rows");
        // a block count the decode kernel's unrolled loop does not divide (its tail path)
        int64_t K2 = t == quant::BlockType::f16 || t == quant::BlockType::bf16 ? 528 : (quant::block_elems(t) == 32 ? 544 : 0);
        if (K2) {
          Attrs a2 = a;
          a2.set("k", K2);
          add({{{DType::f32, S({1, K2})}}, {{DType::u8, S({N, *quant::row_bytes(t, K2)})}, Fill::packed, i}}, a2, "one row, odd block count");
        }
        // 8-bit activations: integer kernels (Q8_0, Q4_K on VNNI) for few rows, the rounded x as
        // f32 for the rest
        Attrs q8 = a;
        q8.set("act", std::string("q8"));
        add({{{DType::f32, S({1, K})}}, w}, q8, "act=q8, one row");
        add({{{DType::f32, S({3, K})}}, w}, q8, "act=q8, three rows");
        add({{{DType::f32, S({8, K})}}, w}, q8, "act=q8, eight rows (one integer pass)");
        add({{{DType::f32, S({11, K})}}, w}, q8, "act=q8, eleven rows (8 + 3)");
        if (K2) {
          Attrs a2 = q8;
          a2.set("k", K2);
          add({{{DType::f32, S({5, K2})}}, {{DType::u8, S({N, *quant::row_bytes(t, K2)})}, Fill::packed, i}}, a2, "act=q8, five rows, odd block count");
        }
        add({{{DType::f32, S({20, K})}}, w}, q8, "act=q8, tiles + GEMM");
        add({{{DType::bf16, S({2, K})}}, w}, q8, "act=q8, bf16 x");
        if (t == quant::BlockType::q8_0 || t == quant::BlockType::q4_0 || t == quant::BlockType::q4_1 || t == quant::BlockType::iq4_nl ||
            t == quant::BlockType::q4_k || t == quant::BlockType::q5_k || t == quant::BlockType::q6_k ||
            t == quant::BlockType::iq4_xs || t == quant::BlockType::q3_k ||
            t == quant::BlockType::q2_k) {
          // a constant weight of whole groups of 16 rows: the cpu device's repacked layout
          Attrs c16 = q8;
          c16.set("n", int64_t{48});
          Operand wc{{DType::u8, S({48, rb})}, Fill::packed, i, true};
          for (int64_t m : {1, 8, 11, 37})
            add({{{DType::f32, S({m, K})}}, wc}, c16, cat("act=q8, constant weight in groups of 16, ", m, " rows"));
        }
      }
      break;
    case Op::cholesky:
    case Op::triangular_solve:
    case Op::lu:
    case Op::solve:
    case Op::inv:
    case Op::slogdet:
    case Op::qr:
    case Op::eigh:
    case Op::svd:
    case Op::matrix_exp:
    case Op::det:
    case Op::lstsq:
      return linalg_specs(op);
    case Op::csr_matmul:
    case Op::csr_solve:
    case Op::csr_row_ids:
      return sparse_specs(op);
    case Op::complex:
    case Op::real:
    case Op::imag:
    case Op::conj:
    case Op::angle:
    case Op::fft:
    case Op::rfft:
    case Op::irfft:
      return complex_specs(op);
    case Op::splat_project:
    case Op::splat_project_grad:
    case Op::splat_rasterize:
    case Op::splat_rasterize_grad:
      return splat_specs(op, rng);
    case Op::eig:
      for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        add({{{d, S({4, 4})}}});
        add({{{d, S({2, 3, 3})}}}, {}, "batch");
        if (d == DType::f64) add({{{d, S({1, 1})}}}, {}, "one by one");
      }
      break;
    default:
      return elementwise_specs(op);
  }
  return out;
}

}  // namespace

std::vector<OpCase> op_cases(Op op, uint32_t seed) {
  std::mt19937 rng(seed * 7919u + static_cast<uint32_t>(op));
  std::vector<OpCase> out;
  for (Spec& s : specs_for(op, rng)) {
    if (!valid(op, s)) continue;
    OpCase c;
    c.op = op;
    c.dtype = s.in.empty() ? (s.attrs.has("dtype") ? s.attrs.dtype("dtype") : s.attrs.tensor("value").dtype()) : s.in[0].type.dtype;
    if (op == Op::csr_matmul || op == Op::csr_solve) c.dtype = s.in[2].type.dtype;  // the values, not the indices
    if (op == Op::select) c.dtype = s.in[1].type.dtype;
    ops::Builder b(c.graph);
    c.graph.name = ir::op_name(op);
    std::vector<ir::ValueId> ins;
    std::string desc;
    for (size_t i = 0; i < s.in.size(); ++i) {
      desc += cat(i ? ", " : "", s.in[i].constant ? "const " : "", ir::type_str(s.in[i].type));
      Tensor t = make_input(s.in[i], rng, i == 0 && (rng() % 3 == 0));
      if (s.in[i].constant) {
        ins.push_back(b.constant(t.contiguous()));
        continue;
      }
      ins.push_back(c.graph.add_input(s.in[i].type, cat("in", i)));
      c.inputs.push_back(t);
    }
    auto outs = b.emit(op, ins, s.attrs);
    c.graph.set_outputs(outs);
    c.name = cat(ir::op_name(op), "(", desc, ")");
    for (const auto& [k, v] : c.graph.producer(outs[0])->attrs.items())
      if (k != "value") c.name += cat(" ", k, "=", ir::attr_to_text(v, ir::find_attr_spec(op, k)->type));
    if (op == Op::constant) c.name += cat(" ", dtype_name(c.dtype));
    // ops told to compute in a narrower type are judged by that type's tolerance
    c.tolerance_dtype = c.dtype;
    if (const ir::AttrValue* cv = s.attrs.find("compute")) c.tolerance_dtype = std::get<DType>(*cv);
    // a gated product multiplies two K-long sums: each one's rounding is scaled by the other
    // (|x·w| ≈ 20 here), which f32's relative tolerance on the small products does not cover;
    // and a 4096-long sum that cancels to a small result keeps an f32 rounding of the size of its
    // terms (GPU devices add in another order than the reference: up to 1.3× f32's tolerance)
    if (op == Op::dequant_matmul && (s.attrs.has("glu") || s.attrs.i("k") >= 4096) && c.tolerance_dtype == DType::f32)
      c.tolerance_dtype = DType::f16;
    out.push_back(std::move(c));
  }
  return out;
}

std::string compare_tensors(const Tensor& expected, const Tensor& got, DType compute_dtype) {
  if (expected.dtype() != got.dtype()) return cat("dtype ", dtype_name(got.dtype()), " instead of ", dtype_name(expected.dtype()));
  if (expected.shape() != got.shape()) return "shape differs";
  DType d = expected.dtype();
  double rtol = 0, atol = 0;
  DType tol_dtype = is_float(d) || is_complex(d) ? d : compute_dtype;
  if (is_float(compute_dtype) && is_float(d) && dtype_bits(compute_dtype) < dtype_bits(d)) tol_dtype = compute_dtype;
  switch (tol_dtype) {
    case DType::f64:
    case DType::c128: rtol = 1e-9; atol = 1e-10; break;
    case DType::f32:
    case DType::c64: rtol = 2e-4; atol = 2e-5; break;
    case DType::f16: rtol = 5e-3; atol = 2e-3; break;
    case DType::bf16: rtol = 3e-2; atol = 2e-2; break;
    default: break;
  }
  Tensor e = expected.contiguous(), g = got.contiguous();
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < e.numel(); ++i) {
    c128 a = load_c128(e.data(), d, i), b = load_c128(g.data(), d, i);
    bool nan_a = std::isnan(a.real()) || std::isnan(a.imag()), nan_b = std::isnan(b.real()) || std::isnan(b.imag());
    if (nan_a || nan_b) {
      if (nan_a != nan_b) return cat("element ", i, ": expected ", a.real(), ", got ", b.real());
      continue;
    }
    if (!is_float(d) && !is_complex(d)) {
      if (load_i64(e.data(), d, i) != load_i64(g.data(), d, i))
        return cat("element ", i, ": expected ", load_i64(e.data(), d, i), ", got ", load_i64(g.data(), d, i));
      continue;
    }
    if (std::isinf(a.real()) || std::isinf(b.real())) {
      if (a.real() != b.real()) return cat("element ", i, ": expected ", a.real(), ", got ", b.real());
      continue;
    }
    double err = std::abs(a - b), bound = atol + rtol * std::abs(a);
    if (err > bound && err / bound > worst) {
      worst = err / bound;
      worst_i = i;
    }
  }
  if (worst_i < 0) return "";
  c128 a = load_c128(e.data(), d, worst_i), b = load_c128(g.data(), d, worst_i);
  return cat("element ", worst_i, ": expected ", a.real(), ", got ", b.real(), " (", worst, "x the tolerance)");
}

}  // namespace rlx::testing
