// Sequences served together (continuous batching): every layer's KV cache holds `slots` rows of
// `capacity` positions, one per sequence; a prompt is prefilled into its slot alone, and one
// decode pass advances every slot by a token at its own position. Sequences join and leave
// between passes; an empty slot below a live one runs along on a dummy token at position 0 (it
// costs a row of the batched matmuls, which read each weight once for all rows).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/qwen3.h"
#include "rlx/session.h"

namespace rlx::models {

struct SlotRunnerOptions {
  std::string device = "cpu";
  PrecisionPolicy precision;  // quantized_activations as LlamaRunnerOptions reads it
  int64_t slots = 4;
  int64_t capacity = 1024;    // positions per slot (prompt and answer)
  int64_t window_step = 64;   // attention reads keys up to the longest live length, rounded up to this
};

class SlotRunner {
 public:
  SlotRunner(const LlamaSpec& spec, const LlamaWeights& weights, const SlotRunnerOptions& options);
  ~SlotRunner();
  SlotRunner(const SlotRunner&) = delete;
  SlotRunner& operator=(const SlotRunner&) = delete;

  int64_t slots() const { return options_.slots; }
  int64_t capacity() const { return options_.capacity; }
  const LlamaSpec& spec() const { return spec_; }

  // Writes `ids` into `slot` at positions 0 … n−1 and returns the logits after the last of them
  // (f32[1, vocab], valid until the next call). Throws when the prompt does not fit the slot.
  const Tensor& prefill(int64_t slot, const std::vector<int32_t>& ids);
  // One token for each of the first n slots (n = ids.size() ≤ slots): ids[s] at positions[s].
  // Returns logits f32[n, vocab], valid until the next call. A pass costs what its n rows cost,
  // so callers keep live sequences in the lowest slots and pass only as many as reach the
  // highest live one (empty slots below it take a dummy token).
  const Tensor& decode(const std::vector<int32_t>& ids, const std::vector<int64_t>& positions);

 private:
  Tensor window(int64_t length) const;  // the kv_window input for sequences up to `length`

  LlamaSpec spec_;
  SlotRunnerOptions options_;
  CompiledModel prefill_, decode_;
  std::vector<Tensor> caches_;
  std::vector<Tensor> inputs_, outputs_;
  Tensor prefill_logits_, decode_logits_;
};

}  // namespace rlx::models
