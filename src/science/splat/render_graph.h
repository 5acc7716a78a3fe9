// The render of a splatting scene as a graph: the stored parameters activated (exp of the log
// scales, sigmoid of the opacity logits; quaternions are normalized by splat_project), projected
// through a camera and rasterized. The camera's pose is a graph input, so one compiled graph
// renders every view of one image size — and autodiff of it fits scenes and poses.
#pragma once
#include <array>
#include <vector>

#include "ops/builder.h"
#include "rlx/tensor.h"
#include "science/splat/camera.h"
#include "science/splat/scene.h"

namespace rlx::science::splat {

struct SceneValues {
  ir::ValueId means, log_scales, quats, opacity_logits, sh;
};

// (image [H, W, 3], alpha [H, W]) of the scene seen through `camera`'s intrinsics from `viewmat`.
std::pair<ir::ValueId, ir::ValueId> emit_render(ops::Builder& b, const SceneValues& s, ir::ValueId viewmat, const Camera& camera,
                                                const std::array<double, 3>& background);

// inputs: means, log_scales, quats, opacity_logits, sh, viewmat (f32, shapes as Scene's);
// outputs: image, alpha.
ir::Graph render_graph(int64_t count, int sh_degree, const Camera& camera, const std::array<double, 3>& background);

// The scene's five parameter tensors, in render_graph's input order.
std::vector<Tensor> scene_tensors(const Scene& s);
// Back from (updated) parameter tensors into a scene.
Scene scene_from_tensors(const std::vector<Tensor>& params, int sh_degree);
Tensor viewmat_tensor(const Camera& c);

}  // namespace rlx::science::splat
