// rlx bench splat: milliseconds of a Gaussian-splatting render of a random scene (seeded) — the
// forward graph (activations, projection, rasterization) with its image copied out, the same
// forward to the training loss (nothing but a number leaves the device), and the graph with its
// reverse mode (a training step: the gradients of every parameter and the camera pose against a
// random image cotangent, applied by SGD with a zero learning rate). The backward is the step
// less the forward to the loss.
// The scene's footprint is reported beside the times (visible Gaussians, mean radius in
// pixels, Gaussian-tile pairs), since a rasterizer's cost follows it.
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "science/splat/render_graph.h"
#include "train/trainer.h"
#include "util/strings.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

using namespace science::splat;

struct Footprint {
  int64_t visible = 0, pairs = 0;
  double mean_radius = 0;
};

// The projection alone, for the radii: how many Gaussians are seen, how large, and how many
// 16×16 tiles they touch together.
Footprint footprint(const std::string& device, const Scene& s, const Camera& cam) {
  ir::Graph g;
  ops::Builder b(g);
  std::vector<Tensor> p = scene_tensors(s);
  std::vector<ir::ValueId> in;
  for (const auto& t : p) in.push_back(g.add_input({t.dtype(), shape_of(t.shape())}, "p"));
  ir::ValueId view = g.add_input({DType::f32, {Dim(4), Dim(4)}}, "viewmat");
  ir::Attrs a{{"fx", cam.fx}, {"fy", cam.fy}, {"cx", cam.cx}, {"cy", cam.cy}, {"width", cam.width}, {"height", cam.height}};
  auto out = b.emit(ir::Op::splat_project, {in[0], in[2], b.unary(ir::Op::exp, in[1]), in[4], view}, a);
  g.set_outputs({out[0], out[4]});
  p.push_back(viewmat_tensor(cam));
  auto r = Session(device).compile(Graph(std::make_shared<ir::Graph>(g))).run(p);
  Footprint f;
  for (int64_t i = 0; i < s.count; ++i) {
    double radius = r[1].at_f64(i);
    if (radius <= 0) continue;
    ++f.visible;
    f.mean_radius += radius;
    double x = r[0].at_f64(2 * i), y = r[0].at_f64(2 * i + 1);
    auto tiles = [](double c, double rad, int64_t size) {
      int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(c - rad - 0.5))), hi = std::min<int64_t>(size - 1, static_cast<int64_t>(std::floor(c + rad - 0.5)));
      return hi < lo ? int64_t{0} : hi / 16 - lo / 16 + 1;
    };
    f.pairs += tiles(x, radius, cam.width) * tiles(y, radius, cam.height);
  }
  if (f.visible) f.mean_radius /= static_cast<double>(f.visible);
  return f;
}

}  // namespace

int bench_splat(Args& args) {
  std::string device = args.value_or("device", "cpu");
  int64_t n = args.int_or("gaussians", 100000);
  std::string size = args.value_or("size", "512x512");
  double scale = args.float_or("scale", 0.2);
  int degree = static_cast<int>(args.int_or("sh-degree", 3));
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  auto x = size.find('x');
  if (x == std::string::npos) throw Error(ErrorKind::invalid_argument, cat("--size must be WIDTHxHEIGHT, got '", size, "'"));
  int64_t w = std::stoll(size.substr(0, x)), h = std::stoll(size.substr(x + 1));
  if (n < 1 || !(scale > 0)) throw Error(ErrorKind::invalid_argument, "--gaussians and --scale must be positive");
  Scene s = random_scene(n, degree, 1.0, 11);
  for (auto& v : s.log_scales) v += static_cast<float>(std::log(scale));  // smaller Gaussians, as in fitted scenes
  Camera cam = look_at({0.4, 0.9, -3.2}, {0, 0, 0}, {0, 1, 0}, 45, w, h);
  Footprint f = footprint(device, s, cam);

  // forward: the image alone (a renderer's output)
  ir::Graph fwd = render_graph(n, degree, cam, {0, 0, 0});
  fwd.set_outputs({fwd.outputs()[0]});
  // forward + backward: one training step with every parameter and the pose trainable, loss =
  // Σ image · c for a fixed random c, SGD with learning rate 0 (the scene stays as it is). The
  // parameters, gradients and optimizer state stay on the device; only the loss comes back.
  ir::Graph lg = fwd;
  {
    ops::Builder b(lg);
    std::mt19937 rng(3);
    std::normal_distribution<double> normal;
    std::vector<double> c(static_cast<size_t>(w * h * 3));
    for (auto& v : c) v = normal(rng);
    ir::ValueId weights = b.constant(Tensor::from_f64(DType::f32, {h, w, 3}, c));
    lg.set_outputs({b.reduce(b.mul(lg.outputs()[0], weights), "sum", {0, 1, 2}, false)});
  }
  std::vector<Tensor> in = scene_tensors(s);
  in.push_back(viewmat_tensor(cam));
  std::vector<train::NamedTensor> params;
  for (size_t i = 0; i < in.size(); ++i) params.push_back({cat("p", i), in[i]});
  train::OptimizerConfig sgd;
  train::Trainer trainer(device, lg, params, sgd);
  CompiledModel fm = Session(device).compile(Graph(std::make_shared<ir::Graph>(fwd)));
  // on a GPU the scene stays in device memory (as a renderer keeps it): runs copy only the image out
  bool resident = true;
  for (const Tensor& t : in) resident = fm.keep_on_device(t) && resident;
  Timing tf = time_runs([&] { fm.run(in); }, timing);
  CompiledModel lm = Session(device).compile(Graph(std::make_shared<ir::Graph>(lg)));
  for (const Tensor& t : in) lm.keep_on_device(t);
  Timing tl = time_runs([&] { lm.run(in); }, timing);
  double loss = 0;
  Timing tg = time_runs([&] { loss = trainer.step({}, 0.0); }, timing);
  if (!std::isfinite(loss) || loss == 0) throw Error(ErrorKind::runtime, cat("rlx bench splat: the training step's loss is ", loss));
  // and the gradient itself is not zero: one step of SGD moves the means
  trainer.step({}, 1e-3);
  Tensor moved = trainer.params()[0].tensor;
  double change = 0;
  for (int64_t i = 0; i < moved.numel(); ++i) change += std::fabs(moved.at_f64(i) - in[0].at_f64(i));
  if (!(change > 0) || !std::isfinite(change)) throw Error(ErrorKind::runtime, "rlx bench splat: a training step did not move the means (a zero or non-finite gradient)");
  // the rasterizer's transient memory: boxes, counts and offsets per Gaussian, keys and ids per
  // Gaussian-tile pair (twice, for the sort), ranges per tile
  double tiles = std::ceil(w / 16.0) * std::ceil(h / 16.0);
  double bin_mb = (static_cast<double>(n) * 24 + static_cast<double>(f.pairs) * 24 + tiles * 8) / 1048576;
  double scene_mb = 0;
  for (const Tensor& t : in) scene_mb += static_cast<double>(t.nbytes()) / 1048576;
  if (json) {
    std::printf("{\"workload\":\"splat\",\"device\":%s,\"threads\":%d,\"gaussians\":%lld,\"width\":%lld,\"height\":%lld,\"sh_degree\":%d,\"visible\":%lld,"
                "\"mean_radius\":%.2f,\"tile_pairs\":%lld,\"scene_mb\":%.1f,\"bins_mb\":%.1f,\"scene_on_device\":%s,\"forward_ms\":%.3f,\"forward_loss_ms\":%.3f,\"forward_backward_ms\":%.3f,\"backward_ms\":%.3f}\n",
                json_quote(device).c_str(), num_threads(), static_cast<long long>(n), static_cast<long long>(w), static_cast<long long>(h), degree,
                static_cast<long long>(f.visible), f.mean_radius, static_cast<long long>(f.pairs), scene_mb, bin_mb, json_bool(resident && device != "cpu").c_str(), tf.p50, tl.p50,
                tg.p50, tg.p50 - tl.p50);
    return 0;
  }
  std::printf("splat: %lld Gaussians (SH degree %d), %lldx%lld on %s, %d threads\n", static_cast<long long>(n), degree, static_cast<long long>(w),
              static_cast<long long>(h), device.c_str(), num_threads());
  std::printf("  footprint: %lld visible, mean radius %.1f px, %lld Gaussian-tile pairs (16x16 tiles)\n", static_cast<long long>(f.visible), f.mean_radius,
              static_cast<long long>(f.pairs));
  std::printf("  memory: the scene %.1f MiB%s, the rasterizer's bins %.1f MiB while it runs\n", scene_mb, resident && device != "cpu" ? " (kept on the device)" : "", bin_mb);
  std::printf("  forward (image out) p50 %9.3f ms  p90 %9.3f ms\n", tf.p50, tf.p90);
  std::printf("  forward to the loss p50 %9.3f ms  p90 %9.3f ms\n", tl.p50, tl.p90);
  std::printf("  forward + backward  p50 %9.3f ms  p90 %9.3f ms  (backward = step - forward to the loss: %.3f ms)\n", tg.p50, tg.p90, tg.p50 - tl.p50);
  return 0;
}

}  // namespace rlx::cli
