// A Gaussian-splatting scene as the original 3DGS code stores it in .ply files: per Gaussian a
// mean, log scales, a rotation quaternion (w, x, y, z, not normalized), an opacity logit and
// spherical-harmonic colour coefficients (degree 0–3). Activations (exp, sigmoid, normalize) are
// applied where the scene is rendered (render_graph.h), so fitting works on these raw values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::science::splat {

struct Scene {
  int64_t count = 0;
  int sh_degree = 0;             // 0 … 3
  std::vector<float> means;      // [N, 3]
  std::vector<float> log_scales; // [N, 3]
  std::vector<float> quats;      // [N, 4] w, x, y, z
  std::vector<float> opacity_logits;  // [N]
  std::vector<float> sh;         // [N, K, 3], K = (degree + 1)², coefficient-major per Gaussian
  int64_t sh_coeffs() const { return (sh_degree + 1) * (sh_degree + 1); }
  // Throws rlx::Error when the arrays' sizes disagree with count and sh_degree.
  void check() const;
};

// Reads the standard 3DGS vertex layout (x y z, f_dc_0..2, f_rest_*, opacity, scale_0..2,
// rot_0..3 as float, in any order, other properties skipped) from binary little-endian or ASCII
// .ply. Throws rlx::Error(format) naming the file and what is wrong.
Scene read_ply(const std::string& path);
// Writes binary little-endian .ply in that layout (with the nx ny nz zeros 3DGS writes), which
// the published viewers read.
void write_ply(const std::string& path, const Scene& s);

// A random scene of n Gaussians in the box [-extent, extent]³ (seeded): what tests and the
// fitting demo render.
Scene random_scene(int64_t n, int sh_degree, double extent, uint32_t seed);

}  // namespace rlx::science::splat
