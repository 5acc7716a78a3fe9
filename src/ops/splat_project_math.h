// One Gaussian of splat_project, as the native kernels compute it (cpu and cuda share this;
// the reference backend keeps its own loop with explicit matrices as the oracle, and the op's
// meaning is the decomposition in src/ops/splat.cpp). Host and device code.
#pragma once
#include <math.h>

#include <cstdint>

#include "ops/splat_sh.h"
#include "util/host_device.h"

namespace rlx::splat_math {

template <class T>
struct Camera {
  T r[3][3], t[3], eye[3];  // world → camera rotation and translation; the centre −Rᵀ t
  T fx, fy, cx, cy, near, eps2d, width, height, lim_x, lim_y;
};

template <class T>
RLX_HD_FN T max2(T a, T b) { return a > b ? a : b; }
template <class T>
RLX_HD_FN T clamp2(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }

// One Gaussian's way to its 2D footprint, every intermediate kept: project_one reads the results,
// the gradient (splat_project_grad_math.h) walks the same values back.
template <class T>
struct Footprint {
  T pc[3];                                    // the mean in camera space, R p + t
  T qn, w, x, y, z;                           // |q| and the unit quaternion
  T rot[3][3], m[3][3], rm[3][3], cov[3][3];  // Q(q/|q|), M = Q·diag(s), R M, R Σ Rᵀ = (R M)(R M)ᵀ
  T zc, ax, ay, tx, ty;                       // max(z, near), x/z and y/z, and both clamped to the view
  T j00, j02, j11, j12;                       // the perspective Jacobian at the mean
  T ca, cb, cc, det, radius, u, v;            // the 2D covariance (with eps2d), its determinant, radius and centre
  bool visible;
};

template <class T>
RLX_HD_FN Footprint<T> footprint_of(const Camera<T>& cam, const T* p, const T* q, const T* s) {
  Footprint<T> f;
  for (int i = 0; i < 3; ++i) f.pc[i] = cam.r[i][0] * p[0] + cam.r[i][1] * p[1] + cam.r[i][2] * p[2] + cam.t[i];
  f.qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  T w = f.w = q[0] / f.qn, x = f.x = q[1] / f.qn, y = f.y = q[2] / f.qn, z = f.z = q[3] / f.qn;
  T rot[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                 {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                 {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) f.rot[i][j] = rot[i][j], f.m[i][j] = rot[i][j] * s[j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) f.rm[i][j] = cam.r[i][0] * f.m[0][j] + cam.r[i][1] * f.m[1][j] + cam.r[i][2] * f.m[2][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) f.cov[i][j] = f.rm[i][0] * f.rm[j][0] + f.rm[i][1] * f.rm[j][1] + f.rm[i][2] * f.rm[j][2];
  const T(&cov)[3][3] = f.cov;
  f.zc = max2(f.pc[2], cam.near);
  f.ax = f.pc[0] / f.zc, f.ay = f.pc[1] / f.zc;
  f.tx = clamp2(f.ax, -cam.lim_x, cam.lim_x), f.ty = clamp2(f.ay, -cam.lim_y, cam.lim_y);
  T j00 = f.j00 = cam.fx / f.zc, j02 = f.j02 = -cam.fx * f.tx / f.zc, j11 = f.j11 = cam.fy / f.zc, j12 = f.j12 = -cam.fy * f.ty / f.zc;
  f.ca = j00 * j00 * cov[0][0] + 2 * j00 * j02 * cov[0][2] + j02 * j02 * cov[2][2] + cam.eps2d;
  f.cb = j00 * j11 * cov[0][1] + j00 * j12 * cov[0][2] + j02 * j11 * cov[1][2] + j02 * j12 * cov[2][2];
  f.cc = j11 * j11 * cov[1][1] + 2 * j11 * j12 * cov[1][2] + j12 * j12 * cov[2][2] + cam.eps2d;
  f.det = f.ca * f.cc - f.cb * f.cb;
  T mid = T(0.5) * (f.ca + f.cc);
  f.radius = ceil(3 * sqrt(mid + sqrt(max2(T(0.1), mid * mid - f.det))));
  f.u = cam.fx * f.ax + cam.cx, f.v = cam.fy * f.ay + cam.cy;
  f.visible = f.pc[2] >= cam.near && f.u + f.radius >= 0 && f.u - f.radius <= cam.width && f.v + f.radius >= 0 && f.v - f.radius <= cam.height;
  return f;
}

// Gaussian g of means [N,3], quats [N,4], scales [N,3], sh [N,K,C] into means2d [N,2],
// conics [N,3], colors [N,C], depths [N], radii [N].
template <class T>
RLX_HD_FN void project_one(const Camera<T>& cam, int64_t g, const T* means, const T* quats, const T* scales, const T* sh, int k_count,
                           int64_t channels, T* m2, T* conic, T* color, T* depth, int32_t* radii) {
  const T* p = means + g * 3;
  Footprint<T> f = footprint_of(cam, p, quats + g * 4, scales + g * 3);
  bool visible = f.visible;
  m2[g * 2] = visible ? f.u : T(0), m2[g * 2 + 1] = visible ? f.v : T(0);
  conic[g * 3] = visible ? f.cc / f.det : T(0), conic[g * 3 + 1] = visible ? -f.cb / f.det : T(0), conic[g * 3 + 2] = visible ? f.ca / f.det : T(0);
  depth[g] = f.pc[2];
  radii[g] = visible ? static_cast<int32_t>(f.radius) : 0;
  T d[3] = {p[0] - cam.eye[0], p[1] - cam.eye[1], p[2] - cam.eye[2]};
  T len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  // channels kBlock at a time, each basis function used where splat_sh::basis hands it out (its
  // index a constant there: no run-time-indexed array, which a GPU keeps in local memory)
  const T* coeff = sh + g * k_count * channels;
  constexpr int kBlock = 4;
  for (int64_t c0 = 0; c0 < channels; c0 += kBlock) {
    T sum[kBlock];
    for (int c = 0; c < kBlock; ++c) sum[c] = T(0.5);
    splat_sh::basis(d[0] / len, d[1] / len, d[2] / len, k_count, [&](int k, T b) {
      for (int c = 0; c < kBlock; ++c)
        if (c0 + c < channels) sum[c] += b * coeff[k * channels + c0 + c];
    });
    for (int c = 0; c < kBlock; ++c)
      if (c0 + c < channels) color[g * channels + c0 + c] = max2(sum[c], T(0));
  }
}

// A pinhole camera's intrinsics and the op's cut-offs (splat_project's attributes).
template <class T>
struct Intrinsics {
  T fx, fy, cx, cy, near, eps2d, width, height;
};

// The camera of the intrinsics and a viewmat (row-major 4×4, in the caller's memory space).
template <class T>
RLX_HD_FN Camera<T> make_camera(const Intrinsics<T>& k, const T* view) {
  Camera<T> c;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) c.r[i][j] = view[i * 4 + j];
    c.t[i] = view[i * 4 + 3];
  }
  for (int j = 0; j < 3; ++j) c.eye[j] = -(c.r[0][j] * c.t[0] + c.r[1][j] * c.t[1] + c.r[2][j] * c.t[2]);
  c.fx = k.fx, c.fy = k.fy, c.cx = k.cx, c.cy = k.cy, c.near = k.near, c.eps2d = k.eps2d, c.width = k.width, c.height = k.height;
  c.lim_x = T(1.3) * T(0.5) * c.width / c.fx, c.lim_y = T(1.3) * T(0.5) * c.height / c.fy;
  return c;
}

template <class T, class Attrs>
Intrinsics<T> intrinsics_of(const Attrs& at) {
  return {static_cast<T>(at.f("fx")),   static_cast<T>(at.f("fy")),    static_cast<T>(at.f("cx")),    static_cast<T>(at.f("cy")),
          static_cast<T>(at.f("near")), static_cast<T>(at.f("eps2d")), static_cast<T>(at.i("width")), static_cast<T>(at.i("height"))};
}

}  // namespace rlx::splat_math
