#include "science/splat/camera.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::science::splat {

namespace {

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
double norm(const Vec3& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
Vec3 scaled(const Vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }

void check_size(int64_t width, int64_t height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw Error(ErrorKind::invalid_argument, cat("an image size must be 1 to 16384 pixels a side, got ", width, "x", height));
}

// The rows of R (x, y, z axes of the camera in world space) and the centre → the 4×4 matrix.
std::array<double, 16> view_from(const Vec3& x, const Vec3& y, const Vec3& z, const Vec3& eye) {
  std::array<double, 16> v{};
  const Vec3* rows[3] = {&x, &y, &z};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) v[static_cast<size_t>(i * 4 + j)] = (*rows[i])[static_cast<size_t>(j)];
    v[static_cast<size_t>(i * 4 + 3)] = -((*rows[i])[0] * eye[0] + (*rows[i])[1] * eye[1] + (*rows[i])[2] * eye[2]);
  }
  v[15] = 1;
  return v;
}

}  // namespace

Camera look_at(const Vec3& eye, const Vec3& target, const Vec3& up, double fov_y_degrees, int64_t width, int64_t height) {
  check_size(width, height);
  if (!(fov_y_degrees > 0 && fov_y_degrees < 180)) throw Error(ErrorKind::invalid_argument, cat("a field of view must be in (0, 180) degrees, got ", fov_y_degrees));
  Vec3 forward = sub(target, eye);
  double fl = norm(forward);
  if (!(fl > 0)) throw Error(ErrorKind::invalid_argument, "the camera's eye is on its target");
  Vec3 z = scaled(forward, 1 / fl);
  Vec3 x = cross(scaled(up, -1), z);  // image x: right when up is up and y points down
  double xl = norm(x);
  if (!(xl > 1e-12 * norm(up))) throw Error(ErrorKind::invalid_argument, "the camera's up vector is zero or along its view direction");
  x = scaled(x, 1 / xl);
  Camera c;
  c.width = width, c.height = height;
  c.fy = 0.5 * static_cast<double>(height) / std::tan(0.5 * fov_y_degrees * M_PI / 180);
  c.fx = c.fy;
  c.cx = 0.5 * static_cast<double>(width), c.cy = 0.5 * static_cast<double>(height);
  c.viewmat = view_from(x, cross(z, x), z, eye);
  return c;
}

std::vector<Camera> orbit(const Vec3& center, double radius, double elevation, int count, double fov_y_degrees, int64_t width, int64_t height) {
  std::vector<Camera> out;
  for (int i = 0; i < count; ++i) {
    double a = 2 * M_PI * i / count;
    Vec3 eye = {center[0] + radius * std::cos(a), center[1] + elevation, center[2] + radius * std::sin(a)};
    out.push_back(look_at(eye, center, {0, 1, 0}, fov_y_degrees, width, height));
  }
  return out;
}

Camera camera_from_json(const std::string& path, int64_t index) {
  std::ifstream f(path);
  if (!f) throw Error(ErrorKind::io, cat("cannot open ", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
    if (!j.is_array()) throw Error(ErrorKind::format, cat(path, ": a cameras.json is a list of views"));
    if (index < 0 || index >= static_cast<int64_t>(j.size())) throw Error(ErrorKind::invalid_argument, cat(path, " has ", j.size(), " views, no view ", index));
    const auto& v = j[static_cast<size_t>(index)];
    Camera c;
    c.width = v.at("width").get<int64_t>(), c.height = v.at("height").get<int64_t>();
    check_size(c.width, c.height);
    c.fx = v.at("fx").get<double>(), c.fy = v.at("fy").get<double>();
    c.cx = 0.5 * static_cast<double>(c.width), c.cy = 0.5 * static_cast<double>(c.height);
    Vec3 eye{};
    for (size_t i = 0; i < 3; ++i) eye[i] = v.at("position").at(i).get<double>();
    Vec3 rows[3];  // R_w2c = (camera-to-world rotation)ᵀ: its rows are the stored matrix's columns
    for (size_t i = 0; i < 3; ++i)
      for (size_t k = 0; k < 3; ++k) rows[i][k] = v.at("rotation").at(k).at(i).get<double>();
    c.viewmat = view_from(rows[0], rows[1], rows[2], eye);
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::format, cat(path, ": view ", index, ": ", e.what()));
  }
}

Vec3 parse_vec3(const std::string& text, const char* what) {
  Vec3 v{};
  size_t at = 0;
  for (size_t i = 0; i < 3; ++i) {
    size_t end = text.find(',', at);
    if ((i < 2) != (end != std::string::npos)) throw Error(ErrorKind::invalid_argument, cat(what, " must be three numbers x,y,z, got '", text, "'"));
    std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    char* stop = nullptr;
    v[i] = std::strtod(part.c_str(), &stop);
    if (part.empty() || *stop || !std::isfinite(v[i])) throw Error(ErrorKind::invalid_argument, cat(what, " must be three numbers x,y,z, got '", text, "'"));
    at = end + 1;
  }
  return v;
}

}  // namespace rlx::science::splat
