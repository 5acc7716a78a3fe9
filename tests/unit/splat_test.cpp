// Gaussian splatting beyond the per-op cases of test_backend_ops: .ply scenes read back what was
// written and malformed ones are refused by name; a camera puts its target at the image centre;
// a whole scene renders alike on cpu and reference (depth order: a near opaque Gaussian hides a
// far one); the camera pose's gradient matches finite differences; and fitting improves a scene.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "models/splat_fit.h"
#include "ops/builder.h"
#include "passes/autodiff.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "science/splat/png.h"
#include "science/splat/renderer.h"

using namespace rlx;
using namespace rlx::science::splat;

namespace {

std::string temp_path(const std::string& name) { return (std::filesystem::temp_directory_path() / ("rlx_splat_" + name)).string(); }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SplatPly, RoundTripsEveryField) {
  Scene s = random_scene(37, 3, 1.5, 4);
  std::string path = temp_path("round.ply");
  write_ply(path, s);
  Scene r = read_ply(path);
  EXPECT_EQ(r.count, 37);
  EXPECT_EQ(r.sh_degree, 3);
  EXPECT_EQ(r.means, s.means);
  EXPECT_EQ(r.log_scales, s.log_scales);
  EXPECT_EQ(r.quats, s.quats);
  EXPECT_EQ(r.opacity_logits, s.opacity_logits);
  EXPECT_EQ(r.sh, s.sh);
  std::remove(path.c_str());
}

TEST(SplatPly, ReadsAsciiWithPropertiesInAnyOrderAndDoubles) {
  std::string path = temp_path("ascii.ply");
  write_text(path,
             "ply\nformat ascii 1.0\ncomment made by hand\nelement vertex 2\nproperty double opacity\nproperty float rot_0\nproperty float rot_1\n"
             "property float rot_2\nproperty float rot_3\nproperty float z\nproperty float y\nproperty float x\nproperty uchar red\n"
             "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n"
             "element face 0\nproperty list uchar int vertex_indices\nend_header\n"
             "0.5 1 0 0 0 3 2 1 255 -1 -2 -3 0.1 0.2 0.3\n-0.5 0 1 0 0 6 5 4 0 -4 -5 -6 0.4 0.5 0.6\n");
  Scene s = read_ply(path);
  ASSERT_EQ(s.count, 2);
  EXPECT_EQ(s.sh_degree, 0);
  EXPECT_EQ(s.means, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(s.log_scales, (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  EXPECT_EQ(s.opacity_logits, (std::vector<float>{0.5f, -0.5f}));
  EXPECT_EQ(s.quats[5], 1.f);
  EXPECT_FLOAT_EQ(s.sh[4], 0.5f);
  std::remove(path.c_str());
}

TEST(SplatPly, MalformedFilesAreNamed) {
  std::string path = temp_path("bad.ply");
  std::string header = "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\n";
  for (const char* p : {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"})
    header += std::string("property float ") + p + "\n";
  write_text(path, header + "end_header\n" + std::string(64, '\0'));
  EXPECT_NE(error_of([&] { read_ply(path); }).find("truncated"), std::string::npos);  // no billion-vertex allocation
  write_text(path, "ply\nformat binary_big_endian 1.0\nelement vertex 0\nend_header\n");
  EXPECT_NE(error_of([&] { read_ply(path); }).find("binary_big_endian"), std::string::npos);
  write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n1\n");
  EXPECT_NE(error_of([&] { read_ply(path); }).find("no property y"), std::string::npos);
  write_text(path, "solid cube\n");
  EXPECT_NE(error_of([&] { read_ply(path); }).find("not a .ply"), std::string::npos);
  write_text(path, "ply\nformat ascii 1.0\nelement vertex 1\n");
  EXPECT_NE(error_of([&] { read_ply(path); }).find("end_header"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(error_of([&] { read_ply(temp_path("missing.ply")); }).find("cannot open"), std::string::npos);
}

TEST(SplatCamera, TargetLandsAtTheImageCentreAndUpIsUp) {
  Camera c = look_at({1, 2, -4}, {0.5, 0.2, 0.3}, {0, 1, 0}, 60, 200, 100);
  auto project = [&](std::array<double, 3> p) {
    double q[3];
    for (int i = 0; i < 3; ++i) q[i] = c.viewmat[i * 4] * p[0] + c.viewmat[i * 4 + 1] * p[1] + c.viewmat[i * 4 + 2] * p[2] + c.viewmat[i * 4 + 3];
    return std::array<double, 3>{c.fx * q[0] / q[2] + c.cx, c.fy * q[1] / q[2] + c.cy, q[2]};
  };
  auto t = project({0.5, 0.2, 0.3});
  EXPECT_NEAR(t[0], 100, 1e-9);
  EXPECT_NEAR(t[1], 50, 1e-9);
  EXPECT_GT(t[2], 0);
  EXPECT_LT(project({0.5, 1.2, 0.3})[1], 50);  // higher in the world: higher in the image (smaller y)
  EXPECT_NE(error_of([] { look_at({0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 60, 8, 8); }).find("eye is on its target"), std::string::npos);
  EXPECT_NE(error_of([] { look_at({0, 0, 0}, {0, 1, 0}, {0, 1, 0}, 60, 8, 8); }).find("up vector"), std::string::npos);
}

TEST(SplatRender, CpuMatchesReferenceOnAWholeScene) {
  Scene s = random_scene(300, 2, 1.0, 9);
  Camera cam = look_at({0.3, 0.8, -3}, {0, 0, 0}, {0, 1, 0}, 50, 72, 40);
  std::vector<Tensor> in = scene_tensors(s);
  auto cpu = Renderer("cpu", s.count, s.sh_degree, cam, {0.1, 0.2, 0.3}).render(in, cam);
  auto ref = Renderer("reference", s.count, s.sh_degree, cam, {0.1, 0.2, 0.3}).render(in, cam);
  double worst = 0, energy = 0;
  for (int64_t i = 0; i < ref[0].numel(); ++i) {
    worst = std::max(worst, std::fabs(cpu[0].at_f64(i) - ref[0].at_f64(i)));
    energy += ref[0].at_f64(i);
  }
  EXPECT_LT(worst, 2e-4);
  EXPECT_GT(energy / static_cast<double>(ref[0].numel()), 0.15);  // the scene is in view, not a blank image
}

TEST(SplatRender, NearerOpaqueGaussianHidesFartherOne) {
  // two Gaussians on the optical axis: red at depth 2 (listed second), blue at depth 4
  Scene s;
  s.count = 2, s.sh_degree = 0;
  s.means = {0, 0, 4, 0, 0, 2};
  s.log_scales = std::vector<float>(6, std::log(0.3f));
  s.quats = {1, 0, 0, 0, 1, 0, 0, 0};
  s.opacity_logits = {8, 8};  // sigmoid ≈ 0.9997: α clamps at 0.99
  const float c0 = 0.28209479f;
  s.sh = {-0.5f / c0, -0.5f / c0, 0.5f / c0, 0.5f / c0, -0.5f / c0, -0.5f / c0};  // blue, then red
  Camera cam = look_at({0, 0, 0}, {0, 0, 1}, {0, 1, 0}, 40, 32, 32);
  for (const char* device : {"cpu", "reference"}) {
    auto img = Renderer(device, 2, 0, cam, {0, 0, 0}).render(scene_tensors(s), cam);
    int64_t centre = (16 * 32 + 16) * 3;
    EXPECT_GT(img[0].at_f64(centre), 0.97) << device;      // red
    EXPECT_LT(img[0].at_f64(centre + 2), 0.011) << device;  // blue: behind, 1% of it shows at most
    EXPECT_GT(img[1].at_f64(16 * 32 + 16), 0.98) << device;
  }
}

TEST(SplatGradient, CpuMatchesReferenceForEveryParameterAndThePose) {
  // the gradient of a whole render (projection, rasterization, activations) with respect to
  // every parameter and the view matrix, f32 on the cpu against the reference backend (which
  // computes in f64): the op-level gradient checks against finite differences are in GradCheck
  Scene s = random_scene(80, 1, 1.0, 21);
  Camera cam = look_at({0.2, 0.5, -3}, {0, 0, 0}, {0, 1, 0}, 50, 48, 40);
  ir::Graph g = render_graph(s.count, s.sh_degree, cam, {0, 0, 0});
  {
    ops::Builder b(g);
    std::vector<double> w(48 * 40 * 3);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37 * static_cast<double>(i));
    ir::ValueId weights = b.constant(Tensor::from_f64(DType::f32, {40, 48, 3}, w));
    g.set_outputs({b.reduce(b.mul(g.outputs()[0], weights), "sum", {0, 1, 2}, false)});
  }
  ir::Graph gg = passes::value_and_grad(g, 0, g.inputs());
  std::vector<Tensor> in = scene_tensors(s);
  in.push_back(viewmat_tensor(cam));
  auto cpu = Session("cpu").compile(Graph(std::make_shared<ir::Graph>(gg))).run(in);
  auto ref = Session("reference").compile(Graph(std::make_shared<ir::Graph>(gg))).run(in);
  const char* names[] = {"loss", "means", "log_scales", "quats", "opacity_logits", "sh", "viewmat"};
  for (size_t k = 0; k < ref.size(); ++k) {
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < ref[k].numel(); ++i) {
      diff += std::pow(cpu[k].at_f64(i) - ref[k].at_f64(i), 2);
      norm += std::pow(ref[k].at_f64(i), 2);
    }
    EXPECT_GT(norm, 0) << names[k];
    EXPECT_LT(std::sqrt(diff / norm), 1e-4) << names[k];
  }
}

TEST(SplatFit, ImprovesTheSceneAndWritesPng) {
  models::SplatFitOptions o;
  o.target_gaussians = 150, o.gaussians = 300, o.views = 4, o.size = 48, o.steps = 120, o.eval_every = 60, o.sh_degree = 0;
  auto r = models::fit_synthetic(o);
  ASSERT_EQ(r.curve.size(), 3u);
  EXPECT_GT(r.curve.back().psnr, r.curve.front().psnr + 3) << "from " << r.curve.front().psnr << " dB";
  EXPECT_EQ(r.fitted.count, 300);
  std::string path = temp_path("fit.png");
  Renderer ren("cpu", r.fitted.count, 0, r.cameras[0], o.background);
  Tensor img = ren.render(scene_tensors(r.fitted), r.cameras[0])[0].contiguous();
  write_png(path, static_cast<const float*>(img.data()), 48, 48, 3);
  std::ifstream f(path, std::ios::binary);
  char sig[8] = {};
  f.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");
  std::remove(path.c_str());
}
