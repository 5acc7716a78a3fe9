// Which pixels a projected Gaussian can touch, as the rasterizers bin it (cpu and cuda share
// this; host and device code): the pixels within its radius on both axes — splat_rasterize's
// definition — cut to the bounding box of the ellipse where its exponent stays below ln(255·o),
// outside which α < 1/255 and no pixel takes it.
#pragma once
#include <math.h>

#include <cstdint>

#include "util/host_device.h"

namespace rlx::splat_bin {

// Inclusive pixel bounds; empty when x0 > x1 or y0 > y1.
struct Box {
  int32_t x0 = 0, x1 = -1, y0 = 0, y1 = -1;
  RLX_HD_FN bool empty() const { return x0 > x1 || y0 > y1; }
};

// The first and last pixel index in [0, size) with |i + ½ − centre| ≤ r (lo > hi when none).
// `exact`: settle the rounding of the bounds by that test itself — not needed when the centre is
// an f32 and r an integer or a bound with a margin (the bounds are then exact in doubles).
RLX_HD_FN void covered(double centre, double r, int64_t size, bool exact, int32_t& lo_out, int32_t& hi_out) {
  double lo_f = ceil(centre - r - 0.5), hi_f = floor(centre + r - 0.5);
  lo_out = 0, hi_out = -1;
  if (!(lo_f <= hi_f) || hi_f < 0 || lo_f > static_cast<double>(size - 1)) return;
  int64_t lo = lo_f > 0 ? static_cast<int64_t>(lo_f) : 0, hi = hi_f < static_cast<double>(size - 1) ? static_cast<int64_t>(hi_f) : size - 1;
  if (exact) {
    auto inside = [&](int64_t i) { return fabs(static_cast<double>(i) + 0.5 - centre) <= r; };
    while (lo > 0 && inside(lo - 1)) --lo;
    while (lo <= hi && !inside(lo)) ++lo;
    while (hi + 1 < size && inside(hi + 1)) ++hi;
    while (hi >= lo && !inside(hi)) --hi;
  }
  lo_out = static_cast<int32_t>(lo), hi_out = static_cast<int32_t>(hi);
}

// The box of a Gaussian with mean (cx, cy), radius r > 0, conic (ca, cb, cc) and opacity o in a
// width × height image.
RLX_HD_FN Box box_of(double cx, double cy, double r, double ca, double cb, double cc, double opacity, int64_t width, int64_t height, bool exact) {
  Box b;
  covered(cx, r, width, exact, b.x0, b.x1);
  covered(cy, r, height, exact, b.y0, b.y1);
  double limit = log(255.0 * opacity), det = ca * cc - cb * cb;
  if (!(ca > 0 && cc > 0 && det > 0)) return b;  // not a footprint the projection makes: the radius box alone
  if (!(limit > 0)) return Box{};
  // a hair wider than the ellipse's bounding box, for rounding
  double ex = sqrt(2 * limit * cc / det) * (1 + 1e-3) + 1e-2, ey = sqrt(2 * limit * ca / det) * (1 + 1e-3) + 1e-2;
  Box e;
  covered(cx, ex, width, false, e.x0, e.x1);
  covered(cy, ey, height, false, e.y0, e.y1);
  b.x0 = b.x0 > e.x0 ? b.x0 : e.x0, b.x1 = b.x1 < e.x1 ? b.x1 : e.x1;
  b.y0 = b.y0 > e.y0 ? b.y0 : e.y0, b.y1 = b.y1 < e.y1 ? b.y1 : e.y1;
  return b;
}

}  // namespace rlx::splat_bin
