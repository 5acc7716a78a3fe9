// The continuous-batching engine behind `rlx serve`: requests queue, take a free slot of a
// SlotRunner as soon as one is free (their prompt prefilled alone), and from then on advance
// together — one decode pass gives every live sequence its next token; sequences finish (EOS, a
// token budget, a cancelled client) and leave between passes. One thread runs the model; callers
// on any thread submit and receive tokens through callbacks.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "models/qwen3_model.h"
#include "models/sampler.h"
#include "models/slot_runner.h"

namespace rlx::serve {

// One generated token: its id, its log-probability under the model and, when asked, the most
// likely alternatives (id, log-probability), best first.
struct TokenEvent {
  int32_t id = 0;
  double logprob = 0;
  std::vector<std::pair<int32_t, double>> top;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;
  int64_t max_tokens = 16;
  models::SamplingOptions sampling;
  std::vector<int64_t> eos_token_ids;  // the sequence ends after emitting one
  int top_logprobs = 0;                // alternatives per token (0: none)
  // Called on the engine thread for every token; returning false ends the sequence ("stop").
  std::function<bool(const TokenEvent&)> on_token;
  // Called on the engine thread before each pass (when set): false holds the sequence — its
  // reader is behind — so the pass generates nothing for it and it keeps its place. A client
  // that reads slowly or has gone away costs at most its read-ahead in tokens, never the rest of
  // max_tokens.
  std::function<bool()> ready;
  // Called once, on the engine thread: "stop" (EOS or on_token said so), "length" (max_tokens or
  // the slot's capacity), "cancelled", or "error: …".
  std::function<void(const std::string& finish_reason)> on_done;
};

struct EngineStats {
  int64_t queued = 0, live = 0, slots = 0;
  int64_t prompt_tokens = 0, generated_tokens = 0, passes = 0;
  double kv_cache_use = 0;  // positions held by live sequences / all positions
};

class Engine {
 public:
  Engine(const models::LlamaModel& model, const models::SlotRunnerOptions& options);
  ~Engine();  // finishes no request: cancels the queued and the live ones
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; returns its id (for cancel). Throws rlx::Error(invalid_argument) when the
  // prompt is empty or does not fit a slot.
  int64_t submit(GenerationRequest request);
  // Ends a request: it leaves before the next pass (on_done("cancelled")). Any thread.
  void cancel(int64_t id);
  EngineStats stats() const;
  int64_t capacity() const { return runner_.capacity(); }

 private:
  struct Sequence {
    int64_t id;
    GenerationRequest req;
    std::unique_ptr<models::Sampler> sampler;
    std::vector<int32_t> history;
    int64_t slot = -1, generated = 0;
    // Advanced by the loop during a pass, outside the lock; stats() reads it for the KV-cache use
    std::atomic<int64_t> position{0};
    int32_t next = 0;
  };
  void loop();
  void admit(std::unique_lock<std::mutex>& lock);
  // Samples the next token of s from its logits row, reports it; false once s is finished.
  bool emit(Sequence& s, const float* logits);
  void finish(Sequence& s, const std::string& reason);

  const models::LlamaModel& model_;
  models::SlotRunner runner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Sequence>> queue_;
  std::vector<std::unique_ptr<Sequence>> live_;  // by slot
  std::vector<int64_t> cancelled_;
  int64_t next_id_ = 1;
  bool stopping_ = false;
  std::atomic<int64_t> prompt_tokens_{0}, generated_tokens_{0}, passes_{0};
  std::thread thread_;
};

}  // namespace rlx::serve
