#include "ops/weight_grid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rlx/error.h"
#include "util/half.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::ops {

namespace {

int64_t group_of(const WeightGrid& g, int64_t k) { return g.group > 0 ? g.group : k; }
double qmax(const WeightGrid& g) { return std::ldexp(1.0, g.bits - 1) - 1; }

}  // namespace

WeightGrid WeightGrid::parse(const std::string& text) {
  WeightGrid g;
  std::string t = text, group;
  if (t.size() > 5 && t.compare(t.size() - 5, 5, "/asym") == 0) g.asymmetric = true, t.resize(t.size() - 5);
  if (auto slash = t.find("/g"); slash != std::string::npos) group = t.substr(slash + 2), t = t.substr(0, slash);
  if (t == "int4") g.bits = 4;
  else if (t == "int8") g.bits = 8, g.group = 0;
  else
    throw Error(ErrorKind::invalid_argument,
                cat("unknown weight grid '", text, "' (int4 or int8, optionally /gN for groups of N and /asym for a grid from each group's min to its max: int4/g32, int8/g0 per channel, int4/g32/asym)"));
  if (g.asymmetric && g.bits != 4) throw Error(ErrorKind::invalid_argument, cat("weight grid '", text, "': asymmetric grids are 4-bit (ggml's Q4_1); int8 is symmetric"));
  if (!group.empty()) {
    char* end = nullptr;
    long long v = std::strtoll(group.c_str(), &end, 10);
    if (*end || v < 0 || v > (1 << 20)) throw Error(ErrorKind::invalid_argument, cat("weight grid '", text, "': the group must be 0 (per channel) or a size"));
    g.group = v;
  }
  return g;
}

std::string WeightGrid::str() const { return cat("int", bits, "/g", group, asymmetric ? "/asym" : ""); }

namespace {

// v rounded to f16 (in f32), its gradient passing straight through: v + (f16(v) − v) with the
// difference taken on a copy of v that carries no gradient. floor(v·2^47)·2^−47 is that copy —
// exact for every f32 of magnitude ≥ 2^−24 (multiples of 2^−47), and floor has no gradient.
ValueId f16_straight_through(Builder& b, ValueId v) {
  const double lift = std::ldexp(1.0, 47);
  ValueId detached = b.mul(b.unary(Op::floor, b.mul(v, b.scalar(DType::f32, lift))), b.scalar(DType::f32, 1 / lift));
  return b.add(v, b.sub(b.cast(b.cast(detached, DType::f16), DType::f32), detached));
}

// a scale of 0 (a group that is constant, or below f16's smallest scale): any scale represents
// it; 1 keeps the division finite
ValueId nonzero_scale(Builder& b, ValueId s16) { return b.select(b.binary(Op::eq, s16, b.scalar(DType::f32, 0)), b.scalar(DType::f32, 1), s16); }

float f16_round(float v, const WeightGrid& grid, int64_t r, int64_t gi, const char* what) {
  const float h = f16_to_f32(f32_to_f16(v));
  if (std::isinf(h))
    throw Error(ErrorKind::invalid_argument, cat("weight grid ", grid.str(), ": row ", r, " group ", gi, " needs ", what, " ", v, ", beyond what f16 can hold (65504)"));
  return h;
}

}  // namespace

ValueId fake_quant_weight(Builder& b, ValueId w, const WeightGrid& grid) {
  Shape shape = b.shape(w);
  std::vector<int64_t> dims = shape_values(shape);
  int64_t total = 1;
  for (int64_t v : dims) total *= v;
  const int64_t n = dims.empty() ? 0 : dims[0], k = n ? total / n : 0;
  if (dims.size() < 2 || n == 0) throw Error(ErrorKind::invalid_argument, cat("a weight grid needs a weight of rank ≥ 2, got ", shape_str(shape)));
  const int64_t g = group_of(grid, k), groups = (k + g - 1) / g, padded = groups * g;
  ValueId x = b.reshape(w, {Dim(n), Dim(k)});
  if (padded != k) x = b.emit1(Op::pad, {x}, Attrs{{"lo", Ints{0, 0}}, {"hi", Ints{0, padded - k}}});
  x = b.reshape(x, {Dim(n), Dim(groups), Dim(g)});
  DType d = b.dtype(w);
  if (grid.asymmetric) {
    // codes 0…15 from the group's min m to its max: w ≈ q·s + m, both s and m f16 (Q4_1)
    ValueId lo = b.cast(b.reduce(x, "min", {2}, true), DType::f32), hi = b.cast(b.reduce(x, "max", {2}, true), DType::f32);
    ValueId m = b.cast(f16_straight_through(b, lo), d);
    ValueId s = b.cast(nonzero_scale(b, f16_straight_through(b, b.div(b.sub(hi, lo), b.scalar(DType::f32, 15)))), d);
    x = b.add(b.emit1(Op::fake_quant, {b.sub(x, m), s, b.scalar(d, 0)}, Attrs{{"lo", int64_t{0}}, {"hi", int64_t{15}}}), m);
  } else {
    ValueId amax = b.reduce(b.unary(Op::abs, x), "max", {2}, true);
    ValueId s = b.cast(nonzero_scale(b, f16_straight_through(b, b.div(b.cast(amax, DType::f32), b.scalar(DType::f32, qmax(grid))))), d);
    x = b.emit1(Op::fake_quant, {x, s, b.scalar(d, 0)}, Attrs{{"lo", static_cast<int64_t>(-qmax(grid) - 1)}, {"hi", static_cast<int64_t>(qmax(grid))}});
  }
  x = b.reshape(x, {Dim(n), Dim(padded)});
  if (padded != k) x = b.slice_axis(x, 1, Dim(0), Dim(k));
  return b.reshape(x, shape);
}

GridCodes weight_grid_codes(const Tensor& w, const WeightGrid& grid) {
  Tensor c = w.contiguous();
  GridCodes out;
  out.n = c.rank() ? c.shape()[0] : 0;
  out.k = out.n ? c.numel() / out.n : 0;
  out.group = group_of(grid, out.k);
  out.groups = (out.k + out.group - 1) / out.group;
  out.codes.assign(static_cast<size_t>(out.n * out.groups * out.group), 0.0);
  out.scales.assign(static_cast<size_t>(out.n * out.groups), 1.0);
  if (grid.asymmetric) out.mins.assign(static_cast<size_t>(out.n * out.groups), 0.0);
  const float lo = grid.asymmetric ? 0.0f : static_cast<float>(-qmax(grid) - 1), hi = grid.asymmetric ? 15.0f : static_cast<float>(qmax(grid));
  auto at = [&](int64_t r, int64_t j) { return static_cast<float>(load_f64(c.data(), c.dtype(), r * out.k + j)); };
  // f32 throughout, as the graph form computes it
  for (int64_t r = 0; r < out.n; ++r)
    for (int64_t gi = 0; gi < out.groups; ++gi) {
      const int64_t first = gi * out.group, last = std::min(out.k, (gi + 1) * out.group);
      float s = 1, m = 0;
      if (grid.asymmetric) {
        // the zero padding of a partial last group counts, as in the graph form
        float mn = last - first < out.group ? 0.0f : at(r, first), mx = mn;
        for (int64_t j = first; j < last; ++j) mn = std::min(mn, at(r, j)), mx = std::max(mx, at(r, j));
        m = f16_round(mn, grid, r, gi, "a minimum");
        s = f16_round((mx - mn) / 15.0f, grid, r, gi, "a scale");
        out.mins[static_cast<size_t>(r * out.groups + gi)] = m;
      } else {
        float amax = 0;
        for (int64_t j = first; j < last; ++j) amax = std::max(amax, std::fabs(at(r, j)));
        s = f16_round(amax / static_cast<float>(qmax(grid)), grid, r, gi, "a scale");
      }
      if (s == 0) s = 1;
      out.scales[static_cast<size_t>(r * out.groups + gi)] = s;
      for (int64_t j = first; j < last; ++j)
        out.codes[static_cast<size_t>(r * out.groups * out.group + j)] = std::min(hi, std::max(lo, std::nearbyint((at(r, j) - m) / s)));
    }
  return out;
}

ValueId dequantized_weight(Builder& b, const GridCodes& c, const std::vector<int64_t>& shape) {
  ValueId q = b.constant(Tensor::from_f64(DType::i8, {c.n, c.groups, c.group}, c.codes));
  ValueId s = b.constant(Tensor::from_f64(DType::f32, {c.n, c.groups, 1}, c.scales));
  ValueId w = b.emit1(Op::dequantize_linear, {q, s, b.scalar(DType::i8, 0)});
  if (!c.mins.empty()) w = b.add(w, b.constant(Tensor::from_f64(DType::f32, {c.n, c.groups, 1}, c.mins)));
  w = b.reshape(w, {Dim(c.n), Dim(c.groups * c.group)});
  if (c.groups * c.group != c.k) w = b.slice_axis(w, 1, Dim(0), Dim(c.k));
  return b.reshape(w, shape_of(shape));
}

GridBlocks packed_grid_blocks(const GridCodes& c, int bits) {
  constexpr int64_t kBlock = 32;
  GridBlocks out;
  const bool asym = !c.mins.empty();
  if (bits != 4 && bits != 8) return out;
  if (c.groups != 1 && c.group % kBlock != 0) return out;  // a block would straddle two scales
  out.type = asym ? "q4_1" : bits == 4 ? "q4_0" : "q8_0";
  out.padded_k = (c.k + kBlock - 1) / kBlock * kBlock;
  const int64_t blocks = out.padded_k / kBlock, header = asym ? 4 : 2, block_bytes = header + (bits == 4 ? 16 : 32), row = blocks * block_bytes;
  out.bytes = Tensor::zeros(DType::u8, {c.n, row});
  uint8_t* dst = out.bytes.data_as<uint8_t>();
  for (int64_t r = 0; r < c.n; ++r)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      uint8_t* p = dst + r * row + blk * block_bytes;
      const int64_t first = blk * kBlock, g = std::min(first / c.group, c.groups - 1);
      const uint16_t d = f32_to_f16(static_cast<float>(c.scales[static_cast<size_t>(r * c.groups + g)]));
      std::memcpy(p, &d, 2);
      if (asym) {
        const uint16_t m = f32_to_f16(static_cast<float>(c.mins[static_cast<size_t>(r * c.groups + g)]));
        std::memcpy(p + 2, &m, 2);
      }
      // codes past the row (the padding of a per-channel grid's last block) are 0
      auto code = [&](int64_t j) {
        const int64_t col = first + j;
        return col < c.groups * c.group ? static_cast<int>(c.codes[static_cast<size_t>(r * c.groups * c.group + col)]) : 0;
      };
      uint8_t* q = p + header;
      if (bits == 8) {
        for (int64_t j = 0; j < kBlock; ++j) q[j] = static_cast<uint8_t>(static_cast<int8_t>(code(j)));
      } else {  // element j in qs[j]'s low nibble, j + 16 in its high one; Q4_0 stores code + 8
        const int offset = asym ? 0 : 8;
        for (int64_t j = 0; j < kBlock / 2; ++j) q[j] = static_cast<uint8_t>((code(j) + offset) | ((code(j + kBlock / 2) + offset) << 4));
      }
    }
  return out;
}

ValueId packed_grid_product(Builder& b, ValueId x, ValueId blocks, const GridBlocks& w, int64_t n) {
  const Shape xs = b.shape(x);
  const int64_t k = xs.back().value();
  if (w.padded_k != k) {
    Ints lo(xs.size(), 0), hi(xs.size(), 0);
    hi.back() = w.padded_k - k;
    x = b.emit1(Op::pad, {x}, Attrs{{"lo", lo}, {"hi", hi}});
  }
  return b.emit1(Op::dequant_matmul, {x, blocks}, Attrs{{"type", w.type}, {"n", n}, {"k", w.padded_k}});
}

}  // namespace rlx::ops
