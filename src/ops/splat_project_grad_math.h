// One Gaussian of splat_project_grad, derived by hand (cpu and cuda share this; the op's meaning
// is autodiff of splat_project's decomposition, which test_backend_ops holds this against).
// The forward arithmetic is splat_math::project_one's, recomputed; the reverse runs the same
// steps backwards: the 2D covariance's inverse, the perspective Jacobian, R Σ Rᵀ = (R M)(R M)ᵀ
// with M = Q(q/|q|)·diag(s), the camera transform, and the SH colour along the view direction
// (the basis differentiated by forward-mode duals through splat_sh::basis itself). Host and
// device code.
#pragma once
#include "ops/splat_project_math.h"

namespace rlx::splat_math {

// A value and its partial derivatives along x, y and z: enough to push splat_sh::basis
// forward and read off each function's gradient.
template <class T>
struct Dual3 {
  T v, d[3];
};
template <class T>
RLX_HD_FN Dual3<T> operator+(const Dual3<T>& a, const Dual3<T>& b) { return {a.v + b.v, {a.d[0] + b.d[0], a.d[1] + b.d[1], a.d[2] + b.d[2]}}; }
template <class T>
RLX_HD_FN Dual3<T> operator-(const Dual3<T>& a, const Dual3<T>& b) { return {a.v - b.v, {a.d[0] - b.d[0], a.d[1] - b.d[1], a.d[2] - b.d[2]}}; }
template <class T>
RLX_HD_FN Dual3<T> operator*(const Dual3<T>& a, const Dual3<T>& b) {
  return {a.v * b.v, {a.d[0] * b.v + a.v * b.d[0], a.d[1] * b.v + a.v * b.d[1], a.d[2] * b.v + a.v * b.d[2]}};
}
template <class T>
RLX_HD_FN Dual3<T> operator*(const Dual3<T>& a, double c) {
  T k = static_cast<T>(c);
  return {a.v * k, {a.d[0] * k, a.d[1] * k, a.d[2] * k}};
}
template <class T>
RLX_HD_FN Dual3<T> operator+(const Dual3<T>& a, double c) { return {a.v + static_cast<T>(c), {a.d[0], a.d[1], a.d[2]}}; }

constexpr int kChannelBlock = 4;

// Gaussian g's output cotangents (cot_m2 [N,2], cot_conic [N,3], cot_color [N,C], cot_depth
// [N]) into its rows of g_means, g_quats, g_scales and g_sh (written), and its part of the
// viewmat's gradient, added into view[12] (rows 0–2 of the row-major 4×4; row 3 gets none).
template <class T>
RLX_HD_FN void project_grad_one(const Camera<T>& cam, int64_t g, const T* means, const T* quats, const T* scales, const T* sh, int k_count,
                                int64_t channels, const T* cot_m2, const T* cot_conic, const T* cot_color, const T* cot_depth, T* g_means,
                                T* g_quats, T* g_scales, T* g_sh, T* view) {
  // ---- the forward's intermediates, as project_one has them
  const T* p = means + g * 3;
  const T* s = scales + g * 3;
  const Footprint<T> f = footprint_of(cam, p, quats + g * 4, s);
  const T(&pc)[3] = f.pc;
  const T(&rot)[3][3] = f.rot;
  const T(&m)[3][3] = f.m;
  const T(&rm)[3][3] = f.rm;
  const T(&cov)[3][3] = f.cov;
  T w = f.w, x = f.x, y = f.y, z = f.z, qn = f.qn, zc = f.zc, ax = f.ax, ay = f.ay, tx = f.tx, ty = f.ty;
  T j00 = f.j00, j02 = f.j02, j11 = f.j11, j12 = f.j12, ca = f.ca, cb = f.cb, cc = f.cc, det = f.det;
  bool visible = f.visible;

  // ---- the 2D footprint: means2d and conics, for a Gaussian that was not culled
  T g_pc[3] = {T(0), T(0), cot_depth[g]};
  T g_rm[3][3] = {};
  if (visible) {
    T gu = cot_m2[g * 2], gv = cot_m2[g * 2 + 1];
    T g_a = cot_conic[g * 3], g_b = cot_conic[g * 3 + 1], g_c = cot_conic[g * 3 + 2];
    // conics = (cc, −cb, ca) / det
    T id = 1 / det, id2 = id * id;
    T g_ca = -g_a * cc * cc * id2 + g_b * cb * cc * id2 - g_c * cb * cb * id2;
    T g_cb = 2 * g_a * cb * cc * id2 - g_b * (id + 2 * cb * cb * id2) + 2 * g_c * ca * cb * id2;
    T g_cc = -g_a * cb * cb * id2 + g_b * cb * ca * id2 - g_c * ca * ca * id2;
    // the upper entries of the 3D covariance the three sums read
    T g00 = g_ca * j00 * j00, g02 = g_ca * 2 * j00 * j02 + g_cb * j00 * j12, g22 = g_ca * j02 * j02 + g_cb * j02 * j12 + g_cc * j12 * j12;
    T g01 = g_cb * j00 * j11, g12 = g_cb * j02 * j11 + g_cc * 2 * j11 * j12, g11 = g_cc * j11 * j11;
    T g_j00 = g_ca * (2 * j00 * cov[0][0] + 2 * j02 * cov[0][2]) + g_cb * (j11 * cov[0][1] + j12 * cov[0][2]);
    T g_j02 = g_ca * (2 * j00 * cov[0][2] + 2 * j02 * cov[2][2]) + g_cb * (j11 * cov[1][2] + j12 * cov[2][2]);
    T g_j11 = g_cb * (j00 * cov[0][1] + j02 * cov[1][2]) + g_cc * (2 * j11 * cov[1][1] + 2 * j12 * cov[1][2]);
    T g_j12 = g_cb * (j00 * cov[0][2] + j02 * cov[2][2]) + g_cc * (2 * j11 * cov[1][2] + 2 * j12 * cov[2][2]);
    T zz = zc * zc;
    T g_zc = (-cam.fx * g_j00 - cam.fy * g_j11 + cam.fx * tx * g_j02 + cam.fy * ty * g_j12) / zz;
    // tx, ty pass their gradient where the clamp let them through (ties included)
    T g_ax = ax >= -cam.lim_x && ax <= cam.lim_x ? -cam.fx * g_j02 / zc : T(0);
    T g_ay = ay >= -cam.lim_y && ay <= cam.lim_y ? -cam.fy * g_j12 / zc : T(0);
    g_ax += gu * cam.fx, g_ay += gv * cam.fy;
    g_pc[0] += g_ax / zc, g_pc[1] += g_ay / zc;
    g_zc -= (g_ax * pc[0] + g_ay * pc[1]) / zz;
    if (pc[2] >= cam.near) g_pc[2] += g_zc;
    // cov = rm rmᵀ over its upper entries: ḡrm = G rm with G symmetric, 2ḡ on the diagonal
    T gs[3][3] = {{2 * g00, g01, g02}, {g01, 2 * g11, g12}, {g02, g12, 2 * g22}};
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) g_rm[i][k] = gs[i][0] * rm[0][k] + gs[i][1] * rm[1][k] + gs[i][2] * rm[2][k];
  }
  // rm = R m: into R, then m = rot · diag(s) into the scales and the rotation
  T g_r[3][3], g_t[3];
  T g_rot[3][3], g_s[3] = {T(0), T(0), T(0)};
  for (int i = 0; i < 3; ++i)
    for (int l = 0; l < 3; ++l) g_r[i][l] = g_rm[i][0] * m[l][0] + g_rm[i][1] * m[l][1] + g_rm[i][2] * m[l][2];
  for (int l = 0; l < 3; ++l)
    for (int k = 0; k < 3; ++k) {
      T g_m = cam.r[0][l] * g_rm[0][k] + cam.r[1][l] * g_rm[1][k] + cam.r[2][l] * g_rm[2][k];
      g_rot[l][k] = g_m * s[k];
      g_s[k] += g_m * rot[l][k];
    }
  // the rotation of the unit quaternion, then the normalization
  T gw = 2 * (-z * g_rot[0][1] + y * g_rot[0][2] + z * g_rot[1][0] - x * g_rot[1][2] - y * g_rot[2][0] + x * g_rot[2][1]);
  T gx = 2 * (y * g_rot[0][1] + z * g_rot[0][2] + y * g_rot[1][0] - 2 * x * g_rot[1][1] - w * g_rot[1][2] + z * g_rot[2][0] + w * g_rot[2][1] -
              2 * x * g_rot[2][2]);
  T gy = 2 * (-2 * y * g_rot[0][0] + x * g_rot[0][1] + w * g_rot[0][2] + x * g_rot[1][0] + z * g_rot[1][2] - w * g_rot[2][0] + z * g_rot[2][1] -
              2 * y * g_rot[2][2]);
  T gz = 2 * (-2 * z * g_rot[0][0] - w * g_rot[0][1] + x * g_rot[0][2] + w * g_rot[1][0] - 2 * z * g_rot[1][1] + y * g_rot[1][2] + x * g_rot[2][0] +
              y * g_rot[2][1]);
  T dotq = w * gw + x * gx + y * gy + z * gz;
  T* gq = g_quats + g * 4;
  gq[0] = (gw - w * dotq) / qn, gq[1] = (gx - x * dotq) / qn, gq[2] = (gy - y * dotq) / qn, gq[3] = (gz - z * dotq) / qn;
  for (int k = 0; k < 3; ++k) g_scales[g * 3 + k] = g_s[k];

  // ---- the colour: max(0.5 + Σ_k basis_k(dir/|dir|)·sh_k, 0), dir = p − eye = p + Rᵀ t
  T d[3] = {p[0] - cam.eye[0], p[1] - cam.eye[1], p[2] - cam.eye[2]};
  T len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  T n[3] = {d[0] / len, d[1] / len, d[2] / len};
  Dual3<T> dx{n[0], {T(1), T(0), T(0)}}, dy{n[1], {T(0), T(1), T(0)}}, dz{n[2], {T(0), T(0), T(1)}};
  const T* coeff = sh + g * k_count * channels;
  T* g_coeff = g_sh + g * k_count * channels;
  T g_n[3] = {T(0), T(0), T(0)};
  // Channels kChannelBlock at a time, each basis function used as splat_sh::basis hands it out
  // (its index a constant there): no array of 16 values indexed at run time, which a GPU
  // would keep in local memory. First the sums, then their gradient.
  for (int64_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
    T g_sum[kChannelBlock];
    for (int c = 0; c < kChannelBlock; ++c) g_sum[c] = T(0.5);
    splat_sh::basis(n[0], n[1], n[2], k_count, [&](int k, T b) {
      for (int c = 0; c < kChannelBlock; ++c)
        if (c0 + c < channels) g_sum[c] += b * coeff[k * channels + c0 + c];
    });
    for (int c = 0; c < kChannelBlock; ++c) g_sum[c] = c0 + c < channels && g_sum[c] >= 0 ? cot_color[g * channels + c0 + c] : T(0);
    splat_sh::basis(dx, dy, dz, k_count, [&](int k, const Dual3<T>& b) {
      T g_basis = T(0);
      for (int c = 0; c < kChannelBlock; ++c)
        if (c0 + c < channels) {
          g_coeff[k * channels + c0 + c] = g_sum[c] * b.v;
          g_basis += g_sum[c] * coeff[k * channels + c0 + c];
        }
      for (int a = 0; a < 3; ++a) g_n[a] += g_basis * b.d[a];
    });
  }
  T dotn = n[0] * g_n[0] + n[1] * g_n[1] + n[2] * g_n[2];
  T g_dir[3];
  for (int a = 0; a < 3; ++a) g_dir[a] = (g_n[a] - n[a] * dotn) / len;

  // ---- the camera transform: pc = R p + t, dir = p + Rᵀ t
  for (int j = 0; j < 3; ++j) g_means[g * 3 + j] = cam.r[0][j] * g_pc[0] + cam.r[1][j] * g_pc[1] + cam.r[2][j] * g_pc[2] + g_dir[j];
  for (int i = 0; i < 3; ++i) {
    g_t[i] = g_pc[i] + cam.r[i][0] * g_dir[0] + cam.r[i][1] * g_dir[1] + cam.r[i][2] * g_dir[2];
    for (int j = 0; j < 3; ++j) g_r[i][j] += g_pc[i] * p[j] + cam.t[i] * g_dir[j];
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) view[i * 4 + j] += g_r[i][j];
    view[i * 4 + 3] += g_t[i];
  }
}

}  // namespace rlx::splat_math
