// Fitting a Gaussian-splatting scene to images: the render graph (science/splat) under a
// photometric loss, differentiated by autodiff and stepped by Adam (train::Trainer) — one
// compiled training step for every view, the pose an input. fit_synthetic renders the targets
// from a known random scene, so how close the fit gets is measurable (PSNR on those views).
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "science/splat/camera.h"
#include "science/splat/scene.h"

namespace rlx::models {

struct SplatFitOptions {
  std::string device = "cpu";
  int64_t target_gaussians = 1000;  // the synthetic scene
  int64_t gaussians = 2000;         // the fitted one, from a random start
  int sh_degree = 1;
  int views = 16;
  int64_t size = 128;  // square images
  int64_t steps = 2000;
  double lr = 0.05;           // base Adam step; each parameter group scales it (splat_fit.cpp)
  int64_t eval_every = 100;   // PSNR over every view this often
  uint32_t seed = 7;
  std::array<double, 3> background{0, 0, 0};
};

struct SplatFitPoint {
  int64_t step = 0;
  double loss = 0;     // the training loss (mean |image − target|) of the last step
  double psnr = 0;     // mean over the views, dB
  double seconds = 0;  // since the start
};

struct SplatFitResult {
  science::splat::Scene target, initial, fitted;
  std::vector<science::splat::Camera> cameras;
  std::vector<SplatFitPoint> curve;  // step 0 first, then every eval_every steps, then the last
};

SplatFitResult fit_synthetic(const SplatFitOptions& o, const std::function<void(const SplatFitPoint&)>& progress = {});

}  // namespace rlx::models
