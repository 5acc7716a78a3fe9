// .ply scenes in the 3DGS vertex layout. The header says each property's type and order; the
// records are converted property by property, so files that store doubles, add normals or put
// the fields in another order read the same.
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "rlx/error.h"
#include "science/splat/scene.h"
#include "util/strings.h"

namespace rlx::science::splat {

namespace {

constexpr double kShC0 = 0.28209479177387814;

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw Error(ErrorKind::format, cat(path, ": ", what)); }

struct Property {
  std::string name;
  std::string type;
  size_t size = 0;
  size_t offset = 0;
};

size_t type_size(const std::string& t) {
  static const std::map<std::string, size_t> sizes = {{"char", 1},   {"uchar", 1},  {"int8", 1},   {"uint8", 1},   {"short", 2},
                                                      {"ushort", 2}, {"int16", 2},  {"uint16", 2}, {"int", 4},     {"uint", 4},
                                                      {"int32", 4},  {"uint32", 4}, {"float", 4},  {"float32", 4}, {"double", 8},
                                                      {"float64", 8}};
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

double read_binary(const char* p, const std::string& t) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (t == "float" || t == "float32") return get(float{});
  if (t == "double" || t == "float64") return get(double{});
  if (t == "char" || t == "int8") return get(int8_t{});
  if (t == "uchar" || t == "uint8") return get(uint8_t{});
  if (t == "short" || t == "int16") return get(int16_t{});
  if (t == "ushort" || t == "uint16") return get(uint16_t{});
  if (t == "int" || t == "int32") return get(int32_t{});
  return get(uint32_t{});
}

struct Header {
  bool binary = true;
  int64_t vertices = -1;
  std::vector<Property> props;
  size_t record = 0;
};

Header read_header(std::istream& f, const std::string& path) {
  std::string line;
  if (!std::getline(f, line) || line.substr(0, 3) != "ply") bad(path, "not a .ply file (it does not start with \"ply\")");
  Header h;
  bool in_vertex = false, seen_format = false;
  while (true) {
    if (!std::getline(f, line)) bad(path, "the header has no end_header line");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "end_header") break;
    if (word == "comment" || word == "obj_info" || word.empty()) continue;
    if (word == "format") {
      std::string fmt;
      ls >> fmt;
      if (fmt == "ascii") h.binary = false;
      else if (fmt != "binary_little_endian") bad(path, cat("format ", fmt, " is not supported (binary_little_endian or ascii)"));
      seen_format = true;
    } else if (word == "element") {
      std::string name;
      int64_t count = -1;
      ls >> name >> count;
      if (count < 0) bad(path, cat("bad element line: ", line));
      if (name == "vertex") {
        if (h.vertices >= 0) bad(path, "two vertex elements");
        h.vertices = count;
        in_vertex = true;
      } else {
        if (h.vertices < 0 && count > 0) bad(path, cat("element ", name, " comes before the vertices (not the 3DGS layout)"));
        in_vertex = false;
      }
    } else if (word == "property") {
      if (!in_vertex) continue;  // properties of later elements: never read
      std::string type, name;
      ls >> type >> name;
      if (type == "list") bad(path, cat("vertex property ", line.substr(9), " is a list (not the 3DGS layout)"));
      size_t size = type_size(type);
      if (!size) bad(path, cat("vertex property ", name, " has unknown type ", type));
      h.props.push_back({name, type, size, h.record});
      h.record += size;
    } else {
      bad(path, cat("unexpected header line: ", line));
    }
  }
  if (!seen_format) bad(path, "the header has no format line");
  if (h.vertices < 0) bad(path, "no vertex element");
  return h;
}

}  // namespace

void Scene::check() const {
  size_t n = static_cast<size_t>(count), k = static_cast<size_t>(sh_coeffs());
  if (count < 0 || sh_degree < 0 || sh_degree > 3) throw Error(ErrorKind::invalid_argument, cat("a scene needs count ≥ 0 and SH degree 0–3, got ", count, ", ", sh_degree));
  if (means.size() != n * 3 || log_scales.size() != n * 3 || quats.size() != n * 4 || opacity_logits.size() != n || sh.size() != n * k * 3)
    throw Error(ErrorKind::invalid_argument, cat("scene arrays do not match ", count, " Gaussians of SH degree ", sh_degree));
}

Scene read_ply(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("cannot open ", path));
  Header h = read_header(f, path);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < h.props.size(); ++i) index[h.props[i].name] = i;
  auto need = [&](const std::string& name) {
    auto it = index.find(name);
    if (it == index.end()) bad(path, cat("the vertices have no property ", name, " (the 3DGS layout needs x y z f_dc_0..2 opacity scale_0..2 rot_0..3)"));
    return it->second;
  };
  int rest = 0;
  while (index.count(cat("f_rest_", rest))) ++rest;
  Scene s;
  s.sh_degree = rest == 0 ? 0 : rest == 9 ? 1 : rest == 24 ? 2 : rest == 45 ? 3 : -1;
  if (s.sh_degree < 0) bad(path, cat(rest, " f_rest_* properties: not the SH of degree 1, 2 or 3 (9, 24 or 45)"));
  int64_t k = s.sh_coeffs();
  std::vector<size_t> mean_p = {need("x"), need("y"), need("z")}, scale_p = {need("scale_0"), need("scale_1"), need("scale_2")},
                      rot_p = {need("rot_0"), need("rot_1"), need("rot_2"), need("rot_3")}, dc_p = {need("f_dc_0"), need("f_dc_1"), need("f_dc_2")};
  size_t opacity_p = need("opacity");
  if (h.binary) {
    std::streampos start = f.tellg();
    f.seekg(0, std::ios::end);
    int64_t bytes = static_cast<int64_t>(f.tellg() - start);
    f.seekg(start);
    if (h.record == 0 || bytes / static_cast<int64_t>(h.record) < h.vertices)
      bad(path, cat("truncated: ", h.vertices, " vertices of ", h.record, " bytes need ", h.vertices * static_cast<int64_t>(h.record), " bytes, the file holds ", bytes));
  }
  s.count = h.vertices;
  size_t n = static_cast<size_t>(h.vertices);
  s.means.resize(n * 3), s.log_scales.resize(n * 3), s.quats.resize(n * 4), s.opacity_logits.resize(n), s.sh.resize(n * static_cast<size_t>(k) * 3);
  std::vector<char> record(h.record);
  std::vector<double> values(h.props.size());
  std::string line;
  for (size_t v = 0; v < n; ++v) {
    if (h.binary) {
      if (!f.read(record.data(), static_cast<std::streamsize>(record.size()))) bad(path, cat("truncated at vertex ", v));
      for (size_t p = 0; p < h.props.size(); ++p) values[p] = read_binary(record.data() + h.props[p].offset, h.props[p].type);
    } else {
      if (!std::getline(f, line)) bad(path, cat("ends at vertex ", v, " of ", n));
      std::istringstream ls(line);
      for (size_t p = 0; p < h.props.size(); ++p)
        if (!(ls >> values[p])) bad(path, cat("vertex ", v, " has ", p, " values, the header names ", h.props.size()));
    }
    for (size_t j = 0; j < 3; ++j) {
      s.means[v * 3 + j] = static_cast<float>(values[mean_p[j]]);
      s.log_scales[v * 3 + j] = static_cast<float>(values[scale_p[j]]);
      s.sh[(v * static_cast<size_t>(k)) * 3 + j] = static_cast<float>(values[dc_p[j]]);
    }
    for (size_t j = 0; j < 4; ++j) s.quats[v * 4 + j] = static_cast<float>(values[rot_p[j]]);
    s.opacity_logits[v] = static_cast<float>(values[opacity_p]);
    // f_rest is channel-major: all of red's higher coefficients, then green's, then blue's
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 1; i < k; ++i)
        s.sh[(v * static_cast<size_t>(k) + static_cast<size_t>(i)) * 3 + static_cast<size_t>(c)] =
            static_cast<float>(values[index[cat("f_rest_", c * (k - 1) + i - 1)]]);
  }
  return s;
}

void write_ply(const std::string& path, const Scene& s) {
  s.check();
  int64_t k = s.sh_coeffs();
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("cannot write ", path));
  std::vector<std::string> names = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
  for (int64_t i = 0; i < 3 * (k - 1); ++i) names.push_back(cat("f_rest_", i));
  for (const char* p : {"opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"}) names.push_back(p);
  f << "ply\nformat binary_little_endian 1.0\nelement vertex " << s.count << "\n";
  for (const auto& p : names) f << "property float " << p << "\n";
  f << "end_header\n";
  std::vector<float> row;
  for (int64_t v = 0; v < s.count; ++v) {
    size_t g = static_cast<size_t>(v);
    row.assign(s.means.begin() + static_cast<std::ptrdiff_t>(g * 3), s.means.begin() + static_cast<std::ptrdiff_t>(g * 3 + 3));
    row.insert(row.end(), {0.f, 0.f, 0.f});
    const float* sh = s.sh.data() + g * static_cast<size_t>(k) * 3;
    for (int c = 0; c < 3; ++c) row.push_back(sh[c]);
    for (int c = 0; c < 3; ++c)
      for (int64_t i = 1; i < k; ++i) row.push_back(sh[i * 3 + c]);
    row.push_back(s.opacity_logits[g]);
    for (size_t j = 0; j < 3; ++j) row.push_back(s.log_scales[g * 3 + j]);
    for (size_t j = 0; j < 4; ++j) row.push_back(s.quats[g * 4 + j]);
    f.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size() * sizeof(float)));
  }
  if (!f) throw Error(ErrorKind::io, cat("cannot write ", path));
}

Scene random_scene(int64_t n, int sh_degree, double extent, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Scene s;
  s.count = n, s.sh_degree = sh_degree;
  int64_t k = s.sh_coeffs();
  for (int64_t g = 0; g < n; ++g) {
    for (int j = 0; j < 3; ++j) s.means.push_back(static_cast<float>(extent * (2 * unit(rng) - 1)));
    for (int j = 0; j < 3; ++j) s.log_scales.push_back(static_cast<float>(std::log(extent * (0.02 + 0.08 * unit(rng)))));
    for (int j = 0; j < 4; ++j) s.quats.push_back(static_cast<float>(normal(rng)));
    s.opacity_logits.push_back(static_cast<float>(-0.5 + 3 * unit(rng)));
    for (int j = 0; j < 3; ++j) s.sh.push_back(static_cast<float>((unit(rng) - 0.5) / kShC0));  // a colour in [0, 1]
    for (int64_t i = 1; i < k; ++i)
      for (int j = 0; j < 3; ++j) s.sh.push_back(static_cast<float>(0.15 * normal(rng)));
  }
  return s;
}

}  // namespace rlx::science::splat
