// 3D Gaussian splatting on the cuda device (kernels in splat.cu): f32 only, up to 8 channels —
// the rest fail to compile, naming the op. The rasterizer reads its pair count back to the host
// and allocates on the stream, so a program holding it is never captured into a CUDA graph
// (executable.cpp asks syncs_with_host).
#include "backends/cuda/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

SplatInputs inputs_of(const LaunchArgs& a, bool background) {
  const auto& in = a.in;
  return {static_cast<const float*>(in[0].data),
          static_cast<const float*>(in[1].data),
          static_cast<const float*>(in[2].data),
          static_cast<const float*>(in[3].data),
          static_cast<const float*>(in[4].data),
          background ? static_cast<const float*>(in[6].data) : nullptr,
          static_cast<const int32_t*>(in[5].data),
          static_cast<int>(in[0].shape[0]),
          static_cast<int>(in[2].shape[1]),
          static_cast<int>(a.node.attrs.i("width")),
          static_cast<int>(a.node.attrs.i("height"))};
}

void failed(const LaunchArgs& a) {
  cudaError_t e = cudaGetLastError();
  throw Error(ErrorKind::runtime, cat("cuda: ", node_label(a.node), " failed: ", e == cudaSuccess ? "out of device memory for its tile bins" : cudaGetErrorString(e)));
}

Kernel make_project(const ir::Node& node, const ir::Graph&) {
  auto k = splat_math::intrinsics_of<float>(node.attrs);
  return Kernel([k](const LaunchArgs& a) {
    launch_splat_project(k, static_cast<const float*>(a.in[4].data), a.in[0].shape[0], static_cast<const float*>(a.in[0].data),
                         static_cast<const float*>(a.in[1].data), static_cast<const float*>(a.in[2].data), static_cast<const float*>(a.in[3].data),
                         static_cast<int>(a.in[3].shape[1]), a.in[3].shape[2], static_cast<float*>(a.out[0].data), static_cast<float*>(a.out[1].data),
                         static_cast<float*>(a.out[2].data), static_cast<float*>(a.out[3].data), static_cast<int32_t*>(a.out[4].data), a.stream);
    check_launch(a);
  });
}

Kernel make_project_grad(const ir::Node& node, const ir::Graph& g) {
  auto k = splat_math::intrinsics_of<float>(node.attrs);
  int64_t n = static_shape(g, node.inputs[0])[0];
  return Kernel(
      [k](const LaunchArgs& a) {
        auto in = [&](size_t i) { return static_cast<const float*>(a.in[i].data); };
        auto out = [&](size_t i) { return static_cast<float*>(a.out[i].data); };
        SplatProjectGrad p{in(0),  in(1),  in(2),  in(3),  in(4),  in(5),  in(6), in(7), in(8), out(0), out(1),
                           out(2), out(3), out(4), a.in[0].shape[0], a.in[3].shape[2], static_cast<int>(a.in[3].shape[1])};
        launch_splat_project_grad(k, p, a.scratch, a.stream);
        check_launch(a);
      },
      splat_project_grad_scratch(n));
}

Kernel make_rasterize(const ir::Node& node, const ir::Graph&) {
  bool background = node.inputs.size() > 6;
  return Kernel(
      [background](const LaunchArgs& a) {
        if (!launch_splat_rasterize(inputs_of(a, background), static_cast<float*>(a.out[0].data), static_cast<float*>(a.out[1].data), a.stream)) failed(a);
      },
      0, "tiles");
}

Kernel make_rasterize_grad(const ir::Node&, const ir::Graph&) {
  return Kernel(
      [](const LaunchArgs& a) {
        SplatGrads g{static_cast<const float*>(a.in[7].data),  static_cast<const float*>(a.in[8].data), static_cast<const float*>(a.in[9].data),
                     static_cast<const float*>(a.in[10].data), static_cast<float*>(a.out[0].data),
                     static_cast<float*>(a.out[1].data),      static_cast<float*>(a.out[2].data),      static_cast<float*>(a.out[3].data),
                     static_cast<float*>(a.out[4].data)};
        if (!launch_splat_rasterize_grad(inputs_of(a, true), g, a.stream)) failed(a);
      },
      0, "tiles");
}

bool claims_project(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return in[0].dtype == DType::f32; }
// its scratch (the per-block pose sums) is sized by the Gaussian count
bool claims_project_grad(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  return claims_project(op, in, out, a) && shape_is_static(in[0].shape);
}

bool claims_rasterize(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  auto channels = in[2].shape[1].try_value();
  return in[0].dtype == DType::f32 && channels && *channels <= 8;
}

}  // namespace

bool syncs_with_host(Op op) { return op == Op::splat_rasterize || op == Op::splat_rasterize_grad || linalg_syncs(op); }

void register_splat(KernelTable& t) {
  t[static_cast<size_t>(Op::splat_project)] = {claims_project, make_project};
  t[static_cast<size_t>(Op::splat_project_grad)] = {claims_project_grad, make_project_grad};
  t[static_cast<size_t>(Op::splat_rasterize)] = {claims_rasterize, make_rasterize};
  t[static_cast<size_t>(Op::splat_rasterize_grad)] = {claims_rasterize, make_rasterize_grad};
}

}  // namespace rlx::backends::cuda
