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

// 20 decode steps from a 5-token prompt, feeding back the greedy token; the megakernel on for
// runs of at least `min_run` steps (0: off).
Decoded decode(const models::LlamaSpec& spec, const models::LlamaWeights& w, int min_run) {
  set_flag("RLX_CUDA_MEGAKERNEL", std::to_string(min_run));
  models::LlamaRunnerOptions o;
  o.device = "cuda";
  models::LlamaRunner r(spec, w, o);
  r.reset(64);
  Decoded d;
  const Tensor* logits = &r.forward({3, 17, 42, 99, 7});
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

TEST_P(Megakernel, DecodeMatchesTheKernelPerStepRun) {
  std::string why;
  if (!gpu_usable(why)) GTEST_SKIP() << "cuda unavailable: " << why;
  models::LlamaSpec spec = small_spec(GetParam());
  models::LlamaWeights w = models::random_llama_weights(spec, 5, DType::bf16, 0.05);
  Decoded plain = decode(spec, w, 0);
  const int64_t launches = backends::cuda::megakernel_launches();
  Decoded mega = decode(spec, w, 1);
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

INSTANTIATE_TEST_SUITE_P(Archs, Megakernel, ::testing::Values("qwen3", "llama"));

}  // namespace
