#include "ops/weight_grid.h"

#include <cmath>

#include "rlx/error.h"
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
  if (auto slash = t.find("/g"); slash != std::string::npos) group = t.substr(slash + 2), t = t.substr(0, slash);
  if (t == "int4") g.bits = 4;
  else if (t == "int8") g.bits = 8, g.group = 0;
  else throw Error(ErrorKind::invalid_argument, cat("unknown weight grid '", text, "' (int4 or int8, optionally /gN for groups of N: int4/g32, int8/g0 per channel)"));
  if (!group.empty()) {
    char* end = nullptr;
    long long v = std::strtoll(group.c_str(), &end, 10);
    if (*end || v < 0 || v > (1 << 20)) throw Error(ErrorKind::invalid_argument, cat("weight grid '", text, "': the group must be 0 (per channel) or a size"));
    g.group = v;
  }
  return g;
}

std::string WeightGrid::str() const { return cat("int", bits, "/g", group); }

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
  ValueId amax = b.reduce(b.unary(Op::abs, x), "max", {2}, true);
  DType d = b.dtype(w);
  // an all-zero group: any scale represents it; 1 keeps the division finite
  ValueId s = b.div(amax, b.scalar(d, qmax(grid)));
  s = b.select(b.binary(Op::eq, amax, b.scalar(d, 0)), b.scalar(d, 1), s);
  x = b.emit1(Op::fake_quant, {x, s, b.scalar(d, 0)}, Attrs{{"lo", static_cast<int64_t>(-qmax(grid) - 1)}, {"hi", static_cast<int64_t>(qmax(grid))}});
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
  const float lo = static_cast<float>(-qmax(grid) - 1), hi = static_cast<float>(qmax(grid));
  for (int64_t r = 0; r < out.n; ++r)
    for (int64_t gi = 0; gi < out.groups; ++gi) {
      float amax = 0;
      for (int64_t j = gi * out.group; j < std::min(out.k, (gi + 1) * out.group); ++j)
        amax = std::max(amax, std::fabs(static_cast<float>(load_f64(c.data(), c.dtype(), r * out.k + j))));
      // f32 throughout, as the graph form computes it
      const float s = amax == 0 ? 1.0f : amax / static_cast<float>(qmax(grid));
      out.scales[static_cast<size_t>(r * out.groups + gi)] = s;
      for (int64_t j = gi * out.group; j < std::min(out.k, (gi + 1) * out.group); ++j) {
        float q = std::nearbyint(static_cast<float>(load_f64(c.data(), c.dtype(), r * out.k + j)) / s);
        out.codes[static_cast<size_t>(r * out.groups * out.group + j)] = std::min(hi, std::max(lo, q));
      }
    }
  return out;
}

ValueId dequantized_weight(Builder& b, const GridCodes& c, const std::vector<int64_t>& shape) {
  ValueId q = b.constant(Tensor::from_f64(DType::i8, {c.n, c.groups, c.group}, c.codes));
  ValueId s = b.constant(Tensor::from_f64(DType::f32, {c.n, c.groups, 1}, c.scales));
  ValueId w = b.emit1(Op::dequantize_linear, {q, s, b.scalar(DType::i8, 0)});
  w = b.reshape(w, {Dim(c.n), Dim(c.groups * c.group)});
  if (c.groups * c.group != c.k) w = b.slice_axis(w, 1, Dim(0), Dim(c.k));
  return b.reshape(w, shape_of(shape));
}

}  // namespace rlx::ops
