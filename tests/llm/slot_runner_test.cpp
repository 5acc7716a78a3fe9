// Continuous batching (models/slot_runner.h): sequences that share decode passes — joining at
// different steps, at different positions — produce exactly the greedy ids each gives alone.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/generate.h"
#include "models/qwen3_model.h"
#include "models/slot_runner.h"
#include "rlx/error.h"

namespace rlx::models {
namespace {

int32_t argmax_row(const Tensor& logits, int64_t row) {
  int64_t V = logits.shape()[1];
  const float* p = logits.data_as<float>() + row * V;
  return static_cast<int32_t>(std::max_element(p, p + V) - p);
}

class Slots : public ::testing::TestWithParam<const char*> {};

TEST_P(Slots, SharedPassesGiveEachSequenceItsOwnGreedyIds) {
  LlamaModel m = load_llama_model(std::string(RLX_FIXTURE_DIR) + "/" + GetParam());
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3}, {7, 40, 9, 11, 300, 2, 18}, {5}};
  const int64_t n = 12;
  std::vector<std::vector<int32_t>> alone;
  LlamaRunner single(m.spec, m.weights);
  for (const auto& p : prompts) {
    GenerateOptions o;
    o.max_tokens = n;
    alone.push_back(generate(single, p, o).ids);
  }
  SlotRunner r(m.spec, m.weights, SlotRunnerOptions{"cpu", {}, 4, 64, 16});
  // sequence i joins at step join[i] into slot i (slot 3 stays empty)
  const std::vector<int64_t> join = {0, 2, 5};
  std::vector<std::vector<int32_t>> got(prompts.size());
  std::vector<int64_t> pos(4, 0);
  std::vector<int32_t> next(4, 0);
  std::vector<bool> live(4, false);
  for (int64_t step = 0; step < 40; ++step) {
    for (size_t i = 0; i < prompts.size(); ++i)
      if (join[i] == step) {
        next[i] = argmax_row(r.prefill(static_cast<int64_t>(i), prompts[i]), 0);
        got[i].push_back(next[i]);
        pos[i] = static_cast<int64_t>(prompts[i].size());
        live[i] = true;
      }
    bool any = false;
    for (size_t i = 0; i < prompts.size(); ++i) any = any || (live[i] && static_cast<int64_t>(got[i].size()) < n);
    if (!any && step > join.back()) break;
    // a pass runs the slots up to the highest live one (1, 2, then 3 rows here)
    size_t rows = 1;
    for (size_t i = 0; i < 4; ++i)
      if (live[i]) rows = i + 1;
    std::vector<int64_t> p(rows, 0);
    std::vector<int32_t> ids(rows, 0);
    for (size_t i = 0; i < rows; ++i)
      if (live[i]) p[i] = pos[i], ids[i] = next[i];
    const Tensor& logits = r.decode(ids, p);
    ASSERT_EQ(logits.shape()[0], static_cast<int64_t>(rows));
    for (size_t i = 0; i < prompts.size(); ++i) {
      if (!live[i] || static_cast<int64_t>(got[i].size()) >= n) continue;
      next[i] = argmax_row(logits, static_cast<int64_t>(i));
      got[i].push_back(next[i]);
      ++pos[i];
    }
  }
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(got[i], alone[i]) << "sequence " << i;
}

INSTANTIATE_TEST_SUITE_P(Tiny, Slots, ::testing::Values("qwen3_tiny", "llama_tiny", "qwen2_tiny", "phi3_tiny", "gemma2_tiny", "gemma3_tiny", "qwen3_moe_tiny", "phi3_long_tiny"));

TEST(SlotRunner, PromptsThatDoNotFitAreRefused) {
  LlamaModel m = load_llama_model(std::string(RLX_FIXTURE_DIR) + "/qwen3_tiny");
  SlotRunner r(m.spec, m.weights, SlotRunnerOptions{"cpu", {}, 2, 16, 16});
  EXPECT_THROW(r.prefill(0, std::vector<int32_t>(17, 1)), Error);
  EXPECT_THROW(r.prefill(2, {1}), Error);
  EXPECT_THROW(r.decode({1, 1}, {0, 16}), Error);
  EXPECT_THROW(r.decode({1, 1, 1}, {0, 0, 0}), Error);  // more rows than slots
  EXPECT_THROW(r.decode({}, {}), Error);
}

}  // namespace
}  // namespace rlx::models
