// The codegen layer's GLSL dialect, run: every elementwise op of the float class printed from
// scalar.h's one definition into the vulkan device's elementwise kernel, compiled by shaderc at
// run time, dispatched on this machine's Vulkan (lavapipe in CI) and compared with the
// reference backend on the same inputs.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/shader_compiler.h"
#include "codegen/dialect_glsl.h"
#include "rlx/error.h"
#include "codegen/scalar.h"
#include "ops/builder.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "util/strings.h"

namespace {

using namespace rlx;
using backends::vulkan::Context;
using backends::vulkan::HostBuffer;
namespace fs = std::filesystem;

// The vulkan device's own kernel of the op over n elements (same-shape operands).
std::string shader(ir::Op op, int64_t n) {
  return backends::vulkan::elementwise_shader(op, std::vector<std::vector<int64_t>>(static_cast<size_t>(codegen::arity(op)), {n}), {n});
}

// Through the device's own run-time compiler (shaderc), as generated kernels will be; the
// source goes into the failure message when it does not compile.
std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& name) {
  try {
    return backends::vulkan::compile_compute_glsl(source, name);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what() << "\n" << source;
    return {};
  }
}

TEST(GlslDialect, EveryFloatElementwiseOpRunsLikeTheReference) {
  Context& c = Context::get();
  if (!c.availability().available) GTEST_SKIP() << "no Vulkan here: " << c.availability().reason;
  const uint32_t n = 1000;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-4.0f, 4.0f), positive(0.5f, 3.0f);
  std::vector<float> xa(n), xb(n), xc(n);
  for (uint32_t i = 0; i < n; ++i) xa[i] = wide(rng), xb[i] = positive(rng) * (i % 5 == 0 ? -1.0f : 1.0f), xc[i] = wide(rng);
  xa[0] = 0.0f, xa[1] = -0.0f, xa[2] = 1e-6f, xa[3] = -1e-6f, xa[4] = 2.5f, xa[5] = -2.5f, xa[6] = 3.0f, xb[6] = 2.0f;  // edges: ±0, tiny, halves
  HostBuffer ba = c.host_buffer(n * 4), bb = c.host_buffer(n * 4), bc = c.host_buffer(n * 4), by = c.host_buffer(n * 4);
  std::memcpy(ba.mapped, xa.data(), n * 4), std::memcpy(bb.mapped, xb.data(), n * 4), std::memcpy(bc.mapped, xc.data(), n * 4);
  int checked = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    auto op = static_cast<ir::Op>(k);
    if (!codegen::is_elementwise(op) || !codegen::defines(codegen::ValueClass::floating, op) || op == ir::Op::cast) continue;
    int ar = codegen::arity(op);
    if (ar < 1 || ar > 3) continue;
    SCOPED_TRACE(ir::op_name(op));
    std::vector<uint32_t> spirv = compile_glsl(shader(op, n), ir::op_name(op));
    if (spirv.empty()) continue;
    std::vector<uint32_t> push(static_cast<size_t>(ar) + 1, 0u);  // each operand's element offset, then n
    push.push_back(n);
    std::vector<HostBuffer*> buffers = {&ba, &bb, &bc};
    buffers.resize(static_cast<size_t>(ar));
    buffers.push_back(&by);
    c.dispatch(spirv, buffers, push.data(), static_cast<uint32_t>(push.size() * 4), (n + 255) / 256);
    // the reference: the same op over the same f32 inputs
    ir::Graph g;
    ops::Builder b(g);
    std::vector<ir::ValueId> in;
    // logical ops take booleans, select its condition: the shader reads them as x ≠ 0
    const bool logical = op == ir::Op::logical_not || op == ir::Op::logical_and || op == ir::Op::logical_or || op == ir::Op::logical_xor;
    auto boolean = [&](int j) { return logical || (j == 0 && op == ir::Op::select); };
    for (int j = 0; j < ar; ++j) in.push_back(g.add_input({boolean(j) ? DType::boolean : DType::f32, {Dim(n)}}, cat("x", j)));
    g.set_outputs({b.emit1(op, in)});
    std::vector<Tensor> feed;
    const std::vector<float>* src[] = {&xa, &xb, &xc};
    for (int j = 0; j < ar; ++j) {
      Tensor t = Tensor::from_vector(*src[j], {n});
      if (boolean(j)) {
        t = Tensor::zeros(DType::boolean, {n});
        for (uint32_t i = 0; i < n; ++i) t.data_as<uint8_t>()[i] = (*src[j])[i] != 0.0f;
      }
      feed.push_back(t);
    }
    Tensor want = Session("reference").compile(Graph(std::make_shared<ir::Graph>(g))).run(feed)[0];
    const float* got = static_cast<const float*>(by.mapped);
    int bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      double w = want.at_f64(i), y = got[i];
      bool ok = (std::isnan(w) && std::isnan(y)) || std::fabs(w - y) <= 3e-5 * std::max(1.0, std::fabs(w)) || (std::isinf(w) && w == y);
      if (!ok && bad++ < 3)
        ADD_FAILURE() << ir::op_name(op) << "(" << xa[i] << ", " << xb[i] << ", " << xc[i] << ") = " << y << " on Vulkan, " << w << " on the reference";
    }
    ++checked;
  }
  std::printf("[glsl] %d elementwise ops printed, compiled by shaderc and run on %s\n", checked, c.devices()[static_cast<size_t>(c.chosen())].name.c_str());
  EXPECT_GE(checked, 35);
  // compiled once: the cache (memory and disk) gives the same words
  std::string src = shader(ir::Op::exp, n);
  std::vector<uint32_t> again = compile_glsl(src, "exp-again");
  EXPECT_FALSE(again.empty());
  if (!backends::vulkan::shader_cache_dir().empty()) {
    int files = 0;
    for (const auto& e : fs::directory_iterator(backends::vulkan::shader_cache_dir())) files += e.path().extension() == ".spv";
    EXPECT_GE(files, checked);
  }
  c.free(ba), c.free(bb), c.free(bc), c.free(by);
}

// The cooperative-matrix GEMM runs only where a driver offers VK_NV_cooperative_matrix (NVIDIA;
// checked on the H200): here its printed GLSL is compiled by shaderc, so a printer change that
// breaks it fails in CI, not first on the GPU.
TEST(GlslDialect, CooperativeMatrixGemmCompiles) {
  backends::vulkan::Features f;
  f.coopmat = true;
  for (auto [m, n, k] : std::vector<std::array<uint32_t, 3>>{{16, 16, 16}, {16, 8, 16}}) {
    f.coop_m = m, f.coop_n = n, f.coop_k = k;
    backends::vulkan::MatmulProblem p;
    p.m = 300, p.n = 200, p.k = 96, p.a_k_contiguous = true;
    p.functions = "float rlx_a(uint bz, uint m, uint k) { return a_f(m * 96u + k); }\nfloat rlx_b(uint bz, uint n, uint k) { return b_f(k * 200u + n); }\n";
    backends::vulkan::Shader sh;
    sh.buffer("a", DType::f16, backends::vulkan::Access::read);
    sh.buffer("b", DType::f16, backends::vulkan::Access::read);
    sh.buffer("y", DType::f32, backends::vulkan::Access::write);
    std::string src = backends::vulkan::matmul_coop(sh, p, f).source;
    EXPECT_FALSE(compile_glsl(src, cat("coopmat ", m, "x", n, "x", k)).empty());
    // fragments loaded straight from memory: a[m][k], b as [n][k] and as [k][n]
    for (bool k_major : {true, false}) {
      backends::vulkan::MatmulProblem d = p;
      d.m = 256, d.n = 320, d.a_ld = 96, d.b_ld = k_major ? 96 : 320, d.b_k_major = k_major;
      ASSERT_TRUE(backends::vulkan::coopmat_direct_fits(d, f));
      EXPECT_FALSE(compile_glsl(backends::vulkan::matmul_coop_direct(sh, d, f).source, cat("coopmat direct ", m, "x", n, "x", k)).empty());
    }
  }
}

}  // namespace
