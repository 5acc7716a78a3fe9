// Data movement on raw element bytes (1, 2, 4, 8 or 16 bytes), so every dtype but packed i4
// shares one kernel.
#include <cstring>

#include "backends/cpu/kernels.h"
#include "rlx/error.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

template <class F>
void by_size(DType d, F&& f) {
  switch (dtype_size(d)) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    case 16: f(Bytes16{}); break;
  }
}

// For every output element in order, the source offset computed from per-dim strides: the
// output walks its shape while the source offset advances by src_strides (odometer).
template <class T>
void gather_strided(T* y, const T* x, const std::vector<int64_t>& out_shape, const std::vector<int64_t>& src_strides, int64_t src_base) {
  size_t r = out_shape.size();
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  if (n == 0) return;
  if (r == 0) {
    y[0] = x[src_base];
    return;
  }
  int64_t inner = out_shape[r - 1], ist = src_strides[r - 1], rows = n / inner;
  parallel_items(rows, 16384 / std::max<int64_t>(1, inner), [&](int64_t row) {
    int64_t rem = row, off = src_base;
    for (size_t d = r - 1; d-- > 0;) {
      off += (rem % out_shape[d]) * src_strides[d];
      rem /= out_shape[d];
    }
    T* yr = y + row * inner;
    for (int64_t i = 0; i < inner; ++i) yr[i] = x[off + i * ist];
  });
}

HostKernel make_reshape(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    if (a.out[0].data != a.in[0].data) std::memcpy(a.out[0].data, a.in[0].data, dtype_bytes(a.in[0].dtype, a.in[0].numel));
  };
}

HostKernel make_transpose(const ir::Node& n, const ir::Graph&) {
  ir::Ints perm = n.attrs.ints("perm");
  return [perm](const KernelArgs& a) {
    std::vector<int64_t> xs = contiguous_strides(a.in[0].shape), st;
    for (int64_t p : perm) st.push_back(xs[static_cast<size_t>(p)]);
    by_size(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      gather_strided(a.out[0].as<T>(), a.in[0].as<T>(), a.out[0].shape, st, 0);
    });
  };
}

HostKernel make_broadcast(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const auto &in = a.in[0].shape, &out = a.out[0].shape;
    std::vector<int64_t> cs = contiguous_strides(in), st(out.size(), 0);
    size_t off = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) st[off + d] = in[d] == 1 ? 0 : cs[d];
    by_size(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      gather_strided(a.out[0].as<T>(), a.in[0].as<T>(), out, st, 0);
    });
  };
}

HostKernel make_slice(const ir::Node& n, const ir::Graph&) {
  Shape start = n.attrs.dims("start");
  ir::Ints stride = n.attrs.ints("stride");
  return [start, stride](const KernelArgs& a) {
    std::vector<int64_t> xs = contiguous_strides(a.in[0].shape), st;
    int64_t base = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      base += start[d].value() * xs[d];
      st.push_back(stride[d] * xs[d]);
    }
    by_size(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      gather_strided(a.out[0].as<T>(), a.in[0].as<T>(), a.out[0].shape, st, base);
    });
  };
}

HostKernel make_concat(const ir::Node& n, const ir::Graph&) {
  int64_t axis_attr = n.attrs.i("axis");
  return [axis_attr](const KernelArgs& a) {
    const auto& ys = a.out[0].shape;
    int64_t axis = normalize_axis(axis_attr, ys.size());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= ys[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < ys.size(); ++d) inner *= ys[d];
    size_t es = dtype_size(a.out[0].dtype);
    int64_t out_row = ys[static_cast<size_t>(axis)] * inner;
    int64_t col = 0;
    for (const HostView& x : a.in) {
      int64_t row = x.shape[static_cast<size_t>(axis)] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(static_cast<uint8_t*>(a.out[0].data) + (o * out_row + col) * static_cast<int64_t>(es),
                    static_cast<const uint8_t*>(x.data) + o * row * static_cast<int64_t>(es), static_cast<size_t>(row) * es);
      col += row;
    }
  };
}

HostKernel make_pad(const ir::Node& n, const ir::Graph&) {
  ir::Ints lo = n.attrs.ints("lo");
  ir::Ints interior = n.attrs.has("interior") ? n.attrs.ints("interior") : ir::Ints(lo.size(), 0);
  std::string mode = n.attrs.s("mode");
  double value = n.attrs.f("value");
  return [=](const KernelArgs& a) {
    const auto &xs = a.in[0].shape, &ys = a.out[0].shape;
    std::vector<int64_t> st = contiguous_strides(xs);
    uint64_t fill_bits[2] = {0, 0};  // the widest element: c128
    store_f64(fill_bits, a.out[0].dtype, 0, value);
    by_size(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      T* y = a.out[0].as<T>();
      T fill;
      std::memcpy(&fill, fill_bits, sizeof(T));
      int64_t total = a.out[0].numel;
      if (mode == "constant" && !xs.empty()) {
        // Fill, then copy each input row to its place (every dim's position is i·(interior+1) + lo;
        // positions outside the output are cropped).
        parallel_items((total + 4095) / 4096, 16, [&](int64_t blk) {
          std::fill(y + blk * 4096, y + std::min(total, (blk + 1) * 4096), fill);
        });
        size_t r = xs.size();
        int64_t inner = xs[r - 1], rows = a.in[0].numel / std::max<int64_t>(1, inner);
        std::vector<int64_t> ycs = contiguous_strides(ys);
        int64_t step = interior[r - 1] + 1;
        // the input columns whose positions land inside the output's last dim
        int64_t i0 = lo[r - 1] >= 0 ? 0 : (-lo[r - 1] + step - 1) / step;
        int64_t i1 = std::min<int64_t>(inner, ys[r - 1] - lo[r - 1] <= 0 ? 0 : (ys[r - 1] - lo[r - 1] - 1) / step + 1);
        if (inner == 0 || i0 >= i1) return;
        parallel_items(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)), [&](int64_t row) {
          int64_t rem = row, off = 0;
          for (size_t d = r - 1; d-- > 0;) {
            int64_t pos = (rem % xs[d]) * (interior[d] + 1) + lo[d];
            rem /= xs[d];
            if (pos < 0 || pos >= ys[d]) return;
            off += pos * ycs[d];
          }
          const T* xr = x + row * inner;
          T* yr = y + off + lo[r - 1];
          for (int64_t i = i0; i < i1; ++i) yr[i * step] = xr[i];
        });
        return;
      }
  parallel_items(total, 16384, [&](int64_t i) {
        int64_t rem = i, src = 0;
        bool inside = true;
        for (size_t d = ys.size(); d-- > 0;) {
          int64_t p = rem % ys[d] - lo[d], len = xs[d];
          rem /= ys[d];
          if (interior[d] > 0 && p >= 0) {
            if (p % (interior[d] + 1) != 0) {
              inside = false;
              break;
            }
            p /= interior[d] + 1;
          }
          if (p < 0 || p >= len) {
            if (mode == "constant") {
              inside = false;
              break;
            }
            if (mode == "edge") p = p < 0 ? 0 : len - 1;
            else p = p < 0 ? -p : 2 * (len - 1) - p;
          }
          src += p * st[d];
        }
        y[i] = inside ? x[src] : fill;
      });
    });
  };
}

void check_index(int64_t v, int64_t n, const ir::Node& node) {
  if (v < 0 || v >= n)
    throw Error(ErrorKind::runtime, cat(ir::op_keyword(node.op), node.name.empty() ? "" : cat(" \"", node.name, "\""), ": index ", v,
                                        " is out of range [0, ", n, ")"));
}

int64_t index_at(const HostView& idx, int64_t k) {
  return idx.dtype == DType::i32 ? idx.as<int32_t>()[k] : idx.as<int64_t>()[k];
}

HostKernel make_gather(const ir::Node& n, const ir::Graph&) {
  int64_t axis_attr = n.attrs.i("axis");
  return [axis_attr](const KernelArgs& a) {
    const auto& xs = a.in[0].shape;
    int64_t axis = normalize_axis(axis_attr, xs.size());
    int64_t outer = 1, inner = 1, len = xs[static_cast<size_t>(axis)], K = a.in[1].numel;
    for (int64_t d = 0; d < axis; ++d) outer *= xs[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < xs.size(); ++d) inner *= xs[d];
    for (int64_t k = 0; k < K; ++k) check_index(index_at(a.in[1], k), len, a.node);
    size_t row = static_cast<size_t>(inner) * dtype_size(a.in[0].dtype);
    const uint8_t* x = static_cast<const uint8_t*>(a.in[0].data);
    uint8_t* y = static_cast<uint8_t*>(a.out[0].data);
    parallel_items(outer * K, 16384 / std::max<int64_t>(1, inner), [&](int64_t ok) {
      int64_t o = ok / K, k = ok % K;
      std::memcpy(y + (o * K + k) * row, x + (o * len + index_at(a.in[1], k)) * row, row);
    });
  };
}

HostKernel make_scatter(const ir::Node& n, const ir::Graph&) {
  int64_t axis_attr = n.attrs.i("axis");
  std::string red = n.attrs.s("reduce");
  return [=](const KernelArgs& a) {
    const auto& xs = a.in[0].shape;
    int64_t axis = normalize_axis(axis_attr, xs.size());
    int64_t outer = 1, inner = 1, len = xs[static_cast<size_t>(axis)], K = a.in[1].numel;
    for (int64_t d = 0; d < axis; ++d) outer *= xs[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < xs.size(); ++d) inner *= xs[d];
    for (int64_t k = 0; k < K; ++k) check_index(index_at(a.in[1], k), len, a.node);
    if (a.out[0].data != a.in[0].data) std::memcpy(a.out[0].data, a.in[0].data, dtype_bytes(a.in[0].dtype, a.in[0].numel));
    if (red == "none") {
      by_size(a.in[0].dtype, [&](auto tag) {
        using T = decltype(tag);
        const T* u = a.in[2].as<T>();
        T* y = a.out[0].as<T>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t k = 0; k < K; ++k)
            std::memcpy(y + (o * len + index_at(a.in[1], k)) * inner, u + (o * K + k) * inner, static_cast<size_t>(inner) * sizeof(T));
      });
      return;
    }
    // complex values add part by part: a row of `inner` of them is 2·inner reals
    int64_t w = is_complex(a.in[0].dtype) ? 2 * inner : inner;
    dispatch_typed(real_part_dtype(a.in[0].dtype), [&](auto tag) {
      using T = decltype(tag);
      const T* u = a.in[2].as<T>();
      T* y = a.out[0].as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < K; ++k) {
          T* dst = y + (o * len + index_at(a.in[1], k)) * w;
          const T* src = u + (o * K + k) * w;
          for (int64_t i = 0; i < w; ++i)
            dst[i] = red == "add" ? static_cast<T>(dst[i] + src[i]) : red == "max" ? std::max(dst[i], src[i]) : std::min(dst[i], src[i]);
        }
    });
  };
}

bool claims_bytes(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return in[0].dtype != DType::i4; }

bool claims_scatter(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  if (a.s("reduce") == "none") return in[0].dtype != DType::i4;
  if (is_complex(in[0].dtype)) return a.s("reduce") == "add";
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::i32, DType::i64});
}

}  // namespace

void register_movement(KernelTable& t) {
  t[static_cast<size_t>(Op::reshape)] = {claims_bytes, make_reshape};
  t[static_cast<size_t>(Op::transpose)] = {claims_bytes, make_transpose};
  t[static_cast<size_t>(Op::broadcast)] = {claims_bytes, make_broadcast};
  t[static_cast<size_t>(Op::slice)] = {claims_bytes, make_slice};
  t[static_cast<size_t>(Op::concat)] = {claims_bytes, make_concat};
  t[static_cast<size_t>(Op::pad)] = {claims_bytes, make_pad};
  t[static_cast<size_t>(Op::gather)] = {claims_bytes, make_gather};
  t[static_cast<size_t>(Op::scatter)] = {claims_scatter, make_scatter};
}

}  // namespace rlx::backends::cpu
