// rlx splat render | fit: 3D Gaussian splatting scenes (.ply in the 3DGS layout) rendered to PNG
// through a camera, and a scene fitted to views of a known synthetic one with a PSNR curve.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "json.h"
#include "models/splat_fit.h"
#include "plot.h"
#include "progress.h"
#include "rlx/error.h"
#include "science/splat/png.h"
#include "science/splat/renderer.h"
#include "util/strings.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

using namespace science::splat;

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::array<double, 3> parse_color(const std::string& text) { return parse_vec3(text, "--background"); }

std::pair<int64_t, int64_t> parse_size(const std::string& text) {
  auto x = text.find('x');
  try {
    if (x == std::string::npos) {
      int64_t s = std::stoll(text);
      return {s, s};
    }
    return {std::stoll(text.substr(0, x)), std::stoll(text.substr(x + 1))};
  } catch (const std::exception&) {
    throw Error(ErrorKind::invalid_argument, cat("--size must be WIDTHxHEIGHT or one number, got '", text, "'"));
  }
}

void save_image(const std::string& path, const Tensor& image) {
  Tensor c = image.contiguous();
  const auto& s = c.shape();
  write_png(path, static_cast<const float*>(c.data()), s[1], s[0], s.size() > 2 ? s[2] : 1);
}

// A camera that frames the scene: at 2.6× the RMS distance of the means from their centroid,
// in front of it (−z) and a little above, looking at the centroid.
Camera default_camera(const Scene& s, const Vec3& up, double fov, int64_t w, int64_t h) {
  Vec3 c{0, 0, 0};
  for (int64_t g = 0; g < s.count; ++g)
    for (size_t j = 0; j < 3; ++j) c[j] += s.means[static_cast<size_t>(g) * 3 + j] / static_cast<double>(s.count);
  double spread = 0;
  for (int64_t g = 0; g < s.count; ++g)
    for (size_t j = 0; j < 3; ++j) spread += std::pow(s.means[static_cast<size_t>(g) * 3 + j] - c[j], 2) / static_cast<double>(s.count);
  double d = 2.6 * std::max(std::sqrt(spread), 1e-3);
  Vec3 eye = {c[0] + 0.35 * d * up[0], c[1] + 0.35 * d * up[1], c[2] - d + 0.35 * d * up[2]};
  return look_at(eye, c, up, fov, w, h);
}

int splat_render(Args& args) {
  std::string device = args.value_or("device", "cpu");
  auto out = args.value("o");
  if (!out) out = args.value("output");
  auto eye = args.value("eye"), target = args.value("target"), camera_file = args.value("camera"), threads = args.value("threads");
  auto random = args.value("random");
  Vec3 up = parse_vec3(args.value_or("up", "0,1,0"), "--up");
  double fov = args.float_or("fov", 50);
  auto [w, h] = parse_size(args.value_or("size", "512x512"));
  int64_t view = args.int_or("view", 0);
  auto background = parse_color(args.value_or("background", "0,0,0"));
  auto alpha_out = args.value("alpha");
  bool json = args.flag("json");
  auto pos = args.positionals();
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  if (pos.size() != 1 && !random) throw Error(ErrorKind::invalid_argument, "usage: rlx splat render SCENE.ply [--eye x,y,z --target x,y,z | --camera cameras.json --view I] -o OUT.png");
  if (!out) throw Error(ErrorKind::invalid_argument, "rlx splat render needs -o OUT.png");
  Scene scene = random ? random_scene(std::stoll(*random), 1, 1.0, 7) : read_ply(pos[0]);
  Camera cam = camera_file ? camera_from_json(*camera_file, view)
               : eye      ? look_at(parse_vec3(*eye, "--eye"), target ? parse_vec3(*target, "--target") : Vec3{0, 0, 0}, up, fov, w, h)
                          : default_camera(scene, up, fov, w, h);
  auto t0 = std::chrono::steady_clock::now();
  Renderer renderer(device, scene.count, scene.sh_degree, cam, background);
  auto t1 = std::chrono::steady_clock::now();
  std::vector<Tensor> params = scene_tensors(scene);
  std::vector<Tensor> image = renderer.render(params, cam);
  auto t2 = std::chrono::steady_clock::now();
  save_image(*out, image[0]);
  if (alpha_out) save_image(*alpha_out, image[1]);
  double compile_ms = std::chrono::duration<double, std::milli>(t1 - t0).count(), render_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  if (json)
    std::printf("{\"scene\":%s,\"gaussians\":%lld,\"sh_degree\":%d,\"width\":%lld,\"height\":%lld,\"device\":%s,\"compile_ms\":%.3f,\"render_ms\":%.3f,\"output\":%s}\n",
                json_quote(random ? "random" : pos[0]).c_str(), static_cast<long long>(scene.count), scene.sh_degree, static_cast<long long>(cam.width),
                static_cast<long long>(cam.height), json_quote(device).c_str(), compile_ms, render_ms, json_quote(*out).c_str());
  else
    std::printf("%lld Gaussians (SH degree %d) → %s, %lldx%lld on %s: compiled in %.1f ms, rendered in %.1f ms\n", static_cast<long long>(scene.count),
                scene.sh_degree, out->c_str(), static_cast<long long>(cam.width), static_cast<long long>(cam.height), device.c_str(), compile_ms, render_ms);
  return 0;
}

int splat_fit(Args& args) {
  models::SplatFitOptions o;
  o.device = args.value_or("device", "cpu");
  o.gaussians = args.int_or("gaussians", o.gaussians);
  o.target_gaussians = args.int_or("target-gaussians", o.target_gaussians);
  o.views = static_cast<int>(args.int_or("views", o.views));
  o.size = args.int_or("size", o.size);
  o.steps = args.int_or("steps", o.steps);
  o.lr = args.float_or("lr", o.lr);
  o.sh_degree = static_cast<int>(args.int_or("sh-degree", o.sh_degree));
  o.eval_every = args.int_or("eval-every", o.eval_every);
  o.seed = static_cast<uint32_t>(args.int_or("seed", o.seed));
  o.background = parse_color(args.value_or("background", "0,0,0"));
  std::string dir = args.value_or("o", args.value_or("output", "splat_fit"));
  double min_psnr = args.float_or("min-psnr", -INFINITY);
  auto threads = args.value("threads");
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  std::filesystem::create_directories(dir);
  Progress bar("splat fit", o.steps, !json);
  auto r = models::fit_synthetic(o, [&](const models::SplatFitPoint& p) { bar.update(p.step, cat("PSNR ", fmt_fixed(p.psnr, 2), " dB")); });
  bar.finish();
  // the images: a target view, the start and the fit from it; the curve; both scenes
  Renderer target(o.device, r.target.count, o.sh_degree, r.cameras[0], o.background), fitted(o.device, r.fitted.count, o.sh_degree, r.cameras[0], o.background);
  save_image(dir + "/target.png", target.render(scene_tensors(r.target), r.cameras[0])[0]);
  save_image(dir + "/before.png", fitted.render(scene_tensors(r.initial), r.cameras[0])[0]);
  save_image(dir + "/after.png", fitted.render(scene_tensors(r.fitted), r.cameras[0])[0]);
  write_ply(dir + "/target.ply", r.target);
  write_ply(dir + "/fitted.ply", r.fitted);
  Series curve{"psnr db", {}, {}, 0x1f77b4};
  for (const auto& p : r.curve) curve.x.push_back(static_cast<double>(p.step)), curve.y.push_back(p.psnr);
  write_plot_png(dir + "/psnr.png", {Panel{cat("splat fit - ", o.gaussians, " gaussians to ", o.views, " images of ", o.size, "x", o.size), "step", {curve}}});
  const auto& last = r.curve.back();
  if (json) {
    std::vector<std::string> pts;
    for (const auto& p : r.curve)
      pts.push_back(cat("{\"step\":", p.step, ",\"psnr\":", fmt_fixed(p.psnr, 3), ",\"loss\":", std::isnan(p.loss) ? std::string("null") : fmt_fixed(p.loss, 6),
                        ",\"seconds\":", fmt_fixed(p.seconds, 3), "}"));
    std::printf("{\"device\":%s,\"gaussians\":%lld,\"target_gaussians\":%lld,\"views\":%d,\"size\":%lld,\"steps\":%lld,\"psnr\":%.3f,\"seconds\":%.3f,\"curve\":%s,\"output\":%s}\n",
                json_quote(o.device).c_str(), static_cast<long long>(o.gaussians), static_cast<long long>(o.target_gaussians), o.views,
                static_cast<long long>(o.size), static_cast<long long>(o.steps), last.psnr, last.seconds, json_array(pts).c_str(), json_quote(dir).c_str());
  } else {
    std::printf("splat fit on %s: %lld Gaussians to %d views of %lldx%lld (a random scene of %lld), %lld Adam steps in %.1f s\n", o.device.c_str(),
                static_cast<long long>(o.gaussians), o.views, static_cast<long long>(o.size), static_cast<long long>(o.size), static_cast<long long>(o.target_gaussians),
                static_cast<long long>(o.steps), last.seconds);
    std::printf("PSNR over the views: %.2f dB at the start → %.2f dB\nwrote %s/{target,before,after}.png, psnr.png, target.ply, fitted.ply\n", r.curve.front().psnr, last.psnr,
                dir.c_str());
  }
  if (last.psnr < min_psnr) {
    std::fprintf(stderr, "rlx splat fit: PSNR %.2f dB is below --min-psnr %.2f\n", last.psnr, min_psnr);
    return 3;
  }
  return 0;
}

}  // namespace

int cmd_splat(Args& args) {
  auto sub = args.subcommand();
  if (sub == "render") return splat_render(args);
  if (sub == "fit") return splat_fit(args);
  throw Error(ErrorKind::invalid_argument, "usage: rlx splat render SCENE.ply … -o OUT.png | rlx splat fit [-o DIR] … (rlx splat --help)");
}

}  // namespace rlx::cli
