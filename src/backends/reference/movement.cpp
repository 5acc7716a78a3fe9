// Data movement by index arithmetic, one element at a time (any dtype, i4 included).
#include <cstring>

#include "backends/reference/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

void reshape(const KernelArgs& a) {
  for (int64_t i = 0; i < a.out[0].numel; ++i) copy_element(a.out[0], i, a.in[0], i);
}

void transpose(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  const auto& perm = a.node.attrs.ints("perm");
  std::vector<int64_t> xs = strides_of(x.shape), coord;
  for (int64_t i = 0; i < y.numel; ++i) {
    unravel(i, y.shape, coord);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) src += coord[d] * xs[static_cast<size_t>(perm[d])];
    copy_element(y, i, x, src);
  }
}

void broadcast(const KernelArgs& a) {
  std::vector<int64_t> idx = broadcast_index(a.out[0].shape, a.in[0].shape);
  for (int64_t i = 0; i < a.out[0].numel; ++i) copy_element(a.out[0], i, a.in[0], idx[static_cast<size_t>(i)]);
}

void slice(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  const auto& start = a.node.attrs.dims("start");
  const auto& stride = a.node.attrs.ints("stride");
  std::vector<int64_t> xs = strides_of(x.shape), coord;
  for (int64_t i = 0; i < y.numel; ++i) {
    unravel(i, y.shape, coord);
    int64_t src = 0;
    for (size_t d = 0; d < coord.size(); ++d) src += (start[d].value() + coord[d] * stride[d]) * xs[d];
    copy_element(y, i, x, src);
  }
}

void concat(const KernelArgs& a) {
  const HostView& y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), y.shape.size());
  std::vector<int64_t> coord;
  int64_t base = 0;
  for (const HostView& x : a.in) {
    std::vector<int64_t> ys = strides_of(y.shape);
    for (int64_t i = 0; i < x.numel; ++i) {
      unravel(i, x.shape, coord);
      coord[static_cast<size_t>(axis)] += base;
      int64_t dst = 0;
      for (size_t d = 0; d < coord.size(); ++d) dst += coord[d] * ys[d];
      copy_element(y, dst, x, i);
    }
    base += x.shape[static_cast<size_t>(axis)];
  }
}

void pad(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  const auto& lo = a.node.attrs.ints("lo");
  const std::string& mode = a.node.attrs.s("mode");
  double value = a.node.attrs.f("value");
  std::vector<int64_t> interior = a.node.attrs.has("interior") ? a.node.attrs.ints("interior") : std::vector<int64_t>(x.shape.size(), 0);
  std::vector<int64_t> xs = strides_of(x.shape), coord;
  for (int64_t i = 0; i < y.numel; ++i) {
    unravel(i, y.shape, coord);
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < coord.size(); ++d) {
      int64_t p = coord[d] - lo[d], n = x.shape[d];
      if (interior[d] > 0 && p >= 0) {
        if (p % (interior[d] + 1) != 0) {
          inside = false;
          break;
        }
        p /= interior[d] + 1;
      }
      if (p < 0 || p >= n) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "edge") p = p < 0 ? 0 : n - 1;
        else p = p < 0 ? -p : 2 * (n - 1) - p;  // reflect (edge not repeated)
      }
      src += p * xs[d];
    }
    if (inside) copy_element(y, i, x, src);
    else if (is_complex(y.dtype)) wc(y, i, c128(value, 0));
    else if (is_float(y.dtype)) wd(y, i, value);
    else wd(y, i, value);
  }
}

int64_t checked_index(const HostView& idx, int64_t k, int64_t n, const KernelArgs& a) {
  int64_t v = ri(idx, k);
  if (v < 0 || v >= n)
    throw Error(ErrorKind::runtime, cat(ir::op_keyword(a.node.op), a.node.name.empty() ? "" : cat(" \"", a.node.name, "\""), ": index ", v,
                                        " is out of range [0, ", n, ")"));
  return v;
}

// Shared by gather and scatter: for each element of the gathered shape, (its flat index in
// the gathered tensor, the flat index in data it maps to).
template <class F>
void for_each_gathered(const HostView& data, const HostView& idx, int64_t axis, const KernelArgs& a, F f) {
  int64_t outer = 1, inner = 1, n = data.shape[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < data.shape.size(); ++d) inner *= data.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < idx.numel; ++k) {
      int64_t j = checked_index(idx, k, n, a);
      for (int64_t i = 0; i < inner; ++i) f((o * idx.numel + k) * inner + i, (o * n + j) * inner + i);
    }
}

void gather(const KernelArgs& a) {
  const HostView &x = a.in[0], &idx = a.in[1], &y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  for_each_gathered(x, idx, axis, a, [&](int64_t g, int64_t d) { copy_element(y, g, x, d); });
}

void scatter(const KernelArgs& a) {
  const HostView &x = a.in[0], &idx = a.in[1], &upd = a.in[2], &y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  const std::string& red = a.node.attrs.s("reduce");
  if (y.data != x.data) std::memcpy(y.data, x.data, dtype_bytes(x.dtype, x.numel));
  for_each_gathered(x, idx, axis, a, [&](int64_t g, int64_t d) {
    if (red == "none") return copy_element(y, d, upd, g);
    if (is_complex(y.dtype)) {
      wc(y, d, rc(y, d) + rc(upd, g));  // add, the one reduction complex numbers have
    } else if (is_float(y.dtype)) {
      double cur = rd(y, d), v = rd(upd, g);
      wd(y, d, red == "add" ? cur + v : red == "max" ? std::max(cur, v) : std::min(cur, v));
    } else {
      int64_t cur = ri(y, d), v = ri(upd, g);
      wi(y, d, red == "add" ? wrap_add(cur, v) : red == "max" ? std::max(cur, v) : std::min(cur, v));
    }
  });
}

}  // namespace

void register_movement(KernelTable& t) {
  t[static_cast<size_t>(Op::reshape)] = reshape;
  t[static_cast<size_t>(Op::transpose)] = transpose;
  t[static_cast<size_t>(Op::broadcast)] = broadcast;
  t[static_cast<size_t>(Op::slice)] = slice;
  t[static_cast<size_t>(Op::concat)] = concat;
  t[static_cast<size_t>(Op::pad)] = pad;
  t[static_cast<size_t>(Op::gather)] = gather;
  t[static_cast<size_t>(Op::scatter)] = scatter;
}

}  // namespace rlx::backends::reference
