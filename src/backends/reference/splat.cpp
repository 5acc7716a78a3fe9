// 3D Gaussian splatting by the definition, in doubles: each Gaussian projected with explicit
// 3×3 matrices, and each pixel composited from every Gaussian whose box holds it, sorted by
// depth — no tiles, no early exits beyond the op's own. The gradient follows the closed form
// of the compositing sum term by term (front to back with suffix sums), not the back-to-front
// recurrence fast kernels use, so the two are independent derivations.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/reference/kernels.h"
#include "ops/splat_sh.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;
using M3 = std::array<std::array<double, 3>, 3>;

M3 mul(const M3& a, const M3& b) {
  M3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

M3 transposed(const M3& a) {
  M3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c[i][j] = a[j][i];
  return c;
}

void project(const KernelArgs& a) {
  const ir::Attrs& at = a.node.attrs;
  double fx = at.f("fx"), fy = at.f("fy"), cx = at.f("cx"), cy = at.f("cy"), near = at.f("near"), eps2d = at.f("eps2d");
  double width = static_cast<double>(at.i("width")), height = static_cast<double>(at.i("height"));
  const HostView &means = a.in[0], &quats = a.in[1], &scales = a.in[2], &sh = a.in[3], &view = a.in[4];
  int64_t n = means.shape[0], k_count = sh.shape[1], channels = sh.shape[2];
  M3 r{};
  double t[3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r[i][j] = rd(view, i * 4 + j);
    t[i] = rd(view, i * 4 + 3);
  }
  double eye[3];  // the camera centre, −Rᵀ t
  for (int j = 0; j < 3; ++j) eye[j] = -(r[0][j] * t[0] + r[1][j] * t[1] + r[2][j] * t[2]);
  for (int64_t g = 0; g < n; ++g) {
    double p[3], pc[3];
    for (int j = 0; j < 3; ++j) p[j] = rd(means, g * 3 + j);
    for (int i = 0; i < 3; ++i) pc[i] = r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2] + t[i];
    double w = rd(quats, g * 4), x = rd(quats, g * 4 + 1), y = rd(quats, g * 4 + 2), z = rd(quats, g * 4 + 3);
    double qn = std::sqrt(w * w + x * x + y * y + z * z);
    w /= qn, x /= qn, y /= qn, z /= qn;
    M3 q{{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    M3 s{};
    for (int j = 0; j < 3; ++j) s[j][j] = rd(scales, g * 3 + j);
    M3 m = mul(q, s);
    M3 cam = mul(mul(r, mul(m, transposed(m))), transposed(r));
    double depth = pc[2], zc = std::max(depth, near);
    double lim_x = 1.3 * 0.5 * width / fx, lim_y = 1.3 * 0.5 * height / fy;
    double tx = std::clamp(pc[0] / zc, -lim_x, lim_x), ty = std::clamp(pc[1] / zc, -lim_y, lim_y);
    double jac[2][3] = {{fx / zc, 0, -fx * tx / zc}, {0, fy / zc, -fy * ty / zc}};
    double cov[2][2] = {};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l) cov[i][j] += jac[i][k] * cam[k][l] * jac[j][l];
    cov[0][0] += eps2d, cov[1][1] += eps2d;
    double det = cov[0][0] * cov[1][1] - cov[0][1] * cov[0][1];
    double mid = 0.5 * (cov[0][0] + cov[1][1]);
    double radius = std::ceil(3 * std::sqrt(mid + std::sqrt(std::max(0.1, mid * mid - det))));
    double u = fx * pc[0] / zc + cx, v = fy * pc[1] / zc + cy;
    bool visible = depth >= near && u + radius >= 0 && u - radius <= width && v + radius >= 0 && v - radius <= height;
    double out2[2] = {u, v}, conic[3] = {cov[1][1] / det, -cov[0][1] / det, cov[0][0] / det};
    for (int j = 0; j < 2; ++j) wd(a.out[0], g * 2 + j, visible ? out2[j] : 0.0);
    for (int j = 0; j < 3; ++j) wd(a.out[1], g * 3 + j, visible ? conic[j] : 0.0);
    wd(a.out[3], g, depth);
    wi(a.out[4], g, visible ? static_cast<int64_t>(radius) : 0);
    double d[3], len = 0;
    for (int j = 0; j < 3; ++j) d[j] = p[j] - eye[j], len += d[j] * d[j];
    len = std::sqrt(len);
    double basis[16] = {};
    splat_sh::basis(d[0] / len, d[1] / len, d[2] / len, static_cast<int>(k_count), [&](int k, double v) { basis[k] = v; });
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.5;
      for (int64_t k = 0; k < k_count; ++k) sum += basis[k] * rd(sh, (g * k_count + k) * channels + c);
      wd(a.out[2], g * channels + c, std::max(sum, 0.0));
    }
  }
}

// One Gaussian's part in one pixel.
struct Hit {
  int64_t g;
  double dx, dy;     // pixel centre − mean
  double gauss;      // exp(−σ)
  double alpha;      // min(0.99, opacity · gauss)
  double t;          // transmittance before it
};

struct PixelResult {
  std::vector<Hit> hits;
  double t_final = 1;
};

// The compositing list of pixel (x, y): every Gaussian whose box holds its centre, by depth.
PixelResult composite(const std::vector<HostView>& in, int64_t x, int64_t y) {
  const HostView &m = in[0], &conic = in[1], &opac = in[3], &depth = in[4], &radii = in[5];
  int64_t n = m.shape[0];
  double px = static_cast<double>(x) + 0.5, py = static_cast<double>(y) + 0.5;
  std::vector<int64_t> order;
  for (int64_t g = 0; g < n; ++g) {
    double r = static_cast<double>(ri(radii, g));
    if (r > 0 && std::fabs(px - rd(m, g * 2)) <= r && std::fabs(py - rd(m, g * 2 + 1)) <= r) order.push_back(g);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return rd(depth, p) < rd(depth, q); });
  PixelResult out;
  for (int64_t g : order) {
    double dx = px - rd(m, g * 2), dy = py - rd(m, g * 2 + 1);
    double a = rd(conic, g * 3), b = rd(conic, g * 3 + 1), c = rd(conic, g * 3 + 2);
    double sigma = 0.5 * (a * dx * dx + c * dy * dy) + b * dx * dy;
    if (sigma < 0) continue;
    double gauss = std::exp(-sigma), alpha = std::min(0.99, rd(opac, g) * gauss);
    if (alpha < 1.0 / 255) continue;
    double next = out.t_final * (1 - alpha);
    if (next < 1e-4) break;
    out.hits.push_back({g, dx, dy, gauss, alpha, out.t_final});
    out.t_final = next;
  }
  return out;
}

double background(const std::vector<HostView>& in, int64_t c) { return in.size() > 6 ? rd(in[6], c) : 0.0; }

void rasterize(const KernelArgs& a) {
  int64_t width = a.node.attrs.i("width"), height = a.node.attrs.i("height"), channels = a.in[2].shape[1];
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      PixelResult p = composite(a.in, x, y);
      int64_t pixel = y * width + x;
      for (int64_t c = 0; c < channels; ++c) {
        double sum = p.t_final * background(a.in, c);
        for (const Hit& h : p.hits) sum += h.alpha * h.t * rd(a.in[2], h.g * channels + c);
        wd(a.out[0], pixel * channels + c, sum);
      }
      wd(a.out[1], pixel, 1 - p.t_final);
    }
}

void rasterize_grad(const KernelArgs& a) {
  int64_t width = a.node.attrs.i("width"), height = a.node.attrs.i("height"), channels = a.in[2].shape[1];
  int64_t n = a.in[0].shape[0];
  const HostView &colors = a.in[2], &opac = a.in[3], &conic = a.in[1], &g_image = a.in[7], &g_alpha = a.in[8];
  std::vector<double> gm(static_cast<size_t>(n * 2)), gconic(static_cast<size_t>(n * 3)), gcolor(static_cast<size_t>(n * channels)),
      gop(static_cast<size_t>(n)), gbg(static_cast<size_t>(channels));
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      PixelResult p = composite(a.in, x, y);
      int64_t pixel = y * width + x;
      double ga = rd(g_alpha, pixel);
      std::vector<double> gi(static_cast<size_t>(channels)), suffix(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) {
        gi[static_cast<size_t>(c)] = rd(g_image, pixel * channels + c);
        suffix[static_cast<size_t>(c)] = p.t_final * rd(a.in[6], c);  // Σ over later terms, background first
        gbg[static_cast<size_t>(c)] += gi[static_cast<size_t>(c)] * p.t_final;
      }
      // d image / d αₖ = Tₖ cₖ − (Σ_{j>k} αⱼ Tⱼ cⱼ + T·bg)/(1 − αₖ); d alpha / d αₖ = T/(1 − αₖ)
      for (size_t k = p.hits.size(); k-- > 0;) {
        const Hit& h = p.hits[k];
        double d_alpha = ga * p.t_final / (1 - h.alpha);
        for (int64_t c = 0; c < channels; ++c) {
          double color = rd(colors, h.g * channels + c);
          gcolor[static_cast<size_t>(h.g * channels + c)] += gi[static_cast<size_t>(c)] * h.alpha * h.t;
          d_alpha += gi[static_cast<size_t>(c)] * (h.t * color - suffix[static_cast<size_t>(c)] / (1 - h.alpha));
          suffix[static_cast<size_t>(c)] += h.alpha * h.t * color;
        }
        if (rd(opac, h.g) * h.gauss >= 0.99) continue;  // the clamp: α does not move
        gop[static_cast<size_t>(h.g)] += d_alpha * h.gauss;
        double d_sigma = -d_alpha * h.alpha;
        double ca = rd(conic, h.g * 3), cb = rd(conic, h.g * 3 + 1), cc = rd(conic, h.g * 3 + 2);
        gconic[static_cast<size_t>(h.g * 3)] += d_sigma * 0.5 * h.dx * h.dx;
        gconic[static_cast<size_t>(h.g * 3 + 1)] += d_sigma * h.dx * h.dy;
        gconic[static_cast<size_t>(h.g * 3 + 2)] += d_sigma * 0.5 * h.dy * h.dy;
        gm[static_cast<size_t>(h.g * 2)] -= d_sigma * (ca * h.dx + cb * h.dy);
        gm[static_cast<size_t>(h.g * 2 + 1)] -= d_sigma * (cb * h.dx + cc * h.dy);
      }
    }
  const std::vector<double>* outs[5] = {&gm, &gconic, &gcolor, &gop, &gbg};
  for (size_t o = 0; o < 5; ++o)
    for (size_t i = 0; i < outs[o]->size(); ++i) wd(a.out[o], static_cast<int64_t>(i), (*outs[o])[i]);
}

}  // namespace

void register_splat(KernelTable& t) {
  t[static_cast<size_t>(Op::splat_project)] = project;
  t[static_cast<size_t>(Op::splat_rasterize)] = rasterize;
  t[static_cast<size_t>(Op::splat_rasterize_grad)] = rasterize_grad;
}

}  // namespace rlx::backends::reference
