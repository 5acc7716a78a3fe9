#include "models/splat_fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "ops/builder.h"
#include "rlx/error.h"
#include "science/splat/render_graph.h"
#include "science/splat/renderer.h"
#include "train/trainer.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

using namespace science::splat;

// Adam moves every parameter by about the learning rate a step. Each group is stored divided by
// its multiplier and multiplied back in the graph, so one learning rate gives each group its own
// step (what 3DGS's per-group rates do): positions and rotations slowly, opacities fast.
constexpr std::array<double, 5> kMultiplier = {0.1, 0.5, 0.1, 5.0, 0.25};  // means, log_scales, quats, opacity_logits, sh
constexpr std::array<const char*, 5> kNames = {"means", "log_scales", "quats", "opacity_logits", "sh"};

std::vector<Tensor> scaled(const std::vector<Tensor>& params, bool to_raw) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor t = params[i].contiguous().clone();
    float* p = static_cast<float*>(t.data());
    float k = static_cast<float>(to_raw ? 1 / kMultiplier[i] : kMultiplier[i]);
    for (int64_t j = 0; j < t.numel(); ++j) p[j] *= k;
    out.push_back(t);
  }
  return out;
}

// forward: inputs = [the five raw parameter groups, viewmat, target image], output = mean |image − target|.
ir::Graph loss_graph(int64_t count, int sh_degree, const Camera& camera, const std::array<double, 3>& background) {
  ir::Graph g;
  g.name = "splat_fit";
  ops::Builder b(g);
  Dim n(count), k((sh_degree + 1) * (sh_degree + 1));
  std::vector<Shape> shapes = {{n, Dim(3)}, {n, Dim(3)}, {n, Dim(4)}, {n}, {n, k, Dim(3)}};
  std::vector<ir::ValueId> v;
  for (size_t i = 0; i < 5; ++i) {
    ir::ValueId raw = g.add_input({DType::f32, shapes[i]}, kNames[i]);
    v.push_back(b.mul(raw, b.scalar(DType::f32, kMultiplier[i])));
  }
  ir::ValueId view = g.add_input({DType::f32, {Dim(4), Dim(4)}}, "viewmat");
  ir::ValueId target = g.add_input({DType::f32, {Dim(camera.height), Dim(camera.width), Dim(3)}}, "target");
  auto [image, alpha] = emit_render(b, {v[0], v[1], v[2], v[3], v[4]}, view, camera, background);
  (void)alpha;
  ir::ValueId err = b.unary(ir::Op::abs, b.sub(image, target));
  ir::ValueId loss = b.div(b.reduce(err, "sum", {0, 1, 2}, false), b.scalar(DType::f32, static_cast<double>(camera.height * camera.width * 3)));
  g.set_outputs({loss});
  return g;
}

}  // namespace

SplatFitResult fit_synthetic(const SplatFitOptions& o, const std::function<void(const SplatFitPoint&)>& progress) {
  if (o.target_gaussians < 1 || o.gaussians < 1 || o.views < 1 || o.steps < 0 || o.eval_every < 1)
    throw Error(ErrorKind::invalid_argument, "splat fit needs at least one Gaussian, view and evaluation interval");
  if (o.sh_degree < 0 || o.sh_degree > 3) throw Error(ErrorKind::invalid_argument, cat("the SH degree must be 0 to 3, got ", o.sh_degree));
  const double extent = 1.0;
  SplatFitResult r;
  r.target = random_scene(o.target_gaussians, o.sh_degree, extent, o.seed);
  r.cameras = orbit({0, 0, 0}, 3.2 * extent, 1.2 * extent, o.views, 45, o.size, o.size);
  // the start: random positions, small grey faint Gaussians
  r.initial = random_scene(o.gaussians, o.sh_degree, extent, o.seed + 1);
  std::fill(r.initial.sh.begin(), r.initial.sh.end(), 0.f);
  std::fill(r.initial.opacity_logits.begin(), r.initial.opacity_logits.end(), -2.f);
  Renderer target_renderer(o.device, r.target.count, o.sh_degree, r.cameras[0], o.background);
  Renderer renderer(o.device, r.initial.count, o.sh_degree, r.cameras[0], o.background);
  std::vector<Tensor> targets, views;
  std::vector<Tensor> target_params = scene_tensors(r.target);
  for (const Camera& c : r.cameras) {
    targets.push_back(target_renderer.render(target_params, c)[0]);
    views.push_back(viewmat_tensor(c));
  }
  std::vector<train::NamedTensor> params;
  std::vector<Tensor> raw = scaled(scene_tensors(r.initial), true);
  for (size_t i = 0; i < 5; ++i) params.push_back({kNames[i], raw[i]});
  train::OptimizerConfig adam;
  adam.kind = "adam";
  adam.eps = 1e-15;  // 3DGS's: gradients of faint Gaussians are tiny
  train::Trainer trainer(o.device, loss_graph(r.initial.count, o.sh_degree, r.cameras[0], o.background), params, adam);
  auto start = std::chrono::steady_clock::now();
  auto current = [&] {
    std::vector<Tensor> t;
    for (const auto& p : trainer.params()) t.push_back(p.tensor);
    return scaled(t, false);
  };
  auto evaluate = [&](int64_t step, double loss) {
    std::vector<Tensor> scene = current();
    double sum = 0;
    for (size_t v = 0; v < r.cameras.size(); ++v) sum += psnr(renderer.render(scene, r.cameras[v])[0], targets[v]);
    SplatFitPoint p{step, loss, sum / static_cast<double>(r.cameras.size()),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
    r.curve.push_back(p);
    if (progress) progress(p);
  };
  evaluate(0, NAN);
  std::mt19937 rng(o.seed);
  std::vector<size_t> order(r.cameras.size());
  double loss = NAN;
  for (int64_t step = 1; step <= o.steps; ++step) {
    size_t slot = static_cast<size_t>((step - 1) % static_cast<int64_t>(order.size()));
    if (slot == 0) {
      std::iota(order.begin(), order.end(), size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
    }
    size_t v = order[slot];
    double lr = o.lr * std::pow(0.1, static_cast<double>(step) / static_cast<double>(std::max<int64_t>(o.steps, 1)));
    loss = trainer.step({views[v], targets[v]}, lr);
    if (step % o.eval_every == 0 || step == o.steps) evaluate(step, loss);
  }
  r.fitted = scene_from_tensors(current(), o.sh_degree);
  return r;
}

}  // namespace rlx::models
