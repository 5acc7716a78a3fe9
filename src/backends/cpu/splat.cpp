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
#include "backends/cpu/simd.h"
#include "ops/splat_bin_math.h"
#include "ops/splat_project_grad_math.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

constexpr int kTile = 16;
constexpr double kMinAlpha = 1.0 / 255, kMaxAlpha = 0.99, kMinTransmittance = 1e-4;

using splat_bin::Box;

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


// splat_project: each Gaussian by splat_math::project_one across the thread pool.
template <class T>
void project(const KernelArgs& a) {
  splat_math::Camera<T> cam = splat_math::make_camera(splat_math::intrinsics_of<T>(a.node.attrs), a.in[4].as<T>());
  int k_count = static_cast<int>(a.in[3].shape[1]);
  int64_t channels = a.in[3].shape[2];
  parallel_items(a.in[0].shape[0], 1024, [&](int64_t g) {
    splat_math::project_one(cam, g, a.in[0].as<T>(), a.in[1].as<T>(), a.in[2].as<T>(), a.in[3].as<T>(), k_count, channels, a.out[0].as<T>(),
                            a.out[1].as<T>(), a.out[2].as<T>(), a.out[3].as<T>(), a.out[4].as<int32_t>());
  });
}

// splat_project_grad: each Gaussian by splat_math::project_grad_one; the viewmat's gradient is
// summed per block of kGradBlock Gaussians, then over the blocks in order (the same sum for any
// thread count).
constexpr int64_t kGradBlock = 1024;
template <class T>
void project_grad(const KernelArgs& a) {
  splat_math::Camera<T> cam = splat_math::make_camera(splat_math::intrinsics_of<T>(a.node.attrs), a.in[4].as<T>());
  int k_count = static_cast<int>(a.in[3].shape[1]);
  int64_t channels = a.in[3].shape[2], n = a.in[0].shape[0];
  int64_t blocks = (n + kGradBlock - 1) / kGradBlock;
  std::vector<T> partial(static_cast<size_t>(blocks) * 12, T(0));
  parallel_items(blocks, 1, [&](int64_t blk) {
    T* view = partial.data() + blk * 12;
    for (int64_t g = blk * kGradBlock; g < std::min(n, (blk + 1) * kGradBlock); ++g)
      splat_math::project_grad_one(cam, g, a.in[0].as<T>(), a.in[1].as<T>(), a.in[2].as<T>(), a.in[3].as<T>(), k_count, channels, a.in[5].as<T>(),
                                   a.in[6].as<T>(), a.in[7].as<T>(), a.in[8].as<T>(), a.out[0].as<T>(), a.out[1].as<T>(), a.out[2].as<T>(),
                                   a.out[3].as<T>(), view);
  });
  T* g_view = a.out[4].as<T>();
  for (int e = 0; e < 16; ++e) {
    double sum = 0;
    if (e < 12)
      for (int64_t blk = 0; blk < blocks; ++blk) sum += static_cast<double>(partial[static_cast<size_t>(blk * 12 + e)]);
    g_view[e] = static_cast<T>(sum);
  }
}

// The Gaussians of every tile, nearest first.
struct Bins {
  int64_t tiles_x = 0, tiles_y = 0;
  std::vector<Box> boxes;          // per Gaussian
  std::vector<int64_t> offsets;    // per tile, into ids (tiles + 1)
  std::vector<int32_t> ids;
  const int32_t* tile_ids(int64_t tile) const { return ids.data() + offsets[static_cast<size_t>(tile)]; }
  int64_t tile_count(int64_t tile) const { return offsets[static_cast<size_t>(tile) + 1] - offsets[static_cast<size_t>(tile)]; }
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
  const T* conic = a.in[1].as<T>();
  const T* opacity = a.in[3].as<T>();
  parallel_items(n, 4096, [&](int64_t g) {
    if (radii[g] <= 0) return;
    const T* c = conic + g * 3;
    b.boxes[static_cast<size_t>(g)] = splat_bin::box_of(static_cast<double>(m[g * 2]), static_cast<double>(m[g * 2 + 1]), radii[g], static_cast<double>(c[0]),
                                                        static_cast<double>(c[1]), static_cast<double>(c[2]), static_cast<double>(opacity[g]), width,
                                                        height, sizeof(T) > 4);
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
  auto for_tiles = [&](const Box& box, auto f) {
    for (int32_t ty = box.y0 / kTile; ty <= box.y1 / kTile; ++ty)
      for (int32_t tx = box.x0 / kTile; tx <= box.x1 / kTile; ++tx) f(static_cast<size_t>(ty * b.tiles_x + tx));
  };
  // a counting sort by tile that keeps the depth order: each chunk of the sorted Gaussians counts
  // its pairs per tile, then writes them after the earlier chunks' pairs of that tile
  int64_t chunks = std::min<int64_t>(num_threads(), std::max<int64_t>(1, static_cast<int64_t>(order.size()) / 4096));
  int64_t per = (static_cast<int64_t>(order.size()) + chunks - 1) / chunks;
  std::vector<std::vector<int64_t>> at(static_cast<size_t>(chunks), std::vector<int64_t>(tiles, 0));
  auto chunk_range = [&](int64_t c) {
    return std::pair<size_t, size_t>(static_cast<size_t>(std::min<int64_t>(c * per, static_cast<int64_t>(order.size()))),
                                     static_cast<size_t>(std::min<int64_t>((c + 1) * per, static_cast<int64_t>(order.size()))));
  };
  parallel_items(chunks, 1, [&](int64_t c) {
    auto [lo, hi] = chunk_range(c);
    std::vector<int64_t>& count = at[static_cast<size_t>(c)];
    for (size_t i = lo; i < hi; ++i) for_tiles(b.boxes[static_cast<size_t>(order[i])], [&](size_t t) { ++count[t]; });
  });
  b.offsets.assign(tiles + 1, 0);
  int64_t total = 0;
  for (size_t t = 0; t < tiles; ++t) {
    b.offsets[t] = total;
    for (auto& count : at) {
      int64_t n = count[t];
      count[t] = total;  // where this chunk's pairs of tile t start
      total += n;
    }
  }
  b.offsets[tiles] = total;
  b.ids.resize(static_cast<size_t>(total));
  parallel_items(chunks, 1, [&](int64_t c) {
    auto [lo, hi] = chunk_range(c);
    std::vector<int64_t>& next = at[static_cast<size_t>(c)];
    for (size_t i = lo; i < hi; ++i) {
      int32_t g = order[i];
      for_tiles(b.boxes[static_cast<size_t>(g)], [&](size_t t) { b.ids[static_cast<size_t>(next[t]++)] = g; });
    }
  });
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

// The Gaussians of a tile whose box holds row y, in the tile's order: each pixel of the row then
// walks only these (a tile's list holds Gaussians of all its 16 rows).
void row_list(const Bins& b, const int32_t* ids, int64_t count, int64_t y, std::vector<int32_t>& out) {
  out.clear();
  for (int64_t j = 0; j < count; ++j) {
    const Box& box = b.boxes[static_cast<size_t>(ids[j])];
    if (y >= box.y0 && y <= box.y1) out.push_back(ids[j]);
  }
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

// A tile's Gaussians gathered into columns for simd::splat_row (one worker's buffers, reused).
struct PackedTile {
  std::vector<float> cols[12], color;
  simd::SplatTile view;
  void pack(const Inputs<float>& in, const Bins& b, const int32_t* ids, int64_t count) {
    for (auto& c : cols) c.resize(static_cast<size_t>(count));
    color.resize(static_cast<size_t>(count * in.channels));
    int64_t kept = 0;
    for (int64_t j = 0; j < count; ++j) {
      int32_t g = ids[j];
      const Box& box = b.boxes[static_cast<size_t>(g)];
      const float* c = in.conic + g * 3;
      float o = in.opacity[g];
      // a Gaussian whose peak α is below 1/255 never shows; one with a ≤ 0 (not a footprint the
      // projection makes) keeps row_k 0, so no row of it is skipped
      if (!(o * 255 >= 1)) continue;
      float row_k = c[0] > 0 ? std::max(0.f, (c[0] * c[2] - c[1] * c[1]) / (2 * c[0])) : 0.f;
      float v[12] = {in.m[g * 2], in.m[g * 2 + 1], c[0], c[1], c[2], o, float(box.x0), float(box.x1), float(box.y0), float(box.y1),
                     row_k * (1 - 1e-4f), std::log(255 * o) + 1e-3f};
      for (int k = 0; k < 12; ++k) cols[k][static_cast<size_t>(kept)] = v[k];
      for (int64_t k = 0; k < in.channels; ++k) color[static_cast<size_t>(kept * in.channels + k)] = in.color[g * in.channels + k];
      ++kept;
    }
    view = {kept, in.channels, cols[0].data(), cols[1].data(), cols[2].data(), cols[3].data(), cols[4].data(), cols[5].data(),
            cols[6].data(), cols[7].data(), cols[8].data(), cols[9].data(), cols[10].data(), cols[11].data(), color.data()};
  }
};

// f32 with up to four channels: rows of each tile a vector of pixels at a time.
void rasterize_simd(const KernelArgs& a) {
  int64_t width = a.node.attrs.i("width"), height = a.node.attrs.i("height");
  Bins b = bin<float>(a, width, height);
  Inputs<float> in(a);
  int64_t channels = in.channels;
  float* image = a.out[0].as<float>();
  float* alpha_out = a.out[1].as<float>();
  std::vector<PackedTile> packs(static_cast<size_t>(num_threads()));
  over_tiles(b.tiles_x * b.tiles_y, num_threads(), [&](int w, int64_t tile) {
    PackedTile& p = packs[static_cast<size_t>(w)];
    p.pack(in, b, b.tile_ids(tile), b.tile_count(tile));
    int64_t tx = tile % b.tiles_x, ty = tile / b.tiles_x;
    int64_t x_begin = tx * kTile, x_end = std::min(width, x_begin + kTile);
    float t[4 * kTile];
    int64_t y_end = std::min(height, (ty + 1) * kTile), span = x_end - x_begin;
    for (int64_t y = ty * kTile; y < y_end; y += 4) {
      int64_t rows = std::min<int64_t>(4, y_end - y);
      float* block = image + (y * width + x_begin) * channels;
      simd::splat_rows(p.view, y, rows, x_begin, x_end, block, width * channels, t, kTile);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < span; ++i) {
          float tr = t[r * kTile + i];
          if (in.background)
            for (int64_t k = 0; k < channels; ++k) block[(r * width + i) * channels + k] += tr * in.background[k];
          alpha_out[(y + r) * width + x_begin + i] = 1 - tr;
        }
    }
  });
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
    const int32_t* ids = b.tile_ids(tile);
    int64_t count = b.tile_count(tile);
    int64_t tx = tile % b.tiles_x, ty = tile / b.tiles_x;
    std::vector<T> acc(static_cast<size_t>(channels));
    std::vector<int32_t> row;
    for (int64_t y = ty * kTile; y < std::min(height, (ty + 1) * kTile); ++y) {
      row_list(b, ids, count, y, row);
      for (int64_t x = tx * kTile; x < std::min(width, (tx + 1) * kTile); ++x) {
        T px = static_cast<T>(x) + T(0.5), py = static_cast<T>(y) + T(0.5);
        std::fill(acc.begin(), acc.end(), T(0));
        T t = 1;
        for (int32_t g : row) {
          const Box& box = b.boxes[static_cast<size_t>(g)];
          if (x < box.x0 || x > box.x1) continue;
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
    const int32_t* ids = b.tile_ids(tile);
    int64_t count = b.tile_count(tile);
    int64_t tx = tile % b.tiles_x, ty = tile / b.tiles_x;
    std::vector<Hit<T>> hits;
    std::vector<T> suffix(static_cast<size_t>(channels));
    std::vector<int32_t> row;
    for (int64_t y = ty * kTile; y < std::min(height, (ty + 1) * kTile); ++y) {
      row_list(b, ids, count, y, row);
      for (int64_t x = tx * kTile; x < std::min(width, (tx + 1) * kTile); ++x) {
        T px = static_cast<T>(x) + T(0.5), py = static_cast<T>(y) + T(0.5);
        hits.clear();
        T t = 1;
        for (int32_t g : row) {
          const Box& box = b.boxes[static_cast<size_t>(g)];
          if (x < box.x0 || x > box.x1) continue;
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

HostKernel make_project(const ir::Node& node, const ir::Graph& g) {
  if (g.type(node.inputs[0]).dtype == DType::f64) return project<double>;
  return project<float>;
}

bool claims_project(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64});
}

HostKernel make_project_grad(const ir::Node& node, const ir::Graph& g) {
  if (g.type(node.inputs[0]).dtype == DType::f64) return project_grad<double>;
  return project_grad<float>;
}

HostKernel make_rasterize(const ir::Node& node, const ir::Graph& g) {
  if (g.type(node.inputs[0]).dtype == DType::f64) return rasterize<double>;
  if (g.type(node.inputs[2]).shape[1].value() <= 4) return rasterize_simd;
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
  t[static_cast<size_t>(Op::splat_project)] = {claims_project, make_project};
  t[static_cast<size_t>(Op::splat_project_grad)] = {claims_project, make_project_grad};
  t[static_cast<size_t>(Op::splat_rasterize)] = {claims_splat, make_rasterize};
  t[static_cast<size_t>(Op::splat_rasterize_grad)] = {claims_splat, make_rasterize_grad};
}

}  // namespace rlx::backends::cpu
