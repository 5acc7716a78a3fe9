// A compiled render of scenes of one size through cameras of one image size: the graph of
// render_graph.h compiled once for a device, then run for any parameters and pose.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "rlx/session.h"
#include "science/splat/render_graph.h"

namespace rlx::science::splat {

class Renderer {
 public:
  Renderer(const std::string& device, int64_t count, int sh_degree, const Camera& camera, const std::array<double, 3>& background);
  // (image [H, W, 3], alpha [H, W]) of the parameters (scene_tensors order) seen from `view`'s
  // pose (its intrinsics must be the constructor camera's).
  std::vector<Tensor> render(const std::vector<Tensor>& scene, const Camera& view) const;

 private:
  CompiledModel model_;
};

// 10·log10(1 / mean squared error) of two images of values in [0, 1].
double psnr(const Tensor& a, const Tensor& b);

}  // namespace rlx::science::splat
