// Elementwise kernels: every unary and binary op of scalar.h (numpy broadcasting), select, cast, iota.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels.h"
#include "codegen/elementwise.h"
#include "codegen/host_math.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// One kernel per op and storage type: the op is a template constant, so scalar.h's switch folds
// away and each loop is that op's arithmetic alone (vectorized where the op allows).
template <Op OP>
HostKernel unary_kernel() {
  return [](const KernelArgs& a) {
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      T* y = a.out[0].as<T>();
      rlx::parallel_for(a.out[0].numel, 16384, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = codegen::eval_scalar<T>(OP, x[i]);
      });
    });
  };
}

HostKernel make_unary(const ir::Node& n, const ir::Graph&) {
  HostKernel k;
  codegen::for_each_scalar_op<1>([&](auto op) {
    if (n.op == decltype(op)::value) k = unary_kernel<decltype(op)::value>();
  });
  return k;
}

constexpr bool is_compare(Op op) { return op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge; }

template <Op OP>
HostKernel binary_kernel() {
  return [](const KernelArgs& a) {
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      const T* z = a.in[1].as<T>();
      bool same = a.in[0].shape == a.out[0].shape && a.in[1].shape == a.out[0].shape;
      auto run = [&](auto out_tag) {  // comparisons store booleans, the rest T
        using Y = decltype(out_tag);
        Y* y = a.out[0].as<Y>();
        if (same) {
          rlx::parallel_for(a.out[0].numel, 16384, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) y[i] = static_cast<Y>(codegen::eval_scalar<T>(OP, x[i], z[i]));
          });
          return;
        }
        for_each_row<2>(a.out[0].shape, {a.in[0].shape, a.in[1].shape}, [&](int64_t o, auto base, auto st, int64_t len) {
          for (int64_t i = 0; i < len; ++i) y[o + i] = static_cast<Y>(codegen::eval_scalar<T>(OP, x[base[0] + i * st[0]], z[base[1] + i * st[1]]));
        });
      };
      if constexpr (is_compare(OP)) run(uint8_t{});
      else run(T{});
    });
  };
}

HostKernel make_binary(const ir::Node& n, const ir::Graph&) {
  HostKernel k;
  codegen::for_each_scalar_op<2>([&](auto op) {
    if (n.op == decltype(op)::value) k = binary_kernel<decltype(op)::value>();
  });
  return k;
}

template <size_t B>
struct Bytes {
  uint8_t b[B];
};

HostKernel make_select(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const uint8_t* c = a.in[0].as<uint8_t>();
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* t = a.in[1].as<T>();
      const T* f = a.in[2].as<T>();
      T* y = a.out[0].as<T>();
      for_each_row<3>(a.out[0].shape, {a.in[0].shape, a.in[1].shape, a.in[2].shape}, [&](int64_t o, auto base, auto st, int64_t len) {
        for (int64_t i = 0; i < len; ++i) y[o + i] = c[base[0] + i * st[0]] ? t[base[1] + i * st[1]] : f[base[2] + i * st[2]];
      });
    };
    switch (dtype_size(a.out[0].dtype)) {
      case 1: run(uint8_t{}); break;
      case 2: run(uint16_t{}); break;
      case 4: run(uint32_t{}); break;
      case 8: run(uint64_t{}); break;
      case 16: run(Bytes16{}); break;
    }
  };
}

// ---- cast, with the semantics of mir.cast (see util/scalar.h)
struct F16 {
  uint16_t v;
};
struct BF16 {
  uint16_t v;
};

template <class T>
constexpr bool is_half_tag = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;

template <class S>
auto widen(S s) {
  if constexpr (std::is_same_v<S, F16>) return f16_to_f32(s.v);
  else if constexpr (std::is_same_v<S, BF16>) return bf16_to_f32(s.v);
  else return s;
}

template <class D, class S>
D convert(S s, bool dst_bool) {
  auto w = widen(s);
  using W = decltype(w);
  if constexpr (!is_half_tag<D>)  // a bool destination is never a half type
    if (dst_bool) return static_cast<D>(w != W(0));
  if constexpr (std::is_same_v<D, F16>) return F16{f32_to_f16(static_cast<float>(w))};
  else if constexpr (std::is_same_v<D, BF16>) return BF16{vm::to_bf16(static_cast<float>(w))};
  else if constexpr (std::is_floating_point_v<D>) return static_cast<D>(w);
  else if constexpr (std::is_floating_point_v<W>) {
    if (std::isnan(w)) return 0;
    double t = std::trunc(static_cast<double>(w));
    if (t <= static_cast<double>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (t >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(t);
  } else {
    return static_cast<D>(static_cast<int64_t>(w));  // modular
  }
}

template <class F>
void dispatch_cast_type(DType d, F&& f) {
  switch (d) {
    case DType::f32: f(float{}); break;
    case DType::f64: f(double{}); break;
    case DType::f16: f(F16{}); break;
    case DType::bf16: f(BF16{}); break;
    case DType::i8: f(int8_t{}); break;
    case DType::u8:
    case DType::boolean: f(uint8_t{}); break;
    case DType::i16: f(int16_t{}); break;
    case DType::i32: f(int32_t{}); break;
    case DType::i64: f(int64_t{}); break;
    default: break;
  }
}

HostKernel make_cast(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    bool dst_bool = a.out[0].dtype == DType::boolean;
    dispatch_cast_type(a.in[0].dtype, [&](auto stag) {
      dispatch_cast_type(a.out[0].dtype, [&](auto dtag) {
        using S = decltype(stag);
        using D = decltype(dtag);
        const S* x = a.in[0].as<S>();
        D* y = a.out[0].as<D>();
        int64_t n = a.out[0].numel;
  parallel_items(n, 16384, [&](int64_t i) { y[i] = convert<D>(x[i], dst_bool); });
      });
    });
  };
}

HostKernel make_iota(const ir::Node& n, const ir::Graph&) {
  int64_t axis_attr = n.attrs.i("axis");
  return [axis_attr](const KernelArgs& a) {
    const auto& shape = a.out[0].shape;
    int64_t axis = normalize_axis(axis_attr, shape.size());
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    int64_t len = shape[static_cast<size_t>(axis)];
    dispatch_typed(a.out[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      T* y = a.out[0].as<T>();
      for (int64_t i = 0; i < a.out[0].numel; ++i) y[i] = static_cast<T>((i / inner) % len);
    });
  };
}

const std::initializer_list<DType> kReal = {DType::f32, DType::f64};
const std::initializer_list<DType> kArith = {DType::f32, DType::f64, DType::i32, DType::i64};
const std::initializer_list<DType> kInt = {DType::i32, DType::i64, DType::boolean};

// The kernels above exist for every op scalar.h defines, in f32/f64 (float class) and
// i32/i64/bool (integer class); the op's own type rules have already said which dtypes it takes.
bool claims_scalar(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  DType d = in[0].dtype;
  if (is_one_of(d, kReal)) return codegen::defines(codegen::ValueClass::floating, op);
  if (is_one_of(d, kInt)) return codegen::defines(codegen::ValueClass::integer, op);
  return false;
}

bool claims_select(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[1].dtype != DType::i4;
}

bool castable(DType d) { return d != DType::c64 && d != DType::i4; }
bool claims_cast(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  return castable(in[0].dtype) && castable(out[0].dtype);
}

bool claims_iota(Op, const std::vector<ir::Type>&, const std::vector<ir::Type>& out, const ir::Attrs&) { return is_one_of(out[0].dtype, kArith); }

}  // namespace

void register_elementwise(KernelTable& t) {
  codegen::for_each_scalar_op<1>([&](auto op) { t[static_cast<size_t>(decltype(op)::value)] = {claims_scalar, make_unary}; });
  codegen::for_each_scalar_op<2>([&](auto op) { t[static_cast<size_t>(decltype(op)::value)] = {claims_scalar, make_binary}; });
  t[static_cast<size_t>(Op::select)] = {claims_select, make_select};
  t[static_cast<size_t>(Op::cast)] = {claims_cast, make_cast};
  t[static_cast<size_t>(Op::iota)] = {claims_iota, make_iota};
}

}  // namespace rlx::backends::cpu
