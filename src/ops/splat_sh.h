// The real spherical-harmonic basis of 3D Gaussian splatting (degrees 0–3, the 16 functions in
// the order the .ply files store their coefficients) as constants: splat_project's meaning
// (src/ops/splat.cpp) and the reference backend's independent loop both read them.
#pragma once

namespace rlx::splat_sh {

inline constexpr double kC0 = 0.28209479177387814;
inline constexpr double kC1 = 0.4886025119029199;
inline constexpr double kC2[5] = {1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396};
inline constexpr double kC3[7] = {-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
                                  -0.4570457994644658, 1.445305721320277,  -0.5900435899266435};

// The K = (d+1)² basis values at the unit direction (x, y, z), for any arithmetic type T
// (doubles, or graph values with operators).
template <class T, class Out>
void basis(const T& x, const T& y, const T& z, int k_count, Out&& out) {
  out(0, T(x * 0.0 + kC0));
  if (k_count <= 1) return;
  out(1, y * -kC1);
  out(2, z * kC1);
  out(3, x * -kC1);
  if (k_count <= 4) return;
  T xx = x * x, yy = y * y, zz = z * z, xy = x * y, yz = y * z, xz = x * z;
  out(4, xy * kC2[0]);
  out(5, yz * kC2[1]);
  out(6, (zz * 2.0 - xx - yy) * kC2[2]);
  out(7, xz * kC2[3]);
  out(8, (xx - yy) * kC2[4]);
  if (k_count <= 9) return;
  out(9, y * (xx * 3.0 - yy) * kC3[0]);
  out(10, xy * z * kC3[1]);
  out(11, y * (zz * 4.0 - xx - yy) * kC3[2]);
  out(12, z * (zz * 2.0 - xx * 3.0 - yy * 3.0) * kC3[3]);
  out(13, x * (zz * 4.0 - xx - yy) * kC3[4]);
  out(14, z * (xx - yy) * kC3[5]);
  out(15, x * (xx - yy * 3.0) * kC3[6]);
}

}  // namespace rlx::splat_sh
