// 3D Gaussian splatting: type rules, splat_project's meaning as common IR, and the rasterizer's
// gradient. The projection is per-Gaussian arithmetic, so its decomposition is elementwise MIR
// over [N] columns (fusion makes it one region); its gradient is one op, splat_project_grad,
// whose meaning is autodiff of that decomposition — for every parameter and the camera pose —
// and which cpu and cuda run as one hand-derived kernel. Compositing is sequential per pixel and has a
// kernel of its own (splat_rasterize) with a hand-derived reverse mode (splat_rasterize_grad).
#include <array>
#include <cmath>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/matrix.h"
#include "ops/rules.h"
#include "ops/splat_sh.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;

bool is_splat_float(DType d) { return d == DType::f32 || d == DType::f64; }

void require_shape(Op op, const Type& t, const Shape& want, const char* role) {
  if (t.shape != want) type_error(op, cat(role, " must be ", shape_str(want), ", got ", shape_str(t.shape)));
}

void require_float(Op op, const Type& t, DType d, const char* role) {
  if (t.dtype != d) type_error(op, cat(role, " must be ", dtype_name(d), " like the means, got ", dtype_name(t.dtype)));
}

void require_image_size(Op op, const Attrs& a) {
  if (a.i("width") < 1 || a.i("height") < 1)
    type_error(op, cat("needs a positive image size, got ", a.i("width"), "x", a.i("height")));
}

std::vector<Type> infer_project(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Type& means = in[0];
  if (!is_splat_float(means.dtype)) type_error(op, cat("takes f32 or f64 Gaussians, got ", dtype_name(means.dtype)));
  if (means.shape.size() != 2 || means.shape[1] != Dim(3)) type_error(op, cat("means must be [N, 3], got ", shape_str(means.shape)));
  Dim n = means.shape[0];
  require_shape(op, in[1], {n, Dim(4)}, "quats (w, x, y, z)");
  require_shape(op, in[2], {n, Dim(3)}, "scales");
  const Type& sh = in[3];
  if (sh.shape.size() != 3 || sh.shape[0] != n) type_error(op, cat("sh must be [N, K, C] with N = ", n.str(), ", got ", shape_str(sh.shape)));
  auto k = sh.shape[1].try_value();
  if (!k || (*k != 1 && *k != 4 && *k != 9 && *k != 16))
    type_error(op, cat("sh needs 1, 4, 9 or 16 coefficients per channel (degree 0 to 3), got ", shape_str(sh.shape)));
  require_shape(op, in[4], {Dim(4), Dim(4)}, "viewmat");
  for (size_t i = 1; i < 5; ++i) require_float(op, in[i], means.dtype, i == 1 ? "quats" : i == 2 ? "scales" : i == 3 ? "sh" : "viewmat");
  require_image_size(op, a);
  if (!(a.f("fx") > 0) || !(a.f("fy") > 0)) type_error(op, cat("needs positive focal lengths, got fx=", a.f("fx"), " fy=", a.f("fy")));
  DType d = means.dtype;
  return {{d, {n, Dim(2)}}, {d, {n, Dim(3)}}, {d, {n, sh.shape[2]}}, {d, {n}}, {DType::i32, {n}}};
}

// The inputs splat_rasterize and its gradient share: means2d, conics, colors, opacities, depths,
// radii[, background].
Dim check_rasterize_inputs(Op op, const std::vector<Type>& in, size_t count, const Attrs& a) {
  const Type& m = in[0];
  if (!is_splat_float(m.dtype)) type_error(op, cat("takes f32 or f64 Gaussians, got ", dtype_name(m.dtype)));
  if (m.shape.size() != 2 || m.shape[1] != Dim(2)) type_error(op, cat("means2d must be [N, 2], got ", shape_str(m.shape)));
  Dim n = m.shape[0];
  require_shape(op, in[1], {n, Dim(3)}, "conics");
  if (in[2].shape.size() != 2 || in[2].shape[0] != n) type_error(op, cat("colors must be [N, C] with N = ", n.str(), ", got ", shape_str(in[2].shape)));
  require_shape(op, in[3], {n}, "opacities");
  require_shape(op, in[4], {n}, "depths");
  require_shape(op, in[5], {n}, "radii");
  if (in[5].dtype != DType::i32) type_error(op, cat("radii must be i32, got ", dtype_name(in[5].dtype)));
  for (size_t i : {1, 2, 3, 4}) require_float(op, in[i], m.dtype, i == 1 ? "conics" : i == 2 ? "colors" : i == 3 ? "opacities" : "depths");
  if (count > 6) {
    require_shape(op, in[6], {in[2].shape[1]}, "background");
    require_float(op, in[6], m.dtype, "background");
  }
  require_image_size(op, a);
  return n;
}

Shape image_shape(const Attrs& a, const Dim& channels) { return {Dim(a.i("height")), Dim(a.i("width")), channels}; }

std::vector<Type> infer_rasterize(Op op, const std::vector<Type>& in, const Attrs& a) {
  check_rasterize_inputs(op, in, in.size(), a);
  DType d = in[0].dtype;
  Dim c = in[2].shape[1];
  return {{d, image_shape(a, c)}, {d, {Dim(a.i("height")), Dim(a.i("width"))}}};
}

std::vector<Type> infer_rasterize_grad(Op op, const std::vector<Type>& in, const Attrs& a) {
  Dim n = check_rasterize_inputs(op, in, 7, a);
  DType d = in[0].dtype;
  Dim c = in[2].shape[1];
  require_shape(op, in[7], image_shape(a, c), "the image's cotangent");
  require_shape(op, in[8], {Dim(a.i("height")), Dim(a.i("width"))}, "the alpha's cotangent");
  require_float(op, in[7], d, "the image's cotangent");
  require_float(op, in[8], d, "the alpha's cotangent");
  require_shape(op, in[9], image_shape(a, c), "the forward's image");
  require_shape(op, in[10], {Dim(a.i("height")), Dim(a.i("width"))}, "the forward's alpha");
  require_float(op, in[9], d, "the forward's image");
  require_float(op, in[10], d, "the forward's alpha");
  return {in[0], in[1], in[2], in[3], {d, {c}}};
}

std::vector<Type> infer_project_grad(Op op, const std::vector<Type>& in, const Attrs& a) {
  std::vector<Type> primal(in.begin(), in.begin() + 5);
  std::vector<Type> out = infer_project(op, primal, a);
  const char* roles[] = {"the means2d's cotangent", "the conics' cotangent", "the colors' cotangent", "the depths' cotangent"};
  for (size_t k = 0; k < 4; ++k) {
    require_shape(op, in[5 + k], out[k].shape, roles[k]);
    require_float(op, in[5 + k], out[k].dtype, roles[k]);
  }
  return primal;
}

// ---- the projection as elementwise graph arithmetic over [N] columns
struct Sym {
  Builder* b;
  ValueId v;
};
Sym lift(const Sym& like, double c) { return {like.b, like.b->scalar_like(like.v, c)}; }
Sym operator+(const Sym& x, const Sym& y) { return {x.b, x.b->add(x.v, y.v)}; }
Sym operator-(const Sym& x, const Sym& y) { return {x.b, x.b->sub(x.v, y.v)}; }
Sym operator*(const Sym& x, const Sym& y) { return {x.b, x.b->mul(x.v, y.v)}; }
Sym operator/(const Sym& x, const Sym& y) { return {x.b, x.b->div(x.v, y.v)}; }
Sym operator+(const Sym& x, double c) { return x + lift(x, c); }
Sym operator-(const Sym& x, double c) { return x - lift(x, c); }
Sym operator*(const Sym& x, double c) { return x * lift(x, c); }
Sym operator-(const Sym& x) { return {x.b, x.b->unary(Op::neg, x.v)}; }
Sym sqrt(const Sym& x) { return {x.b, x.b->unary(Op::sqrt, x.v)}; }
Sym max(const Sym& x, const Sym& y) { return {x.b, x.b->max(x.v, y.v)}; }
Sym min(const Sym& x, const Sym& y) { return {x.b, x.b->min(x.v, y.v)}; }
Sym clamp(const Sym& x, double lo, double hi) { return max(min(x, lift(x, hi)), lift(x, lo)); }

using Mat3 = std::array<std::array<Sym, 3>, 3>;

V decompose_project(Builder& b, const V& in, const Attrs& a) {
  ValueId means = in[0], quats = in[1], scales = in[2], sh = in[3], view = in[4];
  DType dt = b.dtype(means);
  Dim n = b.shape(means)[0];
  auto column = [&](ValueId x, int64_t j) { return Sym{&b, b.reshape(b.slice_axis(x, 1, Dim(j), Dim(j + 1)), {n})}; };
  auto entry = [&](int64_t i, int64_t j) {
    return Sym{&b, b.reshape(b.slice(view, {Dim(i), Dim(j)}, {Dim(i + 1), Dim(j + 1)}, {1, 1}), Shape{})};
  };
  Mat3 r{};
  std::array<Sym, 3> t{};
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 3; ++j) r[i][j] = entry(i, j);
    t[i] = entry(i, 3);
  }
  std::array<Sym, 3> p{column(means, 0), column(means, 1), column(means, 2)};
  std::array<Sym, 3> pc{};  // the mean in camera space
  for (int i = 0; i < 3; ++i) pc[i] = r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2] + t[i];

  // Σ = (Q S)(Q S)ᵀ from the normalized quaternion and the scales, then R Σ Rᵀ
  Sym qw = column(quats, 0), qx = column(quats, 1), qy = column(quats, 2), qz = column(quats, 3);
  Sym qn = sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
  qw = qw / qn, qx = qx / qn, qy = qy / qn, qz = qz / qn;
  Mat3 q{{{(qy * qy + qz * qz) * -2.0 + 1.0, (qx * qy - qw * qz) * 2.0, (qx * qz + qw * qy) * 2.0},
          {(qx * qy + qw * qz) * 2.0, (qx * qx + qz * qz) * -2.0 + 1.0, (qy * qz - qw * qx) * 2.0},
          {(qx * qz - qw * qy) * 2.0, (qy * qz + qw * qx) * 2.0, (qx * qx + qy * qy) * -2.0 + 1.0}}};
  std::array<Sym, 3> s{column(scales, 0), column(scales, 1), column(scales, 2)};
  Mat3 m{}, sigma{}, rs{}, sc{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = q[i][j] * s[j];
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) sigma[i][j] = sigma[j][i] = m[i][0] * m[j][0] + m[i][1] * m[j][1] + m[i][2] * m[j][2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) rs[i][j] = r[i][0] * sigma[0][j] + r[i][1] * sigma[1][j] + r[i][2] * sigma[2][j];
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) sc[i][j] = sc[j][i] = rs[i][0] * r[j][0] + rs[i][1] * r[j][1] + rs[i][2] * r[j][2];

  // the perspective Jacobian at the mean (z kept positive so culled Gaussians stay finite)
  double fx = a.f("fx"), fy = a.f("fy"), cx = a.f("cx"), cy = a.f("cy"), near = a.f("near"), eps2d = a.f("eps2d");
  double width = static_cast<double>(a.i("width")), height = static_cast<double>(a.i("height"));
  double lim_x = 1.3 * 0.5 * width / fx, lim_y = 1.3 * 0.5 * height / fy;
  Sym z = max(pc[2], lift(pc[2], near));
  Sym tx = clamp(pc[0] / z, -lim_x, lim_x), ty = clamp(pc[1] / z, -lim_y, lim_y);
  Sym j00 = lift(z, fx) / z, j02 = -(tx * fx) / z, j11 = lift(z, fy) / z, j12 = -(ty * fy) / z;
  Sym ca = j00 * j00 * sc[0][0] + j00 * j02 * sc[0][2] * 2.0 + j02 * j02 * sc[2][2] + eps2d;
  Sym cb = j00 * j11 * sc[0][1] + j00 * j12 * sc[0][2] + j02 * j11 * sc[1][2] + j02 * j12 * sc[2][2];
  Sym cc = j11 * j11 * sc[1][1] + j11 * j12 * sc[1][2] * 2.0 + j12 * j12 * sc[2][2] + eps2d;
  Sym det = ca * cc - cb * cb;
  Sym mid = (ca + cc) * 0.5;
  Sym lambda = mid + sqrt(max(mid * mid - det, lift(mid, 0.1)));
  Sym radius{&b, b.unary(Op::ceil, (sqrt(lambda) * 3.0).v)};
  Sym u = pc[0] / z * fx + cx, v = pc[1] / z * fy + cy;

  auto cmp = [&](Op op, const Sym& x, const Sym& y) { return b.binary(op, x.v, y.v); };
  ValueId visible = cmp(Op::ge, pc[2], lift(pc[2], near));
  for (ValueId c : {cmp(Op::ge, u + radius, lift(u, 0)), cmp(Op::le, u - radius, lift(u, width)), cmp(Op::ge, v + radius, lift(v, 0)),
                    cmp(Op::le, v - radius, lift(v, height))})
    visible = b.binary(Op::logical_and, visible, c);
  ValueId zero = b.scalar(dt, 0);
  auto columns = [&](std::vector<Sym> cols) {
    V parts;
    for (const Sym& c : cols) parts.push_back(b.reshape(b.select(visible, c.v, zero), {n, Dim(1)}));
    return b.concat(parts, 1);
  };
  ValueId means2d = columns({u, v});
  ValueId conics = columns({cc / det, -cb / det, ca / det});
  ValueId radii = b.select(visible, b.cast(radius.v, DType::i32), b.scalar(DType::i32, 0));

  // colours: the SH along the unit direction from the camera centre (−Rᵀ t) to the mean
  std::array<Sym, 3> dir{};
  for (int j = 0; j < 3; ++j) dir[j] = p[j] + (r[0][j] * t[0] + r[1][j] * t[1] + r[2][j] * t[2]);
  Sym len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  for (auto& d : dir) d = d / len;
  Shape shs = b.shape(sh);
  int64_t k_count = shs[1].value();
  Dim channels = shs[2];
  // Σ_k basis_k · sh[:, k, :] as one broadcast product and one sum (its gradient is one
  // broadcast too, where K separate slices would each pad back to [N, K, C])
  V columns_k;
  splat_sh::basis(dir[0], dir[1], dir[2], static_cast<int>(k_count),
                  [&](int, const Sym& basis) { columns_k.push_back(b.reshape(basis.v, {n, Dim(1)})); });
  ValueId basis = b.reshape(columns_k.size() == 1 ? columns_k[0] : b.concat(columns_k, 1), {n, Dim(k_count), Dim(1)});
  ValueId color = b.reduce(b.mul(sh, b.broadcast(basis, {n, Dim(k_count), channels})), "sum", {1}, false);
  color = b.max(b.add(color, b.scalar(dt, 0.5)), zero);
  return {means2d, conics, color, pc[2].v, radii};
}

// The projection's gradient is one op (devices with a kernel for it skip ~600 small ones); its
// meaning is autodiff of the decomposition above.
V vjp_project(Builder& b, const VjpArgs& a) {
  V in(a.in.begin(), a.in.end());
  for (size_t k = 0; k < 4; ++k) in.push_back(matrix::or_zeros(b, a.cot[k], a.out[k]));
  return b.emit(Op::splat_project_grad, in, a.attrs);
}

V decompose_project_grad(Builder& b, const V& in, const Attrs& a) {
  V primal(in.begin(), in.begin() + 5), cot(in.begin() + 5, in.end());
  return vjp_of_decomposition(b, Op::splat_project, primal, cot, a);
}

Attrs size_attrs(const Attrs& a) { return Attrs{{"width", a.i("width")}, {"height", a.i("height")}}; }

V vjp_rasterize(Builder& b, const VjpArgs& a) {
  bool has_background = a.in.size() > 6;
  ValueId background = has_background ? a.in[6] : b.broadcast(b.scalar_like(a.in[0], 0), {b.shape(a.in[2])[1]});
  V in(a.in.begin(), a.in.begin() + 6);
  in.push_back(background);
  in.push_back(matrix::or_zeros(b, a.cot[0], a.out[0]));
  in.push_back(matrix::or_zeros(b, a.cot[1], a.out[1]));
  in.push_back(a.out[0]);  // the forward's image and alpha (see ops.def)
  in.push_back(a.out[1]);
  V g = b.emit(Op::splat_rasterize_grad, in, size_attrs(a.attrs));
  V out = {g[0], g[1], g[2], g[3], ir::kNoValue, ir::kNoValue};
  if (has_background) out.push_back(g[4]);
  return out;
}

}  // namespace

void register_splat(RuleTable& t) {
  t[static_cast<size_t>(Op::splat_project)].infer = infer_project;
  t[static_cast<size_t>(Op::splat_project)].decompose = decompose_project;
  t[static_cast<size_t>(Op::splat_project)].vjp = vjp_project;
  t[static_cast<size_t>(Op::splat_project_grad)].infer = infer_project_grad;
  t[static_cast<size_t>(Op::splat_project_grad)].decompose = decompose_project_grad;
  t[static_cast<size_t>(Op::splat_rasterize)].infer = infer_rasterize;
  t[static_cast<size_t>(Op::splat_rasterize)].vjp = vjp_rasterize;
  t[static_cast<size_t>(Op::splat_rasterize_grad)].infer = infer_rasterize_grad;
}

}  // namespace rlx::ops
