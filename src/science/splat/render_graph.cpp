#include "science/splat/render_graph.h"

#include "util/strings.h"

namespace rlx::science::splat {

std::pair<ir::ValueId, ir::ValueId> emit_render(ops::Builder& b, const SceneValues& s, ir::ValueId viewmat, const Camera& camera,
                                                const std::array<double, 3>& background) {
  using ir::Op;
  ir::Attrs project{{"fx", camera.fx}, {"fy", camera.fy}, {"cx", camera.cx}, {"cy", camera.cy}, {"width", camera.width}, {"height", camera.height}};
  ir::ValueId scales = b.unary(Op::exp, s.log_scales);
  auto p = b.emit(Op::splat_project, {s.means, s.quats, scales, s.sh, viewmat}, project);
  ir::ValueId opacities = b.unary(Op::sigmoid, s.opacity_logits);
  ir::ValueId bg = b.constant(Tensor::from_f64(b.dtype(s.means), {3}, {background[0], background[1], background[2]}));
  auto r = b.emit(Op::splat_rasterize, {p[0], p[1], p[2], opacities, p[3], p[4], bg}, ir::Attrs{{"width", camera.width}, {"height", camera.height}});
  return {r[0], r[1]};
}

ir::Graph render_graph(int64_t count, int sh_degree, const Camera& camera, const std::array<double, 3>& background) {
  ir::Graph g;
  g.name = "splat_render";
  ops::Builder b(g);
  Dim n(count), k((sh_degree + 1) * (sh_degree + 1));
  SceneValues s{g.add_input({DType::f32, {n, Dim(3)}}, "means"), g.add_input({DType::f32, {n, Dim(3)}}, "log_scales"),
                g.add_input({DType::f32, {n, Dim(4)}}, "quats"), g.add_input({DType::f32, {n}}, "opacity_logits"),
                g.add_input({DType::f32, {n, k, Dim(3)}}, "sh")};
  ir::ValueId view = g.add_input({DType::f32, {Dim(4), Dim(4)}}, "viewmat");
  auto [image, alpha] = emit_render(b, s, view, camera, background);
  g.set_outputs({image, alpha});
  return g;
}

std::vector<Tensor> scene_tensors(const Scene& s) {
  s.check();
  int64_t n = s.count, k = s.sh_coeffs();
  return {Tensor::from_vector(s.means, {n, 3}), Tensor::from_vector(s.log_scales, {n, 3}), Tensor::from_vector(s.quats, {n, 4}),
          Tensor::from_vector(s.opacity_logits, {n}), Tensor::from_vector(s.sh, {n, k, 3})};
}

Scene scene_from_tensors(const std::vector<Tensor>& params, int sh_degree) {
  auto floats = [](const Tensor& t) {
    Tensor c = t.contiguous();
    const float* p = static_cast<const float*>(c.data());
    return std::vector<float>(p, p + c.numel());
  };
  Scene s;
  s.count = params.at(0).shape().at(0), s.sh_degree = sh_degree;
  s.means = floats(params[0]), s.log_scales = floats(params[1]), s.quats = floats(params[2]);
  s.opacity_logits = floats(params[3]), s.sh = floats(params[4]);
  s.check();
  return s;
}

Tensor viewmat_tensor(const Camera& c) {
  std::vector<double> v(c.viewmat.begin(), c.viewmat.end());
  return Tensor::from_f64(DType::f32, {4, 4}, v);
}

}  // namespace rlx::science::splat
