// The Gaussian-splatting rasterizer on the cpu: each visible Gaussian's pixel box, one stable
// radix sort of the visible Gaussians by depth, a counting sort of (tile, Gaussian) pairs into
// 16×16 tiles that keeps that order, then tiles composited in parallel (workers take the next
// tile from a counter, so a few crowded tiles do not stall one thread). The gradient walks each
// pixel's contributors again and runs the compositing sum backwards, each worker accumulating
// into its own gradient buffers, which are summed at the end.
#include <atomic>
#include <cmath>
#include <numeric>

#include "backends/cpu/kernels.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

constexpr int kTile = 16;
constexpr double kMinAlpha = 1.0 / 255, kMaxAlpha = 0.99, kMinTransmittance = 1e-4;

// The pixels a Gaussian covers: x0..x1 × y0..y1 inclusive, exactly those whose centre lies within
// its radius on both axes (the op's definition, evaluated in doubles as the reference does).
struct Box {
  int32_t x0 = 0, x1 = -1, y0 = 0, y1 = -1;
  bool empty() const { return x0 > x1 || y0 > y1; }
};

// The first and last pixel index in [0, size) with |i + ½ − centre| ≤ r.
std::pair<int32_t, int32_t> covered(double centre, double r, int64_t size) {
  auto inside = [&](int64_t i) { return std::fabs(static_cast<double>(i) + 0.5 - centre) <= r; };
  double lo_f = std::ceil(centre - r - 0.5), hi_f = std::floor(centre + r - 0.5);
  if (!(lo_f <= hi_f) || hi_f < -1 || lo_f > static_cast<double>(size)) return {0, -1};
  int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(lo_f), 0, size - 1), hi = std::clamp<int64_t>(static_cast<int64_t>(hi_f), 0, size - 1);
  // the rounding of the bounds above, settled by the exact test
  while (lo > 0 && inside(lo - 1)) --lo;
  while (lo <= hi && !inside(lo)) ++lo;
  while (hi + 1 < size && inside(hi + 1)) ++hi;
  while (hi >= lo && !inside(hi)) --hi;
  return {static_cast<int32_t>(lo), static_cast<int32_t>(hi)};
}

// Unsigned keys that order like the floats (negative ones flipped).
inline uint32_t order_key(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}
inline uint64_t order_key(double f) {
  uint64_t u;
  std::memcpy(&u, &f, 8);
  return u & 0x8000000000000000ull ? ~u : u | 0x8000000000000000ull;
}

// Stable LSD radix sort of `ids` by key, 8 bits a pass (equal depths keep index order).
template <class K>
void radix_sort(std::vector<int32_t>& ids, std::vector<K>& keys) {
  std::vector<int32_t> ids2(ids.size());
  std::vector<K> keys2(keys.size());
  for (size_t shift = 0; shift < sizeof(K) * 8; shift += 8) {
    size_t count[257] = {};
    for (K k : keys) ++count[((k >> shift) & 0xff) + 1];
    if (count[1] == keys.size() && ((keys.empty() ? 0 : keys[0] >> shift) & 0xff) == 0) continue;
    for (int i = 0; i < 256; ++i) count[i + 1] += count[i];
    for (size_t i = 0; i < keys.size(); ++i) {
      size_t at = count[(keys[i] >> shift) & 0xff]++;
      keys2[at] = keys[i];
      ids2[at] = ids[i];
    }
    keys.swap(keys2);
    ids.swap(ids2);
  }
}

// The Gaussians of every tile, nearest first.
struct Bins {
  int64_t tiles_x = 0, tiles_y = 0;
  std::vector<Box> boxes;          // per Gaussian
  std::vector<int64_t> offsets;    // per tile, into ids (tiles + 1)
  std::vector<int32_t> ids;
};

template <class T>
Bins bin(const KernelArgs& a, int64_t width, int64_t height) {
  const T* m = a.in[0].as<T>();
  const T* depth = a.in[4].as<T>();
  const int32_t* radii = a.in[5].as<int32_t>();
  int64_t n = a.in[0].shape[0];
  Bins b;
  b.tiles_x = (width + kTile - 1) / kTile, b.tiles_y = (height + kTile - 1) / kTile;
  b.boxes.resize(static_cast<size_t>(n));
  parallel_items(n, 4096, [&](int64_t g) {
    if (radii[g] <= 0) return;
    Box& box = b.boxes[static_cast<size_t>(g)];
    double r = radii[g];
    std::tie(box.x0, box.x1) = covered(static_cast<double>(m[g * 2]), r, width);
    std::tie(box.y0, box.y1) = covered(static_cast<double>(m[g * 2 + 1]), r, height);
  });
  using Key = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::vector<int32_t> order;
  std::vector<Key> keys;
  for (int64_t g = 0; g < n; ++g)
    if (!b.boxes[static_cast<size_t>(g)].empty()) {
      order.push_back(static_cast<int32_t>(g));
      keys.push_back(order_key(depth[g]));
    }
  radix_sort(order, keys);
  size_t tiles = static_cast<size_t>(b.tiles_x * b.tiles_y);
  b.offsets.assign(tiles + 1, 0);
  auto for_tiles = [&](const Box& box, auto f) {
    for (int32_t ty = box.y0 / kTile; ty <= box.y1 / kTile; ++ty)
      for (int32_t tx = box.x0 / kTile; tx <= box.x1 / kTile; ++tx) f(static_cast<size_t>(ty * b.tiles_x + tx));
  };
  for (int32_t g : order) for_tiles(b.boxes[static_cast<size_t>(g)], [&](size_t t) { ++b.offsets[t + 1]; });
  for (size_t t = 0; t < tiles; ++t) b.offsets[t + 1] += b.offsets[t];
  b.ids.resize(static_cast<size_t>(b.offsets[tiles]));
  std::vector<int64_t> fill(b.offsets.begin(), b.offsets.end() - 1);
  for (int32_t g : order) for_tiles(b.boxes[static_cast<size_t>(g)], [&](size_t t) { b.ids[static_cast<size_t>(fill[t]++)] = g; });
  return b;
}

// Runs work(worker, tile) over every tile; each worker pulls tiles from a shared counter.
template <class F>
void over_tiles(int64_t tiles, int workers, F&& work) {
  std::atomic<int64_t> next{0};
  rlx::parallel_for(workers, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t w = lo; w < hi; ++w)
      for (int64_t t = next++; t < tiles; t = next++) work(static_cast<int>(w), t);
  });
}

template <class T>
struct Inputs {
  const T *m, *conic, *color, *opacity, *background;
  int64_t channels;
  explicit Inputs(const KernelArgs& a)
      : m(a.in[0].as<T>()), conic(a.in[1].as<T>()), color(a.in[2].as<T>()), opacity(a.in[3].as<T>()),
        background(a.in.size() > 6 ? a.in[6].as<T>() : nullptr), channels(a.in[2].shape[1]) {}
};

// Gaussian g's part in the pixel with centre (px, py): false when it is skipped.
template <class T>
inline bool weigh(const Inputs<T>& in, int32_t g, T px, T py, T& dx, T& dy, T& gauss, T& alpha) {
  dx = px - in.m[g * 2], dy = py - in.m[g * 2 + 1];
  const T* c = in.conic + g * 3;
  T sigma = T(0.5) * (c[0] * dx * dx + c[2] * dy * dy) + c[1] * dx * dy;
  if (sigma < 0) return false;
  gauss = std::exp(-sigma);
  alpha = std::min(T(kMaxAlpha), in.opacity[g] * gauss);
  return alpha >= T(kMinAlpha);
}

template <class T>
void rasterize(const KernelArgs& a) {
  int64_t width = a.node.attrs.i("width"), height = a.node.attrs.i("height");
  Bins b = bin<T>(a, width, height);
  Inputs<T> in(a);
  int64_t channels = in.channels;
  T* image = a.out[0].as<T>();
  T* alpha_out = a.out[1].as<T>();
  over_tiles(b.tiles_x * b.tiles_y, num_threads(), [&](int, int64_t tile) {
    const int32_t* ids = b.ids.data() + b.offsets[static_cast<size_t>(tile)];
    int64_t count = b.offsets[static_cast<size_t>(tile) + 1] - b.offsets[static_cast<size_t>(tile)];
    int64_t tx = tile % b.tiles_x, ty = tile / b.tiles_x;
    std::vector<T> acc(static_cast<size_t>(channels));
    for (int64_t y = ty * kTile; y < std::min(height, (ty + 1) * kTile); ++y)
      for (int64_t x = tx * kTile; x < std::min(width, (tx + 1) * kTile); ++x) {
        T px = static_cast<T>(x) + T(0.5), py = static_cast<T>(y) + T(0.5);
        std::fill(acc.begin(), acc.end(), T(0));
        T t = 1;
        for (int64_t j = 0; j < count; ++j) {
          int32_t g = ids[j];
          const Box& box = b.boxes[static_cast<size_t>(g)];
          if (x < box.x0 || x > box.x1 || y < box.y0 || y > box.y1) continue;
          T dx, dy, gauss, alpha;
          if (!weigh(in, g, px, py, dx, dy, gauss, alpha)) continue;
          T next = t * (1 - alpha);
          if (next < T(kMinTransmittance)) break;
          const T* c = in.color + g * channels;
          for (int64_t k = 0; k < channels; ++k) acc[static_cast<size_t>(k)] += alpha * t * c[k];
          t = next;
        }
        T* out = image + (y * width + x) * channels;
        for (int64_t k = 0; k < channels; ++k) out[k] = acc[static_cast<size_t>(k)] + (in.background ? t * in.background[k] : T(0));
        alpha_out[y * width + x] = 1 - t;
      }
  });
}

template <class T>
struct Hit {
  int32_t g;
  T dx, dy, gauss, alpha, t;
};

template <class T>
void rasterize_grad(const KernelArgs& a) {
  int64_t width = a.node.attrs.i("width"), height = a.node.attrs.i("height");
  Bins b = bin<T>(a, width, height);
  Inputs<T> in(a);
  int64_t n = a.in[0].shape[0], channels = in.channels;
  const T* g_image = a.in[7].as<T>();
  const T* g_alpha = a.in[8].as<T>();
  int workers = num_threads();
  // per worker: means2d (2), conics (3), colors (C), opacity (1) per Gaussian, then background (C)
  int64_t stride = 6 + channels;
  std::vector<std::vector<T>> grads(static_cast<size_t>(workers));
  over_tiles(b.tiles_x * b.tiles_y, workers, [&](int w, int64_t tile) {
    std::vector<T>& grad = grads[static_cast<size_t>(w)];
    if (grad.empty()) grad.assign(static_cast<size_t>(n * stride + channels), T(0));
    T* gbg = grad.data() + n * stride;
    const int32_t* ids = b.ids.data() + b.offsets[static_cast<size_t>(tile)];
    int64_t count = b.offsets[static_cast<size_t>(tile) + 1] - b.offsets[static_cast<size_t>(tile)];
    int64_t tx = tile % b.tiles_x, ty = tile / b.tiles_x;
    std::vector<Hit<T>> hits;
    std::vector<T> suffix(static_cast<size_t>(channels));
    for (int64_t y = ty * kTile; y < std::min(height, (ty + 1) * kTile); ++y)
      for (int64_t x = tx * kTile; x < std::min(width, (tx + 1) * kTile); ++x) {
        T px = static_cast<T>(x) + T(0.5), py = static_cast<T>(y) + T(0.5);
        hits.clear();
        T t = 1;
        for (int64_t j = 0; j < count; ++j) {
          int32_t g = ids[j];
          const Box& box = b.boxes[static_cast<size_t>(g)];
          if (x < box.x0 || x > box.x1 || y < box.y0 || y > box.y1) continue;
          Hit<T> h{g, 0, 0, 0, 0, t};
          if (!weigh(in, g, px, py, h.dx, h.dy, h.gauss, h.alpha)) continue;
          T next = t * (1 - h.alpha);
          if (next < T(kMinTransmittance)) break;
          hits.push_back(h);
          t = next;
        }
        int64_t pixel = y * width + x;
        const T* gi = g_image + pixel * channels;
        for (int64_t k = 0; k < channels; ++k) {
          suffix[static_cast<size_t>(k)] = in.background ? t * in.background[k] : T(0);
          gbg[k] += gi[k] * t;
        }
        T ga_t = g_alpha[pixel] * t;
        for (size_t i = hits.size(); i-- > 0;) {
          const Hit<T>& h = hits[i];
          T* gg = grad.data() + h.g * stride;
          const T* c = in.color + h.g * channels;
          T inv = 1 / (1 - h.alpha), weight = h.alpha * h.t;
          T d_alpha = ga_t * inv;
          for (int64_t k = 0; k < channels; ++k) {
            gg[5 + k] += gi[k] * weight;
            d_alpha += gi[k] * (h.t * c[k] - suffix[static_cast<size_t>(k)] * inv);
            suffix[static_cast<size_t>(k)] += weight * c[k];
          }
          if (in.opacity[h.g] * h.gauss >= T(kMaxAlpha)) continue;  // clamped: α does not move
          gg[5 + channels] += d_alpha * h.gauss;
          T d_sigma = -d_alpha * h.alpha;
          const T* cn = in.conic + h.g * 3;
          gg[0] -= d_sigma * (cn[0] * h.dx + cn[1] * h.dy);
          gg[1] -= d_sigma * (cn[1] * h.dx + cn[2] * h.dy);
          gg[2] += d_sigma * T(0.5) * h.dx * h.dx;
          gg[3] += d_sigma * h.dx * h.dy;
          gg[4] += d_sigma * T(0.5) * h.dy * h.dy;
        }
      }
  });
  T *gm = a.out[0].as<T>(), *gc = a.out[1].as<T>(), *gcol = a.out[2].as<T>(), *gop = a.out[3].as<T>(), *gbg = a.out[4].as<T>();
  parallel_items(n, 8192, [&](int64_t g) {
    T sum[64];
    int64_t width_g = std::min<int64_t>(stride, 64);
    std::fill(sum, sum + width_g, T(0));
    for (const auto& grad : grads)
      if (!grad.empty())
        for (int64_t k = 0; k < width_g; ++k) sum[k] += grad[static_cast<size_t>(g * stride + k)];
    gm[g * 2] = sum[0], gm[g * 2 + 1] = sum[1];
    for (int k = 0; k < 3; ++k) gc[g * 3 + k] = sum[2 + k];
    for (int64_t k = 0; k < channels; ++k) gcol[g * channels + k] = sum[5 + k];
    gop[g] = sum[5 + channels];
  });
  for (int64_t k = 0; k < channels; ++k) {
    T s = 0;
    for (const auto& grad : grads)
      if (!grad.empty()) s += grad[static_cast<size_t>(n * stride + k)];
    gbg[k] = s;
  }
}

HostKernel make_rasterize(const ir::Node& node, const ir::Graph& g) {
  if (g.type(node.inputs[0]).dtype == DType::f64) return rasterize<double>;
  return rasterize<float>;
}

HostKernel make_rasterize_grad(const ir::Node& node, const ir::Graph& g) {
  if (g.type(node.inputs[0]).dtype == DType::f64) return rasterize_grad<double>;
  return rasterize_grad<float>;
}

// The per-Gaussian gradient rows are summed in a fixed-size buffer: up to 58 channels.
bool claims_splat(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  auto channels = in[2].shape[1].try_value();
  return is_one_of(in[0].dtype, {DType::f32, DType::f64}) && channels && *channels <= 58;
}

}  // namespace

void register_splat(KernelTable& t) {
  t[static_cast<size_t>(Op::splat_rasterize)] = {claims_splat, make_rasterize};
  t[static_cast<size_t>(Op::splat_rasterize_grad)] = {claims_splat, make_rasterize_grad};
}

}  // namespace rlx::backends::cpu
