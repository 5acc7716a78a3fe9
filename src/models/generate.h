// Text generation with a llama-family graph: a runner owning the compiled prefill and decode
// graphs and a preallocated KV cache (updated in place through donated graph inputs, never
// recompiled per token), and a generation loop that samples, stops at EOS and streams.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "models/qwen3.h"
#include "models/sampler.h"
#include "rlx/session.h"

namespace rlx::models {

// One stage of a pipeline-parallel run (`rlx generate --pp N` under rlx launch): this rank runs
// layers [first_layer, end_layer) and holds only their KV cache; it receives the residual stream
// from `prev` (the stage before, at the same tensor-parallel position), sends its own to `next`,
// and every rank adopts the logits (or the greedy next token) that `root`, a rank of the last
// stage, broadcasts — so every rank samples the same token.
struct LlamaPipeline {
  dist::Communicator* comm = nullptr;  // the job's; null: no pipeline
  int stage = 0, stages = 1;
  int64_t first_layer = 0, end_layer = -1;
  int prev = -1, next = -1, root = 0;
};

struct LlamaRunnerOptions {
  std::string device = "cpu";
  // Dense bf16 matrices in the decode graph: "auto" (decode-on-the-fly dequant_matmul), "gemm"
  // or "packed"; prefill always multiplies through GEMMs (AMX on the cpu device).
  std::string decode_half_matmul = "auto";
  // The session's precision policy; its quantized_activations decide the decode graph's: "auto"
  // rounds activations of the types below 8 bits to 8 bits where the device takes integer dot
  // products (Q8_0 keeps f32 activations and so the greedy ids of its f32 weights), "q8" does for
  // Q8_0 too, "f32" never. (Its compute precision is the weights': see LlamaLoadOptions.)
  PrecisionPolicy precision;
  // Prefill matmuls of quantized or bf16 weights with bf16 activations (AMX on the cpu device)
  // for prompts of at least `bf16_rows` rows: "auto" (yes unless every matrix is f32), "on" or
  // "off". Shorter prompts and decode keep f32 activations.
  std::string prefill_bf16 = "auto";
  int64_t bf16_rows = 64;
  // Prompts are padded to a bucket (powers of two from 16) so a handful of prefill shapes
  // serve every prompt; off: one shape per prompt length.
  bool bucket_prompts = true;
  // One rank of a tensor-parallel run (the spec and weights are models::LlamaShard's; the
  // process has lent its communicator to the graphs: dist::GraphCollectives).
  int64_t tensor_parallel = 1;
  bool vocab_parallel_head = false;
  LlamaPipeline pipeline;
};

class LlamaRunner {
 public:
  // Builds and compiles the graphs (weights become constants; they are not copied).
  LlamaRunner(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaRunnerOptions& options = {});
  ~LlamaRunner();
  LlamaRunner(const LlamaRunner&) = delete;  // the cache may live on the device, owned by this runner
  LlamaRunner& operator=(const LlamaRunner&) = delete;

  // Empties the sequence; (re)allocates a zeroed cache of `capacity` positions when it differs.
  void reset(int64_t capacity);
  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  const LlamaSpec& spec() const { return spec_; }

  // Appends `ids` at positions length() … and returns the logits after the last of them
  // (f32[1, vocab], valid until the next call). One id runs the decode graph, more the prefill.
  const Tensor& forward(const std::vector<int32_t>& ids);

  // Appends one token and returns the most likely next one (ties: the lowest id) — forward()
  // followed by an argmax, but the argmax runs in the decode graph, so on a GPU the logits stay
  // there (they are not returned).
  int32_t forward_greedy(int32_t id);

  // The compiled decode step (its dispatch report: what this rank runs, and how).
  const CompiledModel& decode_model() const { return decode_; }

  // The prefill bucket a prompt of n tokens runs in at the current length.
  int64_t prefill_rows(int64_t n) const;

 private:
  void check_room(const std::vector<int32_t>& ids) const;
  void set_inputs(const std::vector<int32_t>& ids, int64_t rows, const Tensor& logits);
  // One token through the decode graph, its logits into `logits` (host or device-resident).
  void run_decode(int32_t id, const Tensor& logits);
  // Runs `graph` on the inputs set; in a pipeline, with the stage's hidden rows received before
  // and sent after, then the last stage's `result` (logits or next token) broadcast to all.
  void run_step(CompiledModel& graph, const Tensor& result);
  bool first_stage() const { return options_.pipeline.stage == 0; }
  bool last_stage() const { return options_.pipeline.stage == options_.pipeline.stages - 1; }
  void release_caches();

  LlamaSpec spec_;
  LlamaRunnerOptions options_;
  CompiledModel prefill_, decode_;
  std::optional<CompiledModel> prefill_bf16_;  // long prompts, when the policy asks for it
  std::vector<Tensor> caches_;  // k.0, v.0, k.1, …
  std::vector<Tensor> inputs_, outputs_;
  Tensor logits_;
  Tensor device_logits_;  // the greedy step's logits: kept on the device where there is one
  Tensor next_token_;     // i64[1]
  Tensor hidden_;         // a pipeline stage's residual stream rows (received or sent)
  int64_t length_ = 0, capacity_ = 0;
};

struct GenerateOptions {
  int64_t max_tokens = 128;
  SamplingOptions sampling;
  std::vector<int64_t> eos_token_ids;  // generation stops after emitting one (it is kept in ids)
};

struct GenerateResult {
  std::vector<int32_t> ids;  // generated tokens, EOS included when it ended the run
  std::string stop_reason;   // "eos" or "length"
  double prefill_ms = 0;
  double decode_ms = 0;      // every step after the first token
  int64_t decode_steps = 0;
  double decode_tokens_per_second() const { return decode_ms > 0 ? 1000.0 * static_cast<double>(decode_steps) / decode_ms : 0; }
};

// Generation one token at a time, for callers that pull (a Python iterator, a server's batch):
// the constructor resets the runner to hold prompt + max_tokens; next() prefills on its first
// call, then decodes, and returns each generated id until EOS or max_tokens (then nullopt).
class TokenStream {
 public:
  TokenStream(LlamaRunner& runner, std::vector<int32_t> prompt, const GenerateOptions& options);
  std::optional<int32_t> next();
  bool done() const { return done_; }
  const GenerateResult& result() const { return r_; }  // ids so far, stop reason and timings

 private:
  LlamaRunner& runner_;
  GenerateOptions o_;
  Sampler sampler_;
  bool device_argmax_;
  std::vector<int32_t> history_;
  const Tensor* logits_ = nullptr;
  GenerateResult r_;
  bool done_ = false;
  std::chrono::steady_clock::time_point decode_start_;
};

// Resets the runner to hold prompt + max_tokens, prefills, then decodes token by token.
// `on_token` sees every generated id as soon as it is chosen; returning false stops early.
GenerateResult generate(LlamaRunner& runner, const std::vector<int32_t>& prompt, const GenerateOptions& options,
                        const std::function<bool(int32_t)>& on_token = {});

}  // namespace rlx::models
