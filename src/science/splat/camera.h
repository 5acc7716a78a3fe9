// Pinhole cameras for splatting: the world → camera matrix in splat_project's convention
// (x right, y down, looking down +z) and the intrinsics of an image.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::science::splat {

using Vec3 = std::array<double, 3>;

struct Camera {
  int64_t width = 0, height = 0;
  double fx = 0, fy = 0, cx = 0, cy = 0;
  std::array<double, 16> viewmat{};  // row-major world → camera, last row 0 0 0 1
};

// A camera at `eye` looking at `target`, `up` pointing up in the image, with vertical field of
// view fov_y_degrees and square pixels. Throws rlx::Error(invalid_argument) for a degenerate
// pose (eye on target, up along the view) or a bad size or angle.
Camera look_at(const Vec3& eye, const Vec3& target, const Vec3& up, double fov_y_degrees, int64_t width, int64_t height);

// `count` cameras on a circle of `radius` around `center` at height `elevation` (along up),
// all looking at the centre: the views a fitting run trains on.
std::vector<Camera> orbit(const Vec3& center, double radius, double elevation, int count, double fov_y_degrees, int64_t width, int64_t height);

// View `index` of a 3DGS cameras.json (the training code's output: position, rotation as
// camera-to-world 3×3, fx, fy, width, height). Throws rlx::Error naming the file and field.
Camera camera_from_json(const std::string& path, int64_t index);

// Parses "x,y,z". Throws rlx::Error(invalid_argument) naming `what`.
Vec3 parse_vec3(const std::string& text, const char* what);

}  // namespace rlx::science::splat
