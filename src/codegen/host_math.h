// The scalar machines that evaluate scalar.h on the host, in the storage type T itself: f32
// through vmath.h's branch-free functions (so loops over them vectorize), f64 through libm,
// integers wrapping in T's width (the same low bits as the reference's wide i64). Every
// function inlines: a loop that calls float_op with a constant op becomes that op's code.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "codegen/scalar.h"
#include "codegen/vmath.h"

namespace rlx::codegen {

template <class T>
struct HostFloat {
  static_assert(std::is_floating_point_v<T>);
  using V = T;
  using B = bool;
  static constexpr bool kF32 = std::is_same_v<T, float>;

  RLX_HD V lit(double x) const { return static_cast<T>(x); }
  RLX_HD V sel(bool c, V a, V b) const { return c ? a : b; }
  RLX_HD V num(bool c) const { return c ? T(1) : T(0); }
  RLX_HD bool nonzero(V a) const { return a != T(0); }
  RLX_HD bool nan(V a) const { return a != a; }
  RLX_HD V undefined(Op) const { return T(0); }

  RLX_HD V abs(V a) const { return std::fabs(a); }
  RLX_HD V exp(V a) const {
    if constexpr (kF32) return vm::exp(a);
    else return std::exp(a);
  }
  RLX_HD V expm1(V a) const { return std::expm1(a); }
  RLX_HD V log(V a) const { return std::log(a); }
  RLX_HD V log1p(V a) const { return std::log1p(a); }
  RLX_HD V sqrt(V a) const { return std::sqrt(a); }
  RLX_HD V sin(V a) const { return std::sin(a); }
  RLX_HD V cos(V a) const { return std::cos(a); }
  RLX_HD V atan(V a) const { return std::atan(a); }
  RLX_HD V tanh(V a) const {
    if constexpr (kF32) return vm::tanh(a);
    else return std::tanh(a);
  }
  RLX_HD V erf(V a) const {
    if constexpr (kF32) return vm::erf(a);
    else return std::erf(a);
  }
  RLX_HD V floor(V a) const { return std::floor(a); }
  RLX_HD V ceil(V a) const { return std::ceil(a); }
  RLX_HD V rint(V a) const { return std::nearbyint(a); }
  RLX_HD V fmod(V a, V b) const { return std::fmod(a, b); }
  RLX_HD V pow(V a, V b) const { return std::pow(a, b); }
};

template <class T>
struct HostInt {
  static_assert(std::is_integral_v<T>);
  using V = T;
  using B = bool;
  // unsigned arithmetic at least as wide as unsigned int: narrower types promote to (signed) int,
  // whose overflow would be undefined
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

  RLX_HD V lit(double x) const { return static_cast<T>(static_cast<int64_t>(x)); }
  RLX_HD V sel(bool c, V a, V b) const { return c ? a : b; }
  RLX_HD V num(bool c) const { return c ? T(1) : T(0); }
  RLX_HD bool nonzero(V a) const { return a != T(0); }
  RLX_HD bool nan(V) const { return false; }
  RLX_HD V undefined(Op) const { return T(0); }

  RLX_HD V wrap_add(V a, V b) const { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); }
  RLX_HD V wrap_sub(V a, V b) const { return static_cast<T>(static_cast<U>(a) - static_cast<U>(b)); }
  RLX_HD V wrap_mul(V a, V b) const { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); }
  RLX_HD V quot(V a, V b) const { return static_cast<T>(a / b); }
  RLX_HD V rem(V a, V b) const { return static_cast<T>(a % b); }
  RLX_HD V ipow(V a, V e) const { return ipow_wrapping<T, U>(a, e); }
};

// The machine of T's class.
template <class T>
using HostMachine = std::conditional_t<std::is_floating_point_v<T>, HostFloat<T>, HostInt<T>>;

// The value of op on host scalars of T, by T's class.
template <class T>
RLX_HD T eval_scalar(Op op, T a, T b = T(0), T c = T(0)) {
  if constexpr (std::is_floating_point_v<T>) return float_op(HostFloat<T>{}, op, a, b, c);
  else return int_op(HostInt<T>{}, op, a, b, c);
}

}  // namespace rlx::codegen
