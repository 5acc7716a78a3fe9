#include "science/splat/renderer.h"

#include <cmath>
#include <memory>

#include "rlx/error.h"
#include "rlx/graph.h"
#include "util/strings.h"

namespace rlx::science::splat {

Renderer::Renderer(const std::string& device, int64_t count, int sh_degree, const Camera& camera, const std::array<double, 3>& background)
    : model_(Session(device).compile(Graph(std::make_shared<ir::Graph>(render_graph(count, sh_degree, camera, background))))) {}

std::vector<Tensor> Renderer::render(const std::vector<Tensor>& scene, const Camera& view) const {
  if (scene.size() != 5) throw Error(ErrorKind::invalid_argument, cat("a scene is five tensors (means, log_scales, quats, opacity_logits, sh), got ", scene.size()));
  std::vector<Tensor> in = scene;
  in.push_back(viewmat_tensor(view));
  return model_.run(in);
}

double psnr(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.numel() == 0) throw Error(ErrorKind::invalid_argument, "psnr: the images differ in shape");
  double sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double d = a.at_f64(i) - b.at_f64(i);
    sum += d * d;
  }
  double mse = sum / static_cast<double>(a.numel());
  return mse > 0 ? 10 * std::log10(1 / mse) : INFINITY;
}

}  // namespace rlx::science::splat
