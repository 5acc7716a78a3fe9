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
#include <tuple>

#include "backends/vulkan/attention.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/target.h"
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
  f.subgroup_arithmetic = true;
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
    // the large-product tiles: f16 operands read in place (b as [n][k] and as [k][n]) at each
    // tile shape, and staged (scaled) rows, with the staging kernel
    for (bool k_major : {true, false})
      for (auto [pm, pn] : std::vector<std::array<int64_t, 2>>{{4096, 1536}, {512, 3072}, {256, 320}}) {
        backends::vulkan::MatmulProblem d;
        d.m = pm, d.n = pn, d.k = 96;
        ASSERT_TRUE(backends::vulkan::coop_tiles_fit(d, f));
        backends::vulkan::Shader st;
        st.raw_buffer("a16", "uvec4");
        st.raw_buffer("b16", "uvec4");
        st.buffer("y", DType::bf16, backends::vulkan::Access::write);
        backends::vulkan::HalfOperands h;
        h.a_ld = 96, h.b_ld = k_major ? 96 : pn, h.b_k_major = k_major;
        if (k_major) st.raw_buffer("sa", "float"), st.raw_buffer("sb", "float"), h.scaled = true, h.scale_rows_a = pm, h.scale_rows_b = pn;
        EXPECT_FALSE(compile_glsl(backends::vulkan::matmul_coop_tiles(st, d, f, h).source, cat("coopmat tiles ", pm, "x", pn, " ", m, "x", n, "x", k)).empty());
      }
    // few tiles, a long contraction: split over workgroups, partial sums merged (glu pairs too)
    for (bool paired : {false, true}) {
      backends::vulkan::MatmulProblem d;
      d.m = 512, d.n = 1024, d.k = 3072, d.paired = paired;
      if (paired) d.out = true, d.functions = "void rlx_out(uint bz, uint m, uint c, float v0, float v1) { y_wf(m * 512u + c, v0 * v1); }\n";
      backends::vulkan::HalfOperands h;
      h.a_ld = h.b_ld = 3072, h.scaled = true, h.scale_rows_a = 512, h.scale_rows_b = 1024, h.split = backends::vulkan::coop_split(d);
      ASSERT_GT(h.split, 1);
      backends::vulkan::Shader st;
      st.raw_buffer("a16", "uvec4");
      st.raw_buffer("b16", "uvec4");
      st.buffer("y", DType::bf16, backends::vulkan::Access::write);
      st.raw_buffer("sa", "float");
      st.raw_buffer("sb", "float");
      EXPECT_FALSE(compile_glsl(backends::vulkan::matmul_coop_tiles(st, d, f, h).source, cat("coopmat split tiles ", m, "x", n, "x", k)).empty());
      backends::vulkan::Shader sm;
      sm.buffer("y", DType::bf16, backends::vulkan::Access::write);
      sm.raw_buffer("sa", "float");
      sm.raw_buffer("sb", "float");
      EXPECT_FALSE(compile_glsl(backends::vulkan::matmul_coop_merge(sm, d, h).source, "coopmat merge").empty());
    }
  }
  // tensor-core attention: bf16 (scaled) and f16, head sizes 128 and 32, with a bias
  // (and f32 operands rounded to either half type)
  for (auto [d, md, D] : std::vector<std::tuple<DType, DType, int64_t>>{
           {DType::bf16, DType::bf16, 128}, {DType::f16, DType::f16, 32}, {DType::bf16, DType::f32, 64}, {DType::f32, DType::f16, 32}, {DType::f32, DType::bf16, 128}}) {
    for (int64_t batch : {1, 64}) {  // few row blocks (keys split over subgroups), many
      backends::vulkan::AttentionShape a;
      a.B = batch, a.Hq = 4, a.Sq = 100, a.D = D, a.Hk = 2, a.Sk = 100, a.Dv = D, a.groups = 2, a.d = d, a.md = md, a.bias = D == 32;
      a.qst = a.kst = a.vst = a.ost = {4 * 100 * D, 100 * D, D, 1};
      a.bounds = "uint rlx_hi(uint i) { return i + 1u; }\nuint rlx_lo(uint i) { return 0u; }\n";
      a.finish_score = [&](const std::string& in) { return in + "s *= 0.125;\n" + (a.bias ? in + "s += m_f(b * 100u + j);\n" : std::string()); };
      for (uint32_t cn : {16u, 8u}) {
        f.coop_m = 16, f.coop_n = cn, f.coop_k = 16, f.subgroup_shuffle = true;
        ASSERT_TRUE(backends::vulkan::attention_coop_fits(a, f));
        size_t scratch = 0;
        for (const auto& l : backends::vulkan::attention_coop(a, f, scratch))
          EXPECT_FALSE(compile_glsl(l.source, cat(l.name, " D ", D, " n ", cn)).empty());
        EXPECT_GT(scratch, 0u);
      }
    }
  }
  backends::vulkan::HalfStage s;
  s.rows = 300, s.rows_padded = 320, s.k = 90, s.cols = 96, s.loader = "rlx_a";
  s.functions = "float rlx_a(uint bz, uint m, uint k) { return a_f(m * 90u + k); }\n";
  backends::vulkan::Shader sh;
  sh.buffer("a", DType::bf16, backends::vulkan::Access::read);
  EXPECT_FALSE(compile_glsl(backends::vulkan::half_stage(sh, s).source, "half staging").empty());
}

// The same kernels in OpenGL's flavour (a uniform block for the pushed words, ARB int64, no
// 8/16-bit storage) compile as OpenGL 4.5 GLSL: every float elementwise op, and the product's
// rows and tiles schedules.
TEST(GlslDialect, OpenGlFlavourCompiles) {
  // the check itself: Vulkan's flavour is not OpenGL GLSL (push constants, 16-bit storage)
  EXPECT_NE(backends::vulkan::opengl_glsl_errors(shader(ir::Op::exp, 1000), "vulkan flavour"), "");
  backends::vulkan::KernelTarget gl;
  gl.api = backends::vulkan::KernelApi::opengl;
  gl.features.int64 = true;
  backends::vulkan::ScopedTarget scope(gl);
  int checked = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    auto op = static_cast<ir::Op>(k);
    if (!codegen::is_elementwise(op) || !codegen::defines(codegen::ValueClass::floating, op) || op == ir::Op::cast) continue;
    const int ar = codegen::arity(op);
    if (ar < 1 || ar > 3) continue;
    const std::string src = shader(op, 1000);
    ASSERT_NE(src.find("uniform P"), std::string::npos) << src;
    ASSERT_EQ(src.find("push_constant"), std::string::npos) << src;
    EXPECT_EQ(backends::vulkan::opengl_glsl_errors(src, ir::op_name(op)), "") << src;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  backends::vulkan::MatmulProblem p;
  p.m = 300, p.n = 200, p.k = 96, p.a_k_contiguous = true;
  p.functions = "float rlx_a(uint bz, uint m, uint k) { return a_f(m * 96u + k); }\nfloat rlx_b(uint bz, uint n, uint k) { return b_f(k * 200u + n); }\n";
  for (int64_t rows : {int64_t{3}, int64_t{300}}) {
    p.m = rows;
    backends::vulkan::Shader sh;
    sh.buffer("a", DType::f32, backends::vulkan::Access::read);
    sh.buffer("b", DType::f32, backends::vulkan::Access::read);
    sh.buffer("y", DType::f32, backends::vulkan::Access::write);
    const std::string src = (rows <= backends::vulkan::kMatmulRowsMax ? backends::vulkan::matmul_rows(sh, p) : backends::vulkan::matmul_tiles(sh, p)).source;
    EXPECT_EQ(backends::vulkan::opengl_glsl_errors(src, cat("matmul ", rows)), "") << src;
  }
}

}  // namespace
