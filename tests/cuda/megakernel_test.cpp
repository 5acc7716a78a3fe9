// The decode megakernel (RLX_CUDA_MEGAKERNEL) against the kernel-per-step run of the same
// compiled decode graph: a small Qwen3 and a llama-style model with random bf16 weights, greedy
// ids equal and logits within float rounding (the attention tile merges its warps in another
// order than the cluster kernel; every other tile is the kernel's own code).
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cuda/megakernel.h"
#include "models/generate.h"
#include "models/qwen3_weights.h"
#include "rlx/session.h"
#include "util/flags.h"

using namespace rlx;

namespace {

bool gpu_usable(std::string& why) {
  for (const DeviceInfo& d : devices())
    if (d.name == "cuda") {
      why = d.reason;
      return d.available;
    }
  why = "the cuda device is not built";
  return false;
}

models::LlamaSpec small_spec(const std::string& arch) {
  models::LlamaSpec s;
  s.arch = arch;
  s.vocab_size = 512;
  s.hidden_size = 256;
  s.intermediate_size = 512;
  s.num_layers = 3;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 64;
  s.max_position_embeddings = 256;
  s.rope_theta = 1e6;
  s.qk_norm = arch == "qwen3";
  s.tie_word_embeddings = true;
  return s;
}

struct Decoded {
  std::vector<int32_t> ids;
  std::vector<Tensor> logits;
};

// 20 decode steps from a prompt of `prompt` tokens in a cache of `capacity` rows (every decode
// step's attention reads all of them, the unwritten ones masked), feeding back the greedy token;
// the megakernel on for runs of at least `min_run` steps (0: off).
Decoded decode(const models::LlamaSpec& spec, const models::LlamaWeights& w, int min_run, int64_t capacity = 64, int64_t prompt = 5) {
  set_flag("RLX_CUDA_MEGAKERNEL", std::to_string(min_run));
  models::LlamaRunnerOptions o;
  o.device = "cuda";
  models::LlamaRunner r(spec, w, o);
  r.reset(capacity);
  Decoded d;
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < prompt; ++i) ids.push_back(static_cast<int32_t>((3 + i * 131) % spec.vocab_size));
  const Tensor* logits = &r.forward(ids);
  for (int s = 0; s < 20; ++s) {
    const float* p = logits->data_as<float>();
    int32_t next = static_cast<int32_t>(std::max_element(p, p + logits->numel()) - p);
    d.ids.push_back(next);
    logits = &r.forward({next});
    d.logits.push_back(logits->contiguous().clone());
  }
  set_flag("RLX_CUDA_MEGAKERNEL", "0");
  return d;
}

class Megakernel : public ::testing::TestWithParam<const char*> {};

void expect_same_decode(const models::LlamaSpec& spec, int64_t capacity, int64_t prompt) {
  models::LlamaWeights w = models::random_llama_weights(spec, 5, DType::bf16, 0.05);
  Decoded plain = decode(spec, w, 0, capacity, prompt);
  const int64_t launches = backends::cuda::megakernel_launches();
  Decoded mega = decode(spec, w, 1, capacity, prompt);
  // the decode graph's first run launches it, its second captures it into the CUDA graph replayed after
  EXPECT_GE(backends::cuda::megakernel_launches() - launches, 2);
  EXPECT_EQ(mega.ids, plain.ids);
  ASSERT_EQ(mega.logits.size(), plain.logits.size());
  double worst = 0, scale = 0;
  for (size_t s = 0; s < plain.logits.size(); ++s) {
    const float *a = plain.logits[s].data_as<float>(), *b = mega.logits[s].data_as<float>();
    for (int64_t i = 0; i < plain.logits[s].numel(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(a[i])));
    }
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(worst, 1e-4 * std::max(scale, 1.0)) << "largest logit difference " << worst << " (largest logit " << scale << ")";
}

TEST_P(Megakernel, DecodeMatchesTheKernelPerStepRun) {
  std::string why;
  if (!gpu_usable(why)) GTEST_SKIP() << "cuda unavailable: " << why;
  expect_same_decode(small_spec(GetParam()), 64, 5);
}

// A 1,024-row cache: each row's keys shared by 8 blocks (megakernel_attention_share: 128 keys
// a share), their partial softmaxes merged by the last of them to finish.
TEST_P(Megakernel, LongCacheSharedOverBlocksMatches) {
  std::string why;
  if (!gpu_usable(why)) GTEST_SKIP() << "cuda unavailable: " << why;
  models::LlamaSpec spec = small_spec(GetParam());
  spec.max_position_embeddings = 1024;
  expect_same_decode(spec, 1024, 300);
}

INSTANTIATE_TEST_SUITE_P(Archs, Megakernel, ::testing::Values("qwen3", "llama"));

}  // namespace
