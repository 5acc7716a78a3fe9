// The directx device's integers: glslang's HLSL has no signed 64-bit type, so its kernels
// compute integers in 32 bits (hlsl.h). What must hold: i32 arithmetic wraps exactly as the cpu
// device's does; i64 values that fit 32 bits compute exactly; an i64 result, input or float
// conversion that does not fit is an error naming it — never a silently wrapped number.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/vulkan/context.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/ops.h"
#include "rlx/session.h"

namespace {

using rlx::backends::vulkan::Context;

bool directx_here() { return std::getenv("RLX_TEST_EXPECT_NO_VULKAN") == nullptr && Context::get().availability().available; }

std::vector<int64_t> as_i64(const rlx::Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.contiguous().data(), v.size() * 8);
  return v;
}

// a op b over two inputs of `dt`, on directx and on cpu
std::pair<rlx::Tensor, rlx::Tensor> both(rlx::DType dt, rlx::Value (*op)(rlx::Value, rlx::Value), const rlx::Tensor& a, const rlx::Tensor& b) {
  rlx::Graph g;
  auto x = g.input("a", dt, {a.numel()});
  auto y = g.input("b", dt, {b.numel()});
  g.set_outputs({op(x, y)});
  return {rlx::Session("directx").compile(g).run({a, b})[0], rlx::Session("cpu").compile(g).run({a, b})[0]};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rlx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Directx, I32WrapsAsTheCpuDoes) {
  if (!directx_here()) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  auto a = rlx::Tensor::from_vector(std::vector<int32_t>{INT32_MAX, INT32_MIN, 46341, -7}, {4});
  auto b = rlx::Tensor::from_vector(std::vector<int32_t>{1, -1, 46341, 3}, {4});
  for (auto op : {&rlx::add, &rlx::mul}) {
    auto [got, want] = both(rlx::DType::i32, op, a, b);
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(got.at_f64(i), want.at_f64(i)) << "element " << i;
  }
}

TEST(Directx, I64WithinThirtyTwoBitsIsExact) {
  if (!directx_here()) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  auto a = rlx::Tensor::from_vector(std::vector<int64_t>{1000000000, -2147483647, 40000, -3}, {4});
  auto b = rlx::Tensor::from_vector(std::vector<int64_t>{1000000000, -1, -50000, 5}, {4});
  auto [got, want] = both(rlx::DType::i64, &rlx::add, a, b);
  EXPECT_EQ(as_i64(got), as_i64(want));
  EXPECT_EQ(as_i64(got)[1], int64_t{INT32_MIN});  // the high words are the sign
}

TEST(Directx, I64ResultsBeyondThirtyTwoBitsAreErrors) {
  if (!directx_here()) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  auto a = rlx::Tensor::from_vector(std::vector<int64_t>{2000000000, 1}, {2});
  auto b = rlx::Tensor::from_vector(std::vector<int64_t>{2000000000, 1}, {2});
  for (auto op : {&rlx::add, &rlx::mul}) {
    const std::string e = error_of([&] { both(rlx::DType::i64, op, a, b); });
    EXPECT_NE(e.find("does not fit the 32-bit integers"), std::string::npos) << e;
  }
  // a float converted to i64 beyond 32 bits
  rlx::Graph g;
  auto x = g.input("x", rlx::DType::f32, {2});
  g.set_outputs({rlx::cast(x, rlx::DType::i64)});
  auto f = rlx::Tensor::from_vector(std::vector<float>{3.0e9f, 1.5f}, {2});
  const std::string e = error_of([&] { rlx::Session("directx").compile(g).run({f}); });
  EXPECT_NE(e.find("does not fit the 32-bit integers"), std::string::npos) << e;
}

TEST(Directx, I64InputsBeyondThirtyTwoBitsAreRefused) {
  if (!directx_here()) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  auto a = rlx::Tensor::from_vector(std::vector<int64_t>{1, int64_t{1} << 40}, {2});
  auto b = rlx::Tensor::from_vector(std::vector<int64_t>{1, 1}, {2});
  const std::string e = error_of([&] { both(rlx::DType::i64, &rlx::add, a, b); });
  EXPECT_NE(e.find("input 0 (a) holds 1099511627776 at element 1"), std::string::npos) << e;
}

}  // namespace
