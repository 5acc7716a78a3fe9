// The cuda device: registration and claims everywhere it is built; execution against the
// reference where a GPU is usable (elsewhere those tests skip and say why).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>
#include <tuple>

#include "common/op_cases.h"
#include "models/sentence_embedder.h"
#include "ops/builder.h"
#include "passes/autodiff.h"
#include "passes/fuse_epilogue.h"
#include "passes/fuse_glu.h"
#include "passes/fuse_cast.h"
#include "passes/fuse_norm_matmul.h"
#include "passes/fuse_norm_rope.h"
#include "passes/fuse_reduce.h"
#include "passes/fuse_rope_append.h"
#include "passes/fuse_siblings.h"
#include "passes/legalize.h"
#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"
#include "runtime/registry.h"
#include "science/splat/renderer.h"
#include "train/trainer.h"

using namespace rlx;

namespace {

// g legalized for `device`, then through one fusion pass (which asks the same device's claims).
ir::Graph after(ir::Graph (*pass)(const ir::Graph&, const passes::KernelClaims&), const ir::Graph& g, const char* device) {
  passes::DispatchReport rep;
  return pass(passes::legalize(g, runtime::backend(device), {}, rep), runtime::backend(device));
}

const DeviceInfo* cuda_info() {
  static std::vector<DeviceInfo> devs = devices();
  for (const auto& d : devs)
    if (d.name == "cuda") return &d;
  return nullptr;
}

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    const DeviceInfo* info = cuda_info();                                      \
    ASSERT_NE(info, nullptr);                                                  \
    if (!info->available) GTEST_SKIP() << "cuda unavailable: " << info->reason; \
  } while (0)

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

// A small transformer block: layer norm, attention through the HIR op, a GELU MLP, softmax.
Graph block(const Tensor& w1, const Tensor& w2) {
  Graph g("block");
  Value x = g.input("x", DType::f32, {Dim::symbol("B"), Dim(16), Dim(32)});
  Value h = layer_norm(x, std::nullopt, std::nullopt);
  Value q = reshape(h, {Dim::symbol("B"), Dim(16), Dim(4), Dim(8)});
  Value qt = transpose(q, {0, 2, 1, 3});
  Value a = op("attention", {qt, qt, qt}, "mask=causal")[0];
  Value y = reshape(transpose(a, {0, 2, 1, 3}), {Dim::symbol("B"), Dim(16), Dim(32)}) + x;
  Value m = linear(gelu(linear(y, constant(g, w1))), constant(g, w2));
  g.set_outputs({softmax(m + y), reduce_sum(m, {1})});
  return g;
}

}  // namespace

TEST(CudaDevice, RegisteredWithAReasonWhenUnavailable) {
  const DeviceInfo* info = cuda_info();
  ASSERT_NE(info, nullptr) << "the cuda backend is built but not registered";
  EXPECT_GT(info->native_ops, 50);
  if (!info->available) {
    EXPECT_FALSE(info->reason.empty());
    std::printf("cuda unavailable here: %s\n", info->reason.c_str());
    try {
      Session s("cuda");
      FAIL() << "a session on an unavailable device must fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::unsupported);
      EXPECT_NE(std::string(e.what()).find(info->reason), std::string::npos) << e.what();
    }
  } else {
    std::printf("cuda: %s\n", info->description.c_str());
  }
}

// Claims never depend on the GPU, so legalization is checked on every machine that builds it.
TEST(CudaDevice, TransformerOpsAreNative) {
  runtime::Backend& cuda = runtime::backend("cuda");
  for (ir::Op op : {ir::Op::attention, ir::Op::layer_norm, ir::Op::rms_norm, ir::Op::softmax, ir::Op::rope, ir::Op::dot_general,
                    ir::Op::elementwise_region, ir::Op::fused_dot, ir::Op::fused_reduce}) {
    auto cases = rlx::testing::op_cases(op, 1);
    ASSERT_FALSE(cases.empty());
    int native = 0;
    for (const auto& c : cases) {
      if (c.dtype != DType::f32) continue;
      passes::DispatchReport rep;
      EXPECT_NO_THROW(passes::legalize(c.graph, cuda, {}, rep)) << c.name;
      native += rep.rows[ir::op_keyword(op)].native;
    }
    EXPECT_GT(native, 0) << ir::op_keyword(op) << " has no native f32 case on cuda";
  }
}

// A decode step's residual add joins the GEMV before it (stored with the product); the cpu
// device, which claims no addend, keeps the add.
TEST(CudaDevice, ResidualAddJoinsTheDequantGemv) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(1), Dim(64)}}, "x");
  ir::ValueId r = g.add_input({DType::f32, {Dim::symbol("B"), Dim(1), Dim(16)}}, "r");
  ir::ValueId w = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {16, 128})}});
  ir::ValueId y = b.emit1(ir::Op::dequant_matmul, {x, w}, ir::Attrs{{"type", std::string("bf16")}, {"n", int64_t{16}}, {"k", int64_t{64}}});
  g.set_outputs({b.add(r, y)});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_matmul_epilogues, g, device);
    int adds = 0, addends = 0;
    for (const auto& n : out.nodes()) {
      adds += n.op == ir::Op::add;
      addends += n.op == ir::Op::dequant_matmul && n.inputs.size() == 3;
    }
    return std::pair{adds, addends};
  };
  EXPECT_EQ(fused("cuda"), (std::pair{0, 1}));
  EXPECT_EQ(fused("cpu"), (std::pair{1, 0}));
}

// Mean pooling and L2 normalization (sentence embeddings): the masked product and the square
// are computed as the sums read them where cuda claims fused_reduce — the division the norm's
// sum reads is computed again inside it; the cpu keeps every op.
TEST(CudaDevice, PoolingSumsReadTheirOperandsOnce) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(16), Dim(32)}}, "x");
  ir::ValueId m = g.add_input({DType::f32, {Dim::symbol("B"), Dim(16), Dim(1)}}, "mask");
  ir::ValueId count = b.max(b.reduce(m, "sum", {1}, false), b.scalar(DType::f32, 1e-9));
  ir::ValueId mean = b.div(b.reduce(b.mul(x, m), "sum", {1}, false), count);
  ir::ValueId norm = b.unary(ir::Op::sqrt, b.reduce(b.mul(mean, mean), "sum", {1}, true));
  g.set_outputs({b.div(mean, b.max(norm, b.scalar(DType::f32, 1e-12)))});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_reduce_prologues, g, device);
    int reduces = 0, fused_reduces = 0;
    for (const auto& n : out.nodes()) {
      reduces += n.op == ir::Op::reduce;
      fused_reduces += n.op == ir::Op::fused_reduce;
    }
    return std::pair{reduces, fused_reduces};
  };
  EXPECT_EQ(fused("cuda"), (std::pair{1, 2}));  // the mask's count reads the mask itself
  EXPECT_EQ(fused("cpu"), (std::pair{3, 0}));
}

// A SwiGLU MLP's gate and up projections become one gated dequant_matmul over the stacked
// weights where cuda claims it (bf16 weights); the cpu keeps both products, the silu and the mul.
TEST(CudaDevice, GateAndUpJoinInOneGatedGemv) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(1), Dim(64)}}, "x");
  ir::Attrs a{{"type", std::string("bf16")}, {"n", int64_t{16}}, {"k", int64_t{64}}};
  ir::ValueId wg = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {16, 128})}});
  ir::ValueId wu = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {16, 128})}});
  ir::ValueId gate = b.emit1(ir::Op::silu, {b.emit1(ir::Op::dequant_matmul, {x, wg}, a)});
  g.set_outputs({b.mul(gate, b.emit1(ir::Op::dequant_matmul, {x, wu}, a))});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_gated_matmuls, g, device);
    int products = 0, gated = 0, muls = 0;
    for (const auto& n : out.nodes()) {
      products += n.op == ir::Op::dequant_matmul;
      gated += n.op == ir::Op::dequant_matmul && n.attrs.has("glu");
      muls += n.op == ir::Op::mul;
    }
    return std::tuple{products, gated, muls};
  };
  EXPECT_EQ(fused("cuda"), (std::tuple{1, 1, 0}));
  EXPECT_EQ(fused("cpu"), (std::tuple{2, 0, 1}));
}

// Qwen3's q norm then rope (through the head transpose) become one normed rope where cuda
// claims it; the cpu keeps the norm, the transpose and the rope.
TEST(CudaDevice, HeadNormJoinsTheRope) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId q = g.add_input({DType::f32, {Dim::symbol("B"), Dim::symbol("S"), Dim(4), Dim(16)}}, "q");
  ir::ValueId pos = g.add_input({DType::i64, {Dim::symbol("S")}}, "pos");
  ir::ValueId w = b.constant(Tensor::from_vector(std::vector<float>(16, 1.5f), {16}));
  ir::ValueId normed = b.emit1(ir::Op::rms_norm, {q, w}, ir::Attrs{{"eps", 1e-6}});
  g.set_outputs({b.emit1(ir::Op::rope, {b.transpose(normed, {0, 2, 1, 3}), pos}, ir::Attrs{{"theta", 1e6}})});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_norm_rope, g, device);
    int norms = 0, normed_ropes = 0;
    for (const auto& n : out.nodes()) {
      norms += n.op == ir::Op::rms_norm;
      normed_ropes += n.op == ir::Op::rope && n.inputs.size() == 3;
    }
    return std::pair{norms, normed_ropes};
  };
  EXPECT_EQ(fused("cuda"), (std::pair{0, 1}));
  EXPECT_EQ(fused("cpu").second, 0);
}

// The norm before a layer's projections becomes their prologue where cuda claims it (bf16
// weights; every reader a dequant_matmul); the cpu keeps the norm.
TEST(CudaDevice, InputNormJoinsTheProjections) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(1), Dim(64)}}, "x");
  ir::Attrs a{{"type", std::string("bf16")}, {"n", int64_t{16}}, {"k", int64_t{64}}};
  ir::ValueId h = b.emit1(ir::Op::rms_norm, {x, b.constant(Tensor::from_vector(std::vector<float>(64, 0.5f), {64}))}, ir::Attrs{{"eps", 1e-6}});
  ir::ValueId w1 = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {16, 128})}});
  ir::ValueId w2 = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {16, 128})}});
  g.set_outputs({b.emit1(ir::Op::dequant_matmul, {h, w1}, a), b.emit1(ir::Op::dequant_matmul, {h, w2}, a)});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_norm_into_matmuls, g, device);
    int norms = 0, normed = 0;
    for (const auto& n : out.nodes()) {
      norms += n.op == ir::Op::rms_norm;
      normed += n.op == ir::Op::dequant_matmul && n.attrs.has("norm_eps");
    }
    return std::pair{norms, normed};
  };
  EXPECT_EQ(fused("cuda"), (std::pair{0, 2}));
  EXPECT_EQ(fused("cpu").second, 0);
}

// A decode step's q, k and v projections of one row per batch element become one GEMV over the
// stacked weights and three slices (views of its output); with more rows (a static batch of 2,
// a symbolic sequence) they stay apart (the slices would be strided copies).
TEST(CudaDevice, SiblingProjectionsJoinInOneGemv) {
  auto products = [](Dim batch, Dim seq) {
    ir::Graph g;
    ops::Builder b(g);
    ir::ValueId x = g.add_input({DType::f32, {batch, seq, Dim(64)}}, "x");
    std::vector<ir::ValueId> outs;
    for (int64_t n : {32, 16, 16}) {
      ir::ValueId w = b.emit1(ir::Op::constant, {}, ir::Attrs{{"value", Tensor::zeros(DType::u8, {n, 128})}});
      outs.push_back(b.emit1(ir::Op::dequant_matmul, {x, w}, ir::Attrs{{"type", std::string("bf16")}, {"n", n}, {"k", int64_t{64}}}));
    }
    g.set_outputs(outs);
    ir::Graph out = after(passes::fuse_sibling_matmuls, g, "cuda");
    int n_products = 0, slices = 0;
    for (const auto& n : out.nodes()) {
      n_products += n.op == ir::Op::dequant_matmul;
      slices += n.op == ir::Op::slice;
    }
    return std::pair{n_products, slices};
  };
  EXPECT_EQ(products(Dim(1), Dim(1)), (std::pair{1, 3}));
  EXPECT_EQ(products(Dim::symbol("B"), Dim(1)), (std::pair{1, 3}));
  EXPECT_EQ(products(Dim(2), Dim(1)), (std::pair{3, 0}));
  EXPECT_EQ(products(Dim(1), Dim::symbol("S")), (std::pair{3, 0}));
}

// A rotated key scattered into its cache at its own positions becomes one rope that writes
// into the cache where cuda claims it; the cpu keeps the rope and the scatter. Rows going to
// other positions than they were rotated for are left alone.
TEST(CudaDevice, RotatedKeyGoesStraightIntoTheCache) {
  auto fused = [](const char* device, bool same_positions) {
    ir::Graph g;
    ops::Builder b(g);
    ir::ValueId k = g.add_input({DType::f32, {Dim::symbol("B"), Dim(2), Dim(1), Dim(16)}}, "k");
    ir::ValueId pos = g.add_input({DType::i64, {Dim(1)}}, "pos");
    ir::ValueId other = g.add_input({DType::i64, {Dim(1)}}, "other");
    ir::ValueId cache = g.add_input({DType::f32, {Dim::symbol("B"), Dim(2), Dim(8), Dim(16)}}, "cache");
    ir::ValueId r = b.emit1(ir::Op::rope, {k, pos}, ir::Attrs{{"theta", 1e4}});
    g.set_outputs({b.emit1(ir::Op::scatter, {cache, same_positions ? pos : other, r}, ir::Attrs{{"axis", int64_t{2}}})});
    ir::Graph out = after(passes::fuse_rope_append, g, device);
    int scatters = 0, appending = 0;
    for (const auto& n : out.nodes()) {
      scatters += n.op == ir::Op::scatter;
      appending += n.op == ir::Op::rope && n.attrs.has("append_axis") && n.inputs.size() == 3;
    }
    return std::pair{scatters, appending};
  };
  EXPECT_EQ(fused("cuda", true), (std::pair{0, 1}));
  EXPECT_EQ(fused("cuda", false), (std::pair{1, 0}));
  EXPECT_EQ(fused("cpu", true), (std::pair{1, 0}));
}

// A post-LN layer's norm read by the f16 matmul (through a cast) and by the residual: on cuda
// the cast becomes a second norm storing f16, beside the f32 one; the cpu keeps norm and cast.
TEST(CudaDevice, NormStoresTheHalfOperandItself) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(8), Dim(64)}}, "x");
  ir::ValueId gamma = b.constant(Tensor::from_vector(std::vector<float>(64, 0.5f), {64}));
  ir::ValueId h = b.emit1(ir::Op::layer_norm, {x, gamma}, ir::Attrs{{"eps", 1e-12}});
  g.set_outputs({b.cast(h, DType::f16), b.add(h, x)});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_cast_into_producer, g, device);
    int casts = 0, norms = 0, half_norms = 0;
    for (const auto& n : out.nodes()) {
      casts += n.op == ir::Op::cast;
      norms += n.op == ir::Op::layer_norm;
      half_norms += n.op == ir::Op::layer_norm && n.attrs.has("out");
    }
    return std::tuple{casts, norms, half_norms};
  };
  EXPECT_EQ(fused("cuda"), (std::tuple{0, 2, 1}));
  EXPECT_EQ(fused("cpu"), (std::tuple{1, 1, 0}));
}

// An attention whose output (through the reshape that merges its heads) is cast to f16 for the
// output projection stores f16 itself where cuda claims it; the cpu keeps the cast.
TEST(CudaDevice, AttentionStoresTheHalfOperandItself) {
  ir::Graph g;
  ops::Builder b(g);
  std::vector<ir::ValueId> qkv;
  for (const char* name : {"q", "k", "v"}) qkv.push_back(g.add_input({DType::f32, {Dim::symbol("B"), Dim(16), Dim(4), Dim(32)}}, name));
  ir::ValueId a = b.emit1(ir::Op::attention, qkv, ir::Attrs{{"layout", std::string("bshd")}, {"compute", DType::f16}});
  g.set_outputs({b.cast(b.reshape(a, {Dim::symbol("B"), Dim(16), Dim(128)}), DType::f16)});
  auto fused = [&](const char* device) {
    ir::Graph out = after(passes::fuse_cast_into_producer, g, device);
    int casts = 0, stored = 0;
    for (const auto& n : out.nodes()) {
      casts += n.op == ir::Op::cast;
      stored += n.op == ir::Op::attention && n.attrs.has("out");
    }
    return std::pair{casts, stored};
  };
  EXPECT_EQ(fused("cuda"), (std::pair{0, 1}));
  EXPECT_EQ(fused("cpu").second, 0);
}

TEST(CudaDevice, BlockMatchesReference) {
  REQUIRE_GPU();
  Tensor w1 = random_tensor({64, 32}, 1, 0.2), w2 = random_tensor({32, 64}, 2, 0.2);
  Graph g = block(w1, w2);
  CompiledModel gpu = Session("cuda").compile(g), ref = Session("reference").compile(g);
  for (int64_t batch : {1, 3}) {
    Tensor x = random_tensor({batch, 16, 32}, 3 + static_cast<uint32_t>(batch));
    auto want = ref.run({x}), got = gpu.run({x});
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(rlx::testing::compare_tensors(want[k], got[k], DType::f32), "") << "output " << k;
  }
}

// Sentence embeddings of the BERT fixtures (a sentence-transformers directory and a plain
// Hugging Face one) on the GPU against the cpu's f32 ones: ≤ 1e-3 in the f16 policy, ≤ 1e-5 in
// f32, over batches that pad sentences of different lengths.
TEST(CudaDevice, SentenceEmbeddingsAgreeWithTheCpu) {
  REQUIRE_GPU();
  std::vector<std::string> texts = {"hello world", "a second, longer sentence to pad the first one against",
                                    "short", "the quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps again"};
  for (const char* dir : {"st_mean", "bert_plain"}) {
    std::string path = std::string(RLX_BERT_FIXTURE_DIR) + "/" + dir;
    Tensor want = models::SentenceEmbedder::open(path, "cpu").embed(texts, 4);
    for (const char* precision : {"f16", "f32"}) {
      SessionOptions o;
      o.precision = precision;
      Tensor got = models::SentenceEmbedder::open(path, "cuda", o).embed(texts, 4);
      ASSERT_EQ(got.shape(), want.shape()) << dir;
      double worst = 0;
      for (int64_t i = 0; i < want.numel(); ++i) worst = std::max(worst, std::abs(got.at_f64(i) - want.at_f64(i)));
      EXPECT_LE(worst, std::string(precision) == "f16" ? 1e-3 : 1e-5) << dir << " " << precision;
    }
  }
}

TEST(CudaDevice, ConcurrentRunsAgree) {
  REQUIRE_GPU();
  Graph g = block(random_tensor({64, 32}, 1, 0.2), random_tensor({32, 64}, 2, 0.2));
  CompiledModel gpu = Session("cuda").compile(g);
  Tensor x = random_tensor({2, 16, 32}, 7);
  std::vector<Tensor> first = gpu.run({x});
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto out = gpu.run({x});
        if (!out[0].bytes_equal(first[0]) || !out[1].bytes_equal(first[1])) ++bad[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

TEST(CudaDevice, IndexOutOfRangeIsAnError) {
  REQUIRE_GPU();
  Graph g("gather");
  Value x = g.input("x", DType::f32, {Dim(5), Dim(3)});
  Value i = g.input("i", DType::i64, {Dim(4)});
  g.set_outputs({gather(x, i, 0)});
  CompiledModel m = Session("cuda").compile(g);
  Tensor idx = Tensor::from_vector(std::vector<int64_t>{0, 4, 7, 1}, {4});
  try {
    m.run({random_tensor({5, 3}, 1), idx});
    FAIL() << "an index out of range must not pass silently";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_NE(std::string(e.what()).find("index 7 is out of range [0, 5)"), std::string::npos) << e.what();
  }
  // the context that saw the error is reusable
  Tensor ok = Tensor::from_vector(std::vector<int64_t>{0, 4, 2, 1}, {4});
  EXPECT_NO_THROW(m.run({random_tensor({5, 3}, 1), ok}));
}

// A factorization that fails and a malformed CSR matrix are named errors on the GPU as on the
// cpu — reported through the error word after the run, the product never reading out of bounds
// — and the compiled model runs the next, valid input.
TEST(CudaDevice, FactorizationFailuresAndBadCsrAreNamedErrors) {
  REQUIRE_GPU();
  auto compile = [](const std::string& name, const std::vector<Tensor>& in, const std::string& attrs = "") {
    Graph g(name);
    std::vector<Value> args;
    for (size_t i = 0; i < in.size(); ++i) {
      std::vector<Dim> shape;
      for (int64_t d : in[i].shape()) shape.push_back(Dim(d));
      args.push_back(g.input("in" + std::to_string(i), in[i].dtype(), shape));
    }
    g.set_outputs(op(name, args, attrs));
    return Session("cuda").compile(g);
  };
  auto fails_with = [](CompiledModel& m, const std::vector<Tensor>& in, const std::string& words) {
    try {
      m.run(in);
      ADD_FAILURE() << "expected an error saying: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  // a batch of two: the second matrix singular (and not positive definite)
  Tensor bad = Tensor::from_f64(DType::f64, {2, 2, 2}, {4, 1, 1, 3, 1, 2, 2, 4});
  Tensor good = Tensor::from_f64(DType::f64, {2, 2, 2}, {4, 1, 1, 3, 5, 2, 2, 4});
  Tensor rhs = Tensor::from_f64(DType::f64, {2, 2, 1}, {1, 1, 1, 1});
  for (const char* name : {"cholesky", "inv", "solve"}) {
    bool solve = std::string(name) == "solve";
    CompiledModel m = compile(name, solve ? std::vector<Tensor>{bad, rhs} : std::vector<Tensor>{bad});
    fails_with(m, solve ? std::vector<Tensor>{bad, rhs} : std::vector<Tensor>{bad},
               std::string("matrix 1 of the batch ") + (std::string(name) == "cholesky" ? "is not positive definite" : "is singular"));
    EXPECT_NO_THROW(m.run(solve ? std::vector<Tensor>{good, rhs} : std::vector<Tensor>{good})) << name;
  }
  // CSR 2 × 3: a column index past n, then a row pointer that goes backwards
  Tensor ptr = Tensor::from_vector(std::vector<int64_t>{0, 2, 3}, {3});
  Tensor cols = Tensor::from_vector(std::vector<int64_t>{0, 9, 1}, {3});
  Tensor vals = Tensor::from_f64(DType::f32, {3}, {1, 2, 3});
  Tensor x = Tensor::from_f64(DType::f32, {3, 1}, {1, 1, 1});
  CompiledModel m = compile("csr_matmul", {ptr, cols, vals, x}, "n=3");
  fails_with(m, {ptr, cols, vals, x}, "index 9 is out of range [0, 3)");
  fails_with(m, {Tensor::from_vector(std::vector<int64_t>{0, 3, 2}, {3}), Tensor::from_vector(std::vector<int64_t>{0, 1, 2}, {3}), vals, x}, "out of range");
  std::vector<Tensor> y = m.run({ptr, Tensor::from_vector(std::vector<int64_t>{0, 2, 1}, {3}), vals, x});
  EXPECT_FLOAT_EQ(y[0].at_f64(0), 3);  // row 0: 1 + 2
  EXPECT_FLOAT_EQ(y[0].at_f64(1), 3);  // row 1: 3
}

// Head dims 32/64/128 with compute=bf16 (or 16-bit inputs) take the tensor-core kernel; odd
// lengths, GQA, every mask kind and a bias check its tiles' edges.
TEST(CudaDevice, TensorCoreAttentionMatchesReference) {
  REQUIRE_GPU();
  struct Case {
    int64_t B, H, Hk, Sq, Sk, D;
    const char* attrs;
    bool bias;
    DType dtype;
  };
  std::vector<Case> cases = {
      {2, 4, 2, 100, 100, 32, "mask=causal, compute=bf16", false, DType::f32},
      {1, 2, 2, 70, 130, 64, "mask=sliding_window, window=40, softcap=20, compute=bf16", false, DType::f32},
      {2, 3, 3, 65, 65, 128, "mask=additive, compute=bf16, layout=bshd", true, DType::f32},
      {1, 4, 1, 33, 33, 64, "mask=causal", false, DType::f16},
      {1, 2, 2, 48, 48, 32, "mask=none", false, DType::bf16},
      {6, 16, 8, 130, 130, 32, "mask=causal, compute=bf16", false, DType::f32},  // enough blocks for 4-warp tiles
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    bool bshd = std::string(c.attrs).find("bshd") != std::string::npos;
    auto shape = [&](int64_t H, int64_t S) { return bshd ? std::vector<int64_t>{c.B, S, H, c.D} : std::vector<int64_t>{c.B, H, S, c.D}; };
    auto dims = [](const std::vector<int64_t>& s) {
      Shape out;
      for (int64_t d : s) out.push_back(Dim(d));
      return out;
    };
    Graph g("attention");
    std::vector<Value> in = {g.input("q", c.dtype, dims(shape(c.H, c.Sq))), g.input("k", c.dtype, dims(shape(c.Hk, c.Sk))),
                             g.input("v", c.dtype, dims(shape(c.Hk, c.Sk)))};
    std::vector<Tensor> feed;
    for (const auto& s : {shape(c.H, c.Sq), shape(c.Hk, c.Sk), shape(c.Hk, c.Sk)}) {
      Tensor t = random_tensor(s, seed++);
      feed.push_back(c.dtype == DType::f32 ? t : Tensor::from_f64(c.dtype, s, t.to_f64()));
    }
    if (c.bias) {
      in.push_back(g.input("bias", c.dtype, {Dim(c.B), Dim(1), Dim(1), Dim(c.Sk)}));
      feed.push_back(random_tensor({c.B, 1, 1, c.Sk}, seed++));
    }
    g.set_outputs({op("attention", in, c.attrs)[0]});
    auto want = Session("reference").compile(g).run(feed), got = Session("cuda").compile(g).run(feed);
    EXPECT_EQ(rlx::testing::compare_tensors(want[0], got[0], c.dtype == DType::f32 ? DType::bf16 : c.dtype), "") << c.attrs << " D=" << c.D;
  }
}

// Quantization-aware training on the GPU: fake_quant's straight-through / LSQ gradients (for
// x, the scale and the zero point) equal the reference's, per channel on the int4 grid.
TEST(CudaDevice, FakeQuantGradientsMatchReference) {
  REQUIRE_GPU();
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim(6), Dim(40)}}, "x");
  ir::ValueId s = g.add_input({DType::f32, {Dim(6), Dim(1)}}, "scale");
  ir::ValueId z = g.add_input({DType::f32, {Dim(6), Dim(1)}}, "zero_point");
  ir::ValueId y = b.emit1(ir::Op::fake_quant, {x, s, z}, ir::Attrs{{"lo", int64_t{-8}}, {"hi", int64_t{7}}});
  ir::ValueId loss = b.reduce(b.mul(y, b.constant(random_tensor({6, 40}, 7))), "sum", {0, 1}, false);
  g.set_outputs({loss});
  Graph grad(std::make_shared<ir::Graph>(passes::value_and_grad(g, 0, {x, s, z})));
  std::vector<Tensor> in = {random_tensor({6, 40}, 8, 1.5), Tensor::from_f64(DType::f32, {6, 1}, {0.25, 0.2, 0.3, 0.15, 0.4, 0.5}),
                            Tensor::from_f64(DType::f32, {6, 1}, {0, 1, -1, 2, 0, -2})};
  auto want = Session("reference").compile(grad).run(in), got = Session("cuda").compile(grad).run(in);
  ASSERT_EQ(want.size(), 4u);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(rlx::testing::compare_tensors(want[k], got[k], DType::f32), "") << "output " << k;
}

// --precision int8 on the GPU: per-row quantize_rows of the activations, i8 · i8 products summed
// in i32, the dequantizing epilogue — the same as the reference's int8 graph.
TEST(CudaDevice, Int8PrecisionMatchesReference) {
  REQUIRE_GPU();
  Tensor w1 = random_tensor({64, 32}, 1, 0.2), w2 = random_tensor({32, 64}, 2, 0.2);
  Graph g = block(w1, w2);
  SessionOptions o;
  o.precision = "int8";
  CompiledModel gpu = Session("cuda", o).compile(g), ref = Session("reference", o).compile(g);
  Tensor x = random_tensor({2, 16, 32}, 11);
  auto want = ref.run({x}), got = gpu.run({x});
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(rlx::testing::compare_tensors(want[k], got[k], DType::f32), "") << "output " << k;
}

// AMP with f16 products and dynamic loss scaling on the GPU: a loss of 2^-30 · Σ d² (whose
// output gradient f16 would flush to zero) scaled by 2^24 gives the reference's update; a scale
// of 2^60 overflows f16 (the output gradient ~2^31), and that step leaves the weight untouched
// and halves the scale.
TEST(CudaDevice, AmpF16LossScalingMatchesReference) {
  REQUIRE_GPU();
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId w = g.add_input({DType::f32, {Dim(64), Dim(32)}}, "w");
  ir::ValueId x = g.add_input({DType::f32, {Dim(128), Dim(64)}}, "x");
  ir::ValueId t = g.add_input({DType::f32, {Dim(128), Dim(32)}}, "t");
  ir::ValueId d = b.sub(b.dot_general(x, w, {{}, {}}, {{1}, {0}}), t);
  g.set_outputs({b.mul(b.reduce(b.mul(d, d), "sum", {0, 1}, false), b.scalar(DType::f32, std::ldexp(1.0, -30)))});
  Tensor w0 = random_tensor({64, 32}, 21), xs = random_tensor({128, 64}, 22), ts = random_tensor({128, 32}, 23);
  SessionOptions amp;
  amp.precision = "amp-f16";
  for (double init : {std::ldexp(1.0, 24), std::ldexp(1.0, 60)}) {
    train::OptimizerConfig c;
    c.loss_scale.enabled = true;
    c.loss_scale.init = init;
    train::Trainer gpu("cuda", g, {{"w", w0}}, c, amp), ref("reference", g, {{"w", w0}}, c, amp);
    gpu.step({xs, ts}, std::ldexp(1.0, 16));
    ref.step({xs, ts}, std::ldexp(1.0, 16));
    EXPECT_EQ(ref.skipped_steps(), init > 1e9 ? 1 : 0) << "the reference: scale " << init;
    EXPECT_EQ(gpu.skipped_steps(), init > 1e9 ? 1 : 0) << "scale " << init;
    EXPECT_EQ(gpu.loss_scale(), ref.loss_scale());
    EXPECT_EQ(rlx::testing::compare_tensors(ref.params()[0].tensor, gpu.params()[0].tensor, DType::f32), "") << "scale " << init;
    if (init > 1e9) EXPECT_EQ(rlx::testing::compare_tensors(w0, gpu.params()[0].tensor, DType::f32), "");
  }
}

// Gaussian splatting (issue 30): a scene rendered on cuda equals the cpu's render, and the
// gradient of every parameter and the pose agrees, through runs that repeat (the rasterizer reads
// its pair count back mid-run, so such programs are never captured into a CUDA graph).
TEST(CudaDevice, SplatRenderAndGradientsMatchCpu) {
  REQUIRE_GPU();
  using namespace rlx::science::splat;
  Scene s = random_scene(3000, 2, 1.0, 5);
  Camera cam = look_at({0.3, 0.6, -3}, {0, 0, 0}, {0, 1, 0}, 50, 160, 120);
  std::vector<Tensor> in = scene_tensors(s);
  auto cpu = Renderer("cpu", s.count, 2, cam, {0.1, 0.2, 0.3}).render(in, cam);
  Renderer gpu("cuda", s.count, 2, cam, {0.1, 0.2, 0.3});
  for (int run = 0; run < 3; ++run) {
    auto img = gpu.render(in, cam);
    double worst = 0;
    for (int64_t i = 0; i < cpu[0].numel(); ++i) worst = std::max(worst, std::fabs(img[0].at_f64(i) - cpu[0].at_f64(i)));
    EXPECT_LT(worst, 1e-3) << "run " << run;
  }
  ir::Graph g = render_graph(s.count, 2, cam, {0, 0, 0});
  {
    ops::Builder b(g);
    std::vector<double> w(160 * 120 * 3);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37 * static_cast<double>(i));
    g.set_outputs({b.reduce(b.mul(g.outputs()[0], b.constant(Tensor::from_f64(DType::f32, {120, 160, 3}, w))), "sum", {0, 1, 2}, false)});
  }
  ir::Graph gg = passes::value_and_grad(g, 0, g.inputs());
  in.push_back(viewmat_tensor(cam));
  auto want = Session("cpu").compile(Graph(std::make_shared<ir::Graph>(gg))).run(in);
  auto got = Session("cuda").compile(Graph(std::make_shared<ir::Graph>(gg))).run(in);
  for (size_t k = 0; k < want.size(); ++k) {
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      diff += std::pow(got[k].at_f64(i) - want[k].at_f64(i), 2);
      norm += std::pow(want[k].at_f64(i), 2);
    }
    EXPECT_LT(std::sqrt(diff / std::max(norm, 1e-30)), 2e-3) << "output " << k;
  }
}
