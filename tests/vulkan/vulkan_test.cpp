// The vulkan device's first stage on whatever Vulkan this machine has (lavapipe in CI, pinned
// by VK_ICD_FILENAMES): discovery and the chosen device, host-visible buffers and a compute
// dispatch of a glslc-compiled shader checked on the host; and, run with no driver, an
// availability that says why.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "backends/vulkan/context.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/ops.h"
#include "rlx/session.h"

namespace {

using rlx::backends::vulkan::Context;
using rlx::backends::vulkan::HostBuffer;

const std::vector<uint32_t> kAddSpirv =
#include "add.spv.inc"
    ;

bool expect_no_driver() { return std::getenv("RLX_TEST_EXPECT_NO_VULKAN") != nullptr; }

TEST(Vulkan, DiscoveryAndDispatch) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  Context& c = Context::get();
  if (!c.availability().available) {
    const char* icd = std::getenv("VK_ICD_FILENAMES");
    if (icd && std::filesystem::exists(icd)) FAIL() << "the ICD " << icd << " exists but Vulkan is unavailable: " << c.availability().reason;
    GTEST_SKIP() << "no Vulkan here: " << c.availability().reason;
  }
  ASSERT_GE(c.chosen(), 0);
  const auto& d = c.devices()[static_cast<size_t>(c.chosen())];
  std::printf("[vulkan] computing on %s (%s, subgroup %u, %zu device(s))\n", d.name.c_str(), d.type_name(), d.subgroup_size, c.devices().size());
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.subgroup_size, 0u);

  const uint32_t n = 100003;  // not a multiple of the workgroup
  HostBuffer a = c.host_buffer(n * 4), b = c.host_buffer(n * 4), y = c.host_buffer(n * 4);
  auto* pa = static_cast<float*>(a.mapped);
  auto* pb = static_cast<float*>(b.mapped);
  auto* py = static_cast<float*>(y.mapped);
  for (uint32_t i = 0; i < n; ++i) pa[i] = static_cast<float>(i) * 0.5f, pb[i] = static_cast<float>(i % 97) - 48.0f, py[i] = -1.0f;
  struct {
    uint32_t n;
    float s;
  } push{n, 3.0f};
  c.dispatch(kAddSpirv, {&a, &b, &y}, &push, sizeof(push), (n + 255) / 256);
  int bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (py[i] != pa[i] + 3.0f * pb[i] && bad++ < 3) ADD_FAILURE() << "y[" << i << "] = " << py[i] << ", expected " << pa[i] + 3.0f * pb[i];
  EXPECT_EQ(bad, 0);
  c.free(a), c.free(b), c.free(y);

  // the device is listed, available, with the kernels it has
  rlx::DeviceInfo info = rlx::device_info("vulkan");
  EXPECT_TRUE(info.available);
  EXPECT_GT(info.native_ops, 30);
  EXPECT_NE(info.description.find(d.name), std::string::npos) << info.description;
}

// A graph through the whole stack — compile for the vulkan device, constants uploaded, kernels
// printed and compiled at run time, steps dispatched — against the cpu device; and a graph with
// an op it lacks fails naming it.
TEST(Vulkan, SessionRunsGraphsAndRefusesWhatItLacks) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  if (!Context::get().availability().available) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  rlx::Graph g;
  auto x = g.input("x", rlx::DType::f32, {3, 1000});
  auto y = g.input("y", rlx::DType::f32, {3, 1000});
  auto c = rlx::constant(g, rlx::Tensor::from_vector(std::vector<float>(3000, 0.5f), {3, 1000}));
  g.set_outputs({rlx::tanh(rlx::add(rlx::mul(x, y), c))});
  std::vector<float> xs(3000), ys(3000);
  for (int i = 0; i < 3000; ++i) xs[i] = 0.001f * static_cast<float>(i) - 1.0f, ys[i] = std::sin(static_cast<float>(i));
  std::vector<rlx::Tensor> in = {rlx::Tensor::from_vector(xs, {3, 1000}), rlx::Tensor::from_vector(ys, {3, 1000})};
  rlx::Tensor got = rlx::Session("vulkan").compile(g).run(in)[0], want = rlx::Session("cpu").compile(g).run(in)[0];
  double err = 0;
  for (int64_t i = 0; i < 3000; ++i) err = std::max(err, std::fabs(got.at_f64(i) - want.at_f64(i)));
  EXPECT_LE(err, 1e-6);
  rlx::Graph h;
  auto a = h.input("a", rlx::DType::f64, {4, 8});  // no f64 kernels (yet)
  h.set_outputs({rlx::op("cumsum", {a}, "axis=1")[0]});
  try {
    rlx::Session("vulkan").compile(h);
    ADD_FAILURE() << "an f64 cumsum compiled for a device without f64 kernels";
  } catch (const rlx::Error& e) {
    EXPECT_EQ(e.kind(), rlx::ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("cumsum"), std::string::npos) << e.what();
  }
}

// The tiled schedules (128×128, 64×64 and 32×32 tiles, ragged edges) and the row schedule against the
// cpu device, f32 and bf16.
TEST(Vulkan, MatmulSchedulesMatchCpu) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  if (!Context::get().availability().available) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  for (rlx::DType dt : {rlx::DType::f32, rlx::DType::bf16, rlx::DType::f16})
    for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{300, 200, 260}, {70, 33, 90}, {3, 515, 129}, {1100, 40, 1000}, {2900, 24, 2900}, {256, 96, 320}}) {
      if (m > 1000 && dt != rlx::DType::f32) continue;  // the 64×64 and 128×128 tiles, once
      rlx::Graph g;
      auto a = g.input("a", rlx::DType::f32, {m, k});
      auto b = g.input("b", rlx::DType::f32, {k, n});
      g.set_outputs({rlx::cast(rlx::matmul(rlx::cast(a, dt), rlx::cast(b, dt)), rlx::DType::f32)});
      std::vector<float> av(static_cast<size_t>(m * k)), bv(static_cast<size_t>(k * n));
      for (size_t i = 0; i < av.size(); ++i) av[i] = std::sin(0.37f * static_cast<float>(i));
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = std::cos(0.11f * static_cast<float>(i));
      std::vector<rlx::Tensor> in = {rlx::Tensor::from_vector(av, {m, k}), rlx::Tensor::from_vector(bv, {k, n})};
      rlx::Tensor got = rlx::Session("vulkan").compile(g).run(in)[0], want = rlx::Session("cpu").compile(g).run(in)[0];
      double err = 0, scale = 0;
      for (int64_t i = 0; i < m * n; ++i) err = std::max(err, std::fabs(got.at_f64(i) - want.at_f64(i))), scale = std::max(scale, std::fabs(want.at_f64(i)));
      EXPECT_LE(err, (dt == rlx::DType::f32 ? 1e-5 : 2e-2) * std::max(1.0, scale)) << m << "x" << k << "x" << n << " " << rlx::dtype_name(dt);
    }
}

// A product with a constant weight (as models hold theirs): on a device with tensor cores the
// weight is staged as f16 once, when the plan is built, and every run reuses it. Two runs with
// different activations both match the cpu device.
TEST(Vulkan, ConstantWeightProductsMatchCpu) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  if (!Context::get().availability().available) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  for (rlx::DType dt : {rlx::DType::bf16, rlx::DType::f16}) {
    const int64_t m = 200, k = 328, n = 136;
    std::vector<float> wv(static_cast<size_t>(n * k));
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.05f * std::cos(0.013f * static_cast<float>(i)) * (i % 97 == 0 ? 300.0f : 1.0f);
    rlx::Graph g;
    auto x = g.input("x", rlx::DType::f32, {m, k});
    auto w = rlx::cast(rlx::constant(g, rlx::Tensor::from_vector(wv, {n, k})), dt);
    g.set_outputs({rlx::cast(rlx::op("dot_general", {rlx::cast(x, dt), w}, "contract=[[1],[1]]")[0], rlx::DType::f32)});
    auto vk = rlx::Session("vulkan").compile(g), cpu = rlx::Session("cpu").compile(g);
    for (float phase : {0.0f, 1.5f}) {
      std::vector<float> xv(static_cast<size_t>(m * k));
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i) + phase);
      std::vector<rlx::Tensor> in = {rlx::Tensor::from_vector(xv, {m, k})};
      rlx::Tensor got = vk.run(in)[0], want = cpu.run(in)[0];
      double err = 0, scale = 0;
      for (int64_t i = 0; i < m * n; ++i) err = std::max(err, std::fabs(got.at_f64(i) - want.at_f64(i))), scale = std::max(scale, std::fabs(want.at_f64(i)));
      EXPECT_LE(err, 2e-2 * std::max(1.0, scale)) << rlx::dtype_name(dt) << " phase " << phase;
    }
  }
}

// Long reductions of few outputs split into chunks and a merge (an argmax over a vocabulary),
// against the cpu device; the maximum sits late, with an earlier tie for argmax's lowest index.
TEST(Vulkan, SplitReductionsMatchCpu) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  if (!Context::get().availability().available) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  const int64_t n = 151936;
  std::vector<float> v(static_cast<size_t>(2 * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.001f * static_cast<float>(i));
  v[140001] = 5.0f, v[150000] = 5.0f, v[n + 7] = 4.0f;
  for (const char* kind : {"argmax", "argmin", "sum", "max"}) {
    rlx::Graph g;
    auto x = g.input("x", rlx::DType::f32, {2, n});
    g.set_outputs({rlx::op("reduce", {x}, std::string("kind=") + kind + ", axes=[1]")[0]});
    std::vector<rlx::Tensor> in = {rlx::Tensor::from_vector(v, {2, n})};
    rlx::Tensor got = rlx::Session("vulkan").compile(g).run(in)[0], want = rlx::Session("cpu").compile(g).run(in)[0];
    for (int64_t i = 0; i < 2; ++i) EXPECT_NEAR(got.at_f64(i), want.at_f64(i), 1e-3 * std::max(1.0, std::fabs(want.at_f64(i)))) << kind << " row " << i;
  }
}

// scatter without a reduction writes every update at once: where indices repeat, the last
// update wins, as the reference's sequential loop leaves it (a KV cache written twice).
TEST(Vulkan, ScatterRepeatedIndicesLastWins) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  if (!Context::get().availability().available) GTEST_SKIP() << "no Vulkan here: " << Context::get().availability().reason;
  rlx::Graph g;
  auto data = g.input("data", rlx::DType::f32, {2, 9, 5});
  auto idx = g.input("idx", rlx::DType::i64, {6});
  auto upd = g.input("upd", rlx::DType::f32, {2, 6, 5});
  g.set_outputs({rlx::op("scatter", {data, idx, upd}, "axis=1")[0]});
  std::vector<float> dv(90), uv(60);
  for (size_t i = 0; i < dv.size(); ++i) dv[i] = static_cast<float>(i);
  for (size_t i = 0; i < uv.size(); ++i) uv[i] = -1.0f - static_cast<float>(i);
  std::vector<rlx::Tensor> in = {rlx::Tensor::from_vector(dv, {2, 9, 5}), rlx::Tensor::from_vector(std::vector<int64_t>{3, 7, 3, 0, 7, 3}, {6}),
                                 rlx::Tensor::from_vector(uv, {2, 6, 5})};
  rlx::Tensor got = rlx::Session("vulkan").compile(g).run(in)[0], want = rlx::Session("cpu").compile(g).run(in)[0];
  for (int64_t i = 0; i < 90; ++i) EXPECT_EQ(got.at_f64(i), want.at_f64(i)) << "element " << i;
  EXPECT_EQ(got.at_f64(3 * 5), -1.0 - 5 * 5);  // row 3 of batch 0 holds update 5, the last naming it
}

TEST(Vulkan, DevicePoolStagingAndOffsets) {
  if (expect_no_driver()) GTEST_SKIP() << "this run checks the no-driver message";
  Context& c = Context::get();
  if (!c.availability().available) GTEST_SKIP() << "no Vulkan here: " << c.availability().reason;
  using rlx::backends::vulkan::Region;
  const uint32_t n = 5000;
  // three regions of one pool block, bound at their offsets
  Region a = c.device_alloc(n * 4), b = c.device_alloc(n * 4), y = c.device_alloc(n * 4);
  EXPECT_EQ(a.buffer, b.buffer);
  EXPECT_NE(a.offset, b.offset);
  size_t reserved = c.device_bytes_reserved();
  std::vector<float> ha(n), hb(n), hy(n, -7.0f);
  for (uint32_t i = 0; i < n; ++i) ha[i] = static_cast<float>(i), hb[i] = 0.25f * static_cast<float>(i % 13);
  c.upload(a, ha.data(), n * 4);
  c.upload(b, hb.data(), n * 4);
  struct {
    uint32_t n;
    float s;
  } push{n, -2.0f};
  c.dispatch(kAddSpirv, std::vector<Region>{a, b, y}, &push, sizeof(push), (n + 255) / 256);
  c.download(y, hy.data(), n * 4);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(hy[i], ha[i] - 2.0f * hb[i]) << i;
  // freed ranges coalesce and are reused: no new block
  c.device_free(a), c.device_free(b), c.device_free(y);
  Region big = c.device_alloc(3 * n * 4);
  EXPECT_EQ(big.offset, 0u);
  EXPECT_EQ(c.device_bytes_reserved(), reserved);
  c.device_free(big);
  EXPECT_THROW(c.upload(big, hy.data(), 4 * n * 4), rlx::Error);  // larger than the region
}

TEST(Vulkan, WithoutADriverSaysWhy) {
  if (!expect_no_driver()) GTEST_SKIP() << "run with RLX_TEST_EXPECT_NO_VULKAN=1 and VK_ICD_FILENAMES naming no driver";
  Context& c = Context::get();
  EXPECT_FALSE(c.availability().available);
  EXPECT_NE(c.availability().reason.find("driver"), std::string::npos) << c.availability().reason;
  EXPECT_THROW(c.host_buffer(16), rlx::Error);
  rlx::DeviceInfo info = rlx::device_info("vulkan");
  EXPECT_FALSE(info.available);
  EXPECT_EQ(info.reason, c.availability().reason);
}

}  // namespace
