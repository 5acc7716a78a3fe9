// Llama-family parity with the plain-PyTorch reference (tests/fixtures/qwen3): logits of the
// prompt and of a cached decode step, 64 greedy tokens, the same through GGUF files RLX writes
// (F32 exact, Q8_0 greedy-identical, Q4_K top-1 agreement), and the sampler.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/gguf.h"
#include "models/generate.h"
#include "models/qwen3_model.h"
#include "models/qwen3_weights.h"
#include "rlx/error.h"
#include "wide_fixture.h"

namespace rlx::models {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string fixture(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

json expected(const std::string& name) {
  std::ifstream f(fixture(name) + "/expected.json");
  return json::parse(f);
}

std::vector<int32_t> ids_of(const json& j) { return j.get<std::vector<int32_t>>(); }

double max_abs_diff(const Tensor& logits, const json& want) {
  std::vector<float> w = want.get<std::vector<float>>();
  EXPECT_EQ(logits.numel(), static_cast<int64_t>(w.size()));
  double m = 0;
  for (size_t i = 0; i < w.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(logits.data_as<float>()[i]) - w[i]));
  if (m > 1e-4)
    for (size_t i = 0; i < 6 && i < w.size(); ++i) std::printf("  logit %zu: RLX %.5f, torch %.5f\n", i, logits.data_as<float>()[i], w[i]);
  return m;
}

int32_t argmax(const Tensor& logits) {
  const float* p = logits.data_as<float>();
  return static_cast<int32_t>(std::max_element(p, p + logits.numel()) - p);
}

std::vector<int32_t> greedy(LlamaRunner& r, const std::vector<int32_t>& prompt, int64_t n) {
  GenerateOptions o;
  o.max_tokens = n;  // no EOS: the reference ignores it too
  return generate(r, prompt, o).ids;
}

// Teacher-forced top-1 agreement: feed prompt + `tokens` and count the steps whose argmax is
// the next token of `tokens`.
double top1_agreement(LlamaRunner& r, const std::vector<int32_t>& prompt, const std::vector<int32_t>& tokens) {
  r.reset(static_cast<int64_t>(prompt.size() + tokens.size() + 16));
  const Tensor* logits = &r.forward(prompt);
  int agree = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    agree += argmax(*logits) == tokens[i];
    if (i + 1 < tokens.size()) logits = &r.forward({tokens[i]});
  }
  return static_cast<double>(agree) / static_cast<double>(tokens.size());
}

std::string temp_path(const std::string& name) { return (fs::temp_directory_path() / ("rlx_llm_test_" + name)).string(); }

class Fixture : public ::testing::TestWithParam<const char*> {};

TEST_P(Fixture, LogitsAndGreedyMatchTheReference) {
  const std::string name = GetParam();
  json e = expected(name);
  LlamaModel m = load_llama_model(fixture(name));
  LlamaRunner r(m.spec, m.weights);
  std::vector<int32_t> prompt = ids_of(e["prompt_ids"]);
  r.reset(256);
  double err = max_abs_diff(r.forward(prompt), e["logits"]);
  std::printf("[llm] %s: prompt logits max |RLX - torch| = %.3g\n", name.c_str(), err);
  EXPECT_LE(err, 1e-4);
  // The KV-cache path: `step` more tokens one at a time, then the logits after them.
  std::vector<int32_t> want = ids_of(e["greedy"]);
  int64_t step = e["step"].get<int64_t>();
  const Tensor* logits = nullptr;
  for (int64_t i = 0; i < step; ++i) logits = &r.forward({want[static_cast<size_t>(i)]});
  err = max_abs_diff(*logits, e["step_logits"]);
  std::printf("[llm] %s: logits after %lld cached decode steps max |RLX - torch| = %.3g\n", name.c_str(), static_cast<long long>(step), err);
  EXPECT_LE(err, 1e-4);
  EXPECT_EQ(greedy(r, prompt, static_cast<int64_t>(want.size())), want);
}

TEST_P(Fixture, TokenizerGivesThePromptIds) {
  json e = expected(GetParam());
  LlamaModel m = load_llama_model(fixture(GetParam()));
  ASSERT_TRUE(m.tokenizer);
  std::vector<int32_t> ids = m.tokenizer->encode(e["prompt_text"].get<std::string>()).ids;
  EXPECT_EQ(ids, ids_of(e["prompt_ids"]));
}

TEST_P(Fixture, F32GgufWrittenByRlxGivesTheSameLogits) {
  // Llama files exercise llama.cpp's Q/K row permutation (undone by interleaved RoPE) and the
  // scaled RoPE stored as rope_freqs.
  const std::string name = GetParam();
  json e = expected(name);
  LlamaModel m = load_llama_model(fixture(name));
  std::string path = temp_path(name + "_f32.gguf");
  GgufExportOptions o;
  o.matrix_type = formats::WeightType::f32;
  o.tokenizer_json = fixture(name) + "/tokenizer.json";
  if (name == "gemma2_tiny") {
    // query_pre_attn_scalar 24 ≠ head_dim 16: GGUF has no key for the scale (llama.cpp derives
    // it from the sizes), so the writer must refuse rather than write a different model.
    try {
      write_llama_gguf(path, m.spec, m.weights, o);
      ADD_FAILURE() << "a gemma2 GGUF with an attention scale llama.cpp would not use was written";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::unsupported);
      EXPECT_NE(std::string(err.what()).find("attention scale"), std::string::npos) << err.what();
    }
    LlamaSpec plain = m.spec;
    plain.attn_scale = 0;  // the same model with 1/√head_dim round-trips
    write_llama_gguf(path, plain, m.weights, o);
    LlamaModel g = load_llama_model(path);
    EXPECT_EQ(g.spec.attn_softcap, m.spec.attn_softcap);
    EXPECT_EQ(g.spec.final_softcap, m.spec.final_softcap);
    EXPECT_EQ(g.spec.sliding_layers, m.spec.sliding_layers);
    EXPECT_EQ(g.spec.sliding_window, m.spec.sliding_window);
    EXPECT_NEAR(g.spec.attn_scale, 0.25, 1e-9);
    fs::remove(path);
    return;
  }
  write_llama_gguf(path, m.spec, m.weights, o);
  LlamaModel g = load_llama_model(path);
  EXPECT_EQ(g.spec.rope_interleaved, m.spec.arch == "llama");
  LlamaRunner r(g.spec, g.weights);
  r.reset(128);
  double err = max_abs_diff(r.forward(ids_of(e["prompt_ids"])), e["logits"]);
  std::printf("[llm] %s: F32 GGUF prompt logits max |RLX - torch| = %.3g\n", name.c_str(), err);
  EXPECT_LE(err, 1e-4);
  ASSERT_TRUE(g.tokenizer);
  EXPECT_EQ(g.tokenizer->encode(e["prompt_text"].get<std::string>()).ids, ids_of(e["prompt_ids"]));
  fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Tiny, Fixture, ::testing::Values("qwen3_tiny", "llama_tiny", "qwen2_tiny", "phi3_tiny", "gemma_tiny", "gemma2_tiny", "gemma3_tiny", "qwen3_moe_tiny", "phi3_long_tiny"));

// Random tiny weights have small logit margins; Q8_0 must keep nearly every top-1 choice. (On a
// trained model, below, Q8_0 reproduces the greedy ids exactly.)
TEST(Gguf, Q8_0KeepsTheTopOneTokens) {
  json e = expected("qwen3_tiny");
  LlamaModel m = load_llama_model(fixture("qwen3_tiny"));
  std::string path = temp_path("q8_0.gguf");
  GgufExportOptions o;
  o.matrix_type = formats::WeightType::q8_0;
  write_llama_gguf(path, m.spec, m.weights, o);
  LlamaModel g = load_llama_model(path);
  ASSERT_TRUE(g.weights.at("model.layers.0.mlp.up_proj.weight").is_packed());
  LlamaRunner r(g.spec, g.weights);
  std::vector<int32_t> prompt = ids_of(e["prompt_ids"]), want = ids_of(e["greedy"]);
  std::vector<int32_t> got = greedy(r, prompt, static_cast<int64_t>(want.size()));
  double agree = top1_agreement(r, prompt, want);
  size_t same = 0;
  while (same < want.size() && got[same] == want[same]) ++same;
  std::printf("[llm] qwen3_tiny (random weights) Q8_0: teacher-forced top-1 agreement %.1f%%; greedy ids identical for %zu of %zu\n",
              100 * agree, same, want.size());
  EXPECT_GE(agree, 0.95);
  fs::remove(path);
}

// Top-1 argmax at every position of `text` (teacher-forced through the KV cache).
std::vector<int32_t> top1(LlamaRunner& r, const std::vector<int32_t>& text) {
  r.reset(static_cast<int64_t>(text.size()) + 16);
  std::vector<int32_t> out;
  for (int32_t id : text) out.push_back(argmax(r.forward({id})));
  return out;
}

TEST(Gguf, Q4_KAgreesOnNinetyPercentOfTopOneTokens) {
  std::string dir = trained_wide_model();
  if (dir.empty()) GTEST_SKIP() << "needs Debian's PyTorch (/usr/bin/python3 with torch) to train the wide fixture";
  std::ifstream f(dir + "/expected.json");
  json e = json::parse(f);
  LlamaModel m = load_llama_model(dir);
  std::vector<int32_t> prompt = ids_of(e["prompt_ids"]), want = ids_of(e["greedy"]), text = ids_of(e["eval_ids"]);
  LlamaRunner f32(m.spec, m.weights);
  f32.reset(128);
  double err = max_abs_diff(f32.forward(prompt), e["logits"]);
  std::printf("[llm] trained hidden-256 Qwen3, f32: prompt logits max |RLX - torch| = %.3g\n", err);
  EXPECT_LE(err, 1e-4);
  EXPECT_EQ(greedy(f32, prompt, static_cast<int64_t>(want.size())), want);
  // Quantized vs f32 predictions over the training text, as llama.cpp's perplexity tool compares them.
  std::vector<int32_t> ref = top1(f32, text);
  struct Case {
    const char* name;
    formats::WeightType type;
    bool mix;
    double min_agree;
  };
  for (const Case& c : {Case{"Q8_0", formats::WeightType::q8_0, false, 0.98}, Case{"Q4_K", formats::WeightType::q4_k, false, 0.9},
                        Case{"Q4_K_M", formats::WeightType::q4_k, true, 0.9}}) {
    std::string path = temp_path("wide.gguf");
    GgufExportOptions o;
    o.matrix_type = c.type;
    o.k_quant_mix = c.mix ? KQuantMix::q4_k_m : KQuantMix::none;
    write_llama_gguf(path, m.spec, m.weights, o);
    LlamaModel g = load_llama_model(path);
    LlamaRunner r(g.spec, g.weights);
    std::vector<int32_t> got = top1(r, text);
    size_t agree = 0;
    for (size_t i = 0; i < got.size(); ++i) agree += got[i] == ref[i];
    std::vector<int32_t> gen = greedy(r, prompt, static_cast<int64_t>(want.size()));
    size_t same = 0;
    while (same < want.size() && gen[same] == want[same]) ++same;
    double frac = static_cast<double>(agree) / static_cast<double>(text.size());
    std::printf("[llm] trained hidden-256 Qwen3, %s: top-1 agreement with f32 %.1f%% over %zu tokens of its training text; greedy "
                "ids from the prompt identical for %zu of %zu\n",
                c.name, 100 * frac, text.size(), same, want.size());
    EXPECT_GE(frac, c.min_agree) << c.name;
    fs::remove(path);
  }
}

TEST(Precision, Bf16WeightsAndActivationsStayClose) {
  // llama_tiny ships bf16 weights: kept bf16, prefill multiplies bf16 activations on AMX (a prompt
  // of 64+ rows) and decode streams the bf16 rows with f32 activations.
  json e = expected("llama_tiny");
  LlamaLoadOptions lo;
  lo.precision = "bf16";
  LlamaModel m = load_llama_model(fixture("llama_tiny"), lo);
  ASSERT_EQ(m.weights.at("model.layers.0.mlp.up_proj.weight").dense.dtype(), DType::bf16);
  std::vector<int32_t> prompt = ids_of(e["prompt_ids"]), want = ids_of(e["greedy"]);
  LlamaRunnerOptions ro;
  ro.bf16_rows = 16;  // the fixture's prompt runs in a 32-row bucket
  LlamaRunner r(m.spec, m.weights, ro);
  r.reset(128);
  double err = max_abs_diff(r.forward(prompt), e["logits"]);
  std::vector<float> ref = e["logits"].get<std::vector<float>>();
  double scale = 0;
  for (float v : ref) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  double agree = top1_agreement(r, prompt, want);
  std::printf("[llm] llama_tiny in bf16: prompt logits max |RLX - torch f32| = %.3g (logits up to %.3g); teacher-forced top-1 agreement %.1f%%\n",
              err, scale, 100 * agree);
  EXPECT_LE(err, 0.02 * scale);
  EXPECT_GE(agree, 0.9);
}

TEST(Runner, BucketedAndExactPrefillAgree) {
  LlamaModel m = load_llama_model(fixture("qwen3_tiny"));
  json e = expected("qwen3_tiny");
  std::vector<int32_t> prompt = ids_of(e["prompt_ids"]);
  LlamaRunnerOptions exact;
  exact.bucket_prompts = false;
  LlamaRunner a(m.spec, m.weights), b(m.spec, m.weights, exact);
  a.reset(64);
  b.reset(64);
  EXPECT_GT(a.prefill_rows(static_cast<int64_t>(prompt.size())), static_cast<int64_t>(prompt.size()));
  Tensor la = a.forward(prompt).clone(), lb = b.forward(prompt).clone();
  EXPECT_LE(max_abs_diff(la, json(lb.to_vector<float>())), 1e-5);
  // A second chunk continues the same sequence.
  std::vector<int32_t> more = {5, 6, 7};
  EXPECT_LE(max_abs_diff(a.forward(more).clone(), json(b.forward(more).to_vector<float>())), 1e-5);
  EXPECT_EQ(a.length(), static_cast<int64_t>(prompt.size() + 3));
}

TEST(Runner, OverfullCacheIsAnError) {
  LlamaModel m = load_llama_model(fixture("qwen2_tiny"));
  LlamaRunner r(m.spec, m.weights);
  r.reset(4);
  EXPECT_THROW(r.forward({1, 2, 3, 4, 5}), Error);
  EXPECT_THROW(r.forward({100000}), Error);
}

TEST(Generate, StopsAtEos) {
  LlamaModel m = load_llama_model(fixture("qwen3_tiny"));
  json e = expected("qwen3_tiny");
  std::vector<int32_t> want = ids_of(e["greedy"]);
  LlamaRunner r(m.spec, m.weights);
  GenerateOptions o;
  o.max_tokens = 20;
  o.eos_token_ids = {want[2]};
  GenerateResult res = generate(r, ids_of(e["prompt_ids"]), o);
  EXPECT_EQ(res.stop_reason, "eos");
  EXPECT_EQ(res.ids, std::vector<int32_t>(want.begin(), want.begin() + 3));
}

TEST(Model, GenerationDefaultsAndEos) {
  LlamaModel m = load_llama_model(fixture("qwen3_tiny"));
  EXPECT_TRUE(m.generation.do_sample);
  EXPECT_DOUBLE_EQ(*m.generation.temperature, 0.6);
  EXPECT_EQ(*m.generation.top_k, 20);
  EXPECT_EQ(m.eos_token_ids, (std::vector<int64_t>{496, 494}));
  EXPECT_EQ(chat_prompt(m, "hi", false), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(chat_prompt(m, {{"system", "be brief"}, {"user", "hi"}}, true),
            "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(m.tokenizer->encode(chat_prompt(m, "hi", true)).ids.front(), 495);  // <|im_start|> is one token
}

TEST(Sampler, GreedyTopKTopPMinPAndSeeds) {
  std::vector<float> logits = {1.0f, 3.0f, 2.5f, -1.0f, 2.9f};
  SamplingOptions g;
  EXPECT_EQ(Sampler(g).sample(logits.data(), 5, {}), 1);
  SamplingOptions k1;
  k1.temperature = 5;
  k1.top_k = 1;
  EXPECT_EQ(Sampler(k1).sample(logits.data(), 5, {}), 1);
  SamplingOptions p;
  p.temperature = 1;
  p.top_p = 1e-6;
  EXPECT_EQ(Sampler(p).sample(logits.data(), 5, {}), 1);
  SamplingOptions mp;
  mp.temperature = 1;
  mp.min_p = 1.0;
  EXPECT_EQ(Sampler(mp).sample(logits.data(), 5, {}), 1);
  // Repetition penalty 2 halves token 1's positive logit: 1.5 < 2.9.
  SamplingOptions rp;
  rp.repetition_penalty = 2;
  EXPECT_EQ(Sampler(rp).sample(logits.data(), 5, {1, 1}), 4);
  // Seeded draws repeat; top-k 3 never leaves {1, 4, 2}.
  SamplingOptions s;
  s.temperature = 1;
  s.top_k = 3;
  s.seed = 42;
  Sampler a(s), b(s);
  for (int i = 0; i < 50; ++i) {
    int32_t x = a.sample(logits.data(), 5, {});
    EXPECT_EQ(x, b.sample(logits.data(), 5, {}));
    EXPECT_TRUE(x == 1 || x == 4 || x == 2) << x;
  }
  SamplingOptions bad;
  bad.top_p = 0;
  EXPECT_THROW(Sampler{bad}, Error);
}

}  // namespace
}  // namespace rlx::models
