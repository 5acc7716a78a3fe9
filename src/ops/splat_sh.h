// The real spherical-harmonic basis of 3D Gaussian splatting (degrees 0–3, the 16 functions in
// the order the .ply files store their coefficients): splat_project's meaning (src/ops/splat.cpp),
// the reference backend's independent loop and the devices' kernels all read it. Host and
// device code (util/host_device.h).
#pragma once
#include <type_traits>

#include "util/host_device.h"

namespace rlx::splat_sh {

// The K = (d+1)² basis values at the unit direction (x, y, z): out(k, value) for k < k_count.
// T is a float type, or a graph value with arithmetic operators (whose constants are doubles).
template <class T, class Out>
RLX_HD_FN void basis(const T& x, const T& y, const T& z, int k_count, Out&& out) {
  using C = std::conditional_t<std::is_floating_point_v<T>, T, double>;
  out(0, x * C(0) + C(0.28209479177387814));
  if (k_count <= 1) return;
  const C c1 = C(0.4886025119029199);
  out(1, y * -c1);
  out(2, z * c1);
  out(3, x * -c1);
  if (k_count <= 4) return;
  T xx = x * x, yy = y * y, zz = z * z, xy = x * y, yz = y * z, xz = x * z;
  out(4, xy * C(1.0925484305920792));
  out(5, yz * C(-1.0925484305920792));
  out(6, (zz * C(2) - xx - yy) * C(0.31539156525252005));
  out(7, xz * C(-1.0925484305920792));
  out(8, (xx - yy) * C(0.5462742152960396));
  if (k_count <= 9) return;
  out(9, y * (xx * C(3) - yy) * C(-0.5900435899266435));
  out(10, xy * z * C(2.890611442640554));
  out(11, y * (zz * C(4) - xx - yy) * C(-0.4570457994644658));
  out(12, z * (zz * C(2) - xx * C(3) - yy * C(3)) * C(0.3731763325901154));
  out(13, x * (zz * C(4) - xx - yy) * C(-0.4570457994644658));
  out(14, z * (xx - yy) * C(1.445305721320277));
  out(15, x * (xx - yy * C(3)) * C(-0.5900435899266435));
}

}  // namespace rlx::splat_sh
