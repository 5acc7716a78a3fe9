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

// Gaussian g of means [N,3], quats [N,4], scales [N,3], sh [N,K,C] into means2d [N,2],
// conics [N,3], colors [N,C], depths [N], radii [N].
template <class T>
RLX_HD_FN void project_one(const Camera<T>& cam, int64_t g, const T* means, const T* quats, const T* scales, const T* sh, int k_count,
                           int64_t channels, T* m2, T* conic, T* color, T* depth, int32_t* radii) {
  const T* p = means + g * 3;
  T pc[3];
  for (int i = 0; i < 3; ++i) pc[i] = cam.r[i][0] * p[0] + cam.r[i][1] * p[1] + cam.r[i][2] * p[2] + cam.t[i];
  const T* q = quats + g * 4;
  T qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  T w = q[0] / qn, x = q[1] / qn, y = q[2] / qn, z = q[3] / qn;
  const T* s = scales + g * 3;
  // M = Q S (the rotation's columns scaled); R Σ Rᵀ = (R M)(R M)ᵀ
  T m[3][3] = {{(1 - 2 * (y * y + z * z)) * s[0], 2 * (x * y - w * z) * s[1], 2 * (x * z + w * y) * s[2]},
               {2 * (x * y + w * z) * s[0], (1 - 2 * (x * x + z * z)) * s[1], 2 * (y * z - w * x) * s[2]},
               {2 * (x * z - w * y) * s[0], 2 * (y * z + w * x) * s[1], (1 - 2 * (x * x + y * y)) * s[2]}};
  T rm[3][3], cov[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) rm[i][j] = cam.r[i][0] * m[0][j] + cam.r[i][1] * m[1][j] + cam.r[i][2] * m[2][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) cov[i][j] = rm[i][0] * rm[j][0] + rm[i][1] * rm[j][1] + rm[i][2] * rm[j][2];
  T zc = max2(pc[2], cam.near);
  T tx = clamp2(pc[0] / zc, -cam.lim_x, cam.lim_x), ty = clamp2(pc[1] / zc, -cam.lim_y, cam.lim_y);
  T j00 = cam.fx / zc, j02 = -cam.fx * tx / zc, j11 = cam.fy / zc, j12 = -cam.fy * ty / zc;
  T ca = j00 * j00 * cov[0][0] + 2 * j00 * j02 * cov[0][2] + j02 * j02 * cov[2][2] + cam.eps2d;
  T cb = j00 * j11 * cov[0][1] + j00 * j12 * cov[0][2] + j02 * j11 * cov[1][2] + j02 * j12 * cov[2][2];
  T cc = j11 * j11 * cov[1][1] + 2 * j11 * j12 * cov[1][2] + j12 * j12 * cov[2][2] + cam.eps2d;
  T det = ca * cc - cb * cb, mid = T(0.5) * (ca + cc);
  T radius = ceil(3 * sqrt(mid + sqrt(max2(T(0.1), mid * mid - det))));
  T u = cam.fx * pc[0] / zc + cam.cx, v = cam.fy * pc[1] / zc + cam.cy;
  bool visible = pc[2] >= cam.near && u + radius >= 0 && u - radius <= cam.width && v + radius >= 0 && v - radius <= cam.height;
  m2[g * 2] = visible ? u : T(0), m2[g * 2 + 1] = visible ? v : T(0);
  conic[g * 3] = visible ? cc / det : T(0), conic[g * 3 + 1] = visible ? -cb / det : T(0), conic[g * 3 + 2] = visible ? ca / det : T(0);
  depth[g] = pc[2];
  radii[g] = visible ? static_cast<int32_t>(radius) : 0;
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
