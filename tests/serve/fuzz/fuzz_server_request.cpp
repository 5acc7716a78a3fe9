// libFuzzer target: the bodies `rlx serve` parses (/v1/completions, /v1/chat/completions and
// /v1/embeddings) for the tiny Qwen3 fixture — JSON, every typed field, prompts tokenized or
// their ids checked, conversations rendered through the model's chat template. A malformed body
// must end as HttpError (a 4xx answer) or rlx::Error; any other exception would reach the
// client as a 500 "internal error" and is a bug, as is a plan the engine could not run.
#include <cstdlib>
#include <string>

#include "models/qwen3_model.h"
#include "rlx/error.h"
#include "serve/request.h"

namespace {

constexpr int64_t kCapacity = 96;  // positions a sequence holds: small, so budgets run out
constexpr int64_t kEmbedVocab = 30522, kEmbedTokens = 512;

const rlx::models::LlamaModel& model() {
  static const rlx::models::LlamaModel m = rlx::models::load_llama_model(std::string(RLX_FIXTURE_DIR) + "/qwen3/qwen3_tiny");
  return m;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rlx::serve;
  std::string text(reinterpret_cast<const char*>(data), size);
  const rlx::models::LlamaModel& m = model();
  for (int endpoint = 0; endpoint < 3; ++endpoint) {
    try {
      Body b = parse_body(text);
      if (endpoint < 2) {
        CompletionPlan p = parse_completion(b, endpoint == 1, m, kCapacity);
        check(!p.gen.prompt.empty());  // the engine takes no empty prompt
        check(static_cast<int64_t>(p.gen.prompt.size()) + p.gen.max_tokens <= kCapacity && p.gen.max_tokens >= 0);
        for (int32_t id : p.gen.prompt) check(id >= 0 && id < m.spec.vocab_size);
        check(p.stops.size() <= 4 && p.logprobs <= 20);
      } else {
        EmbeddingRequest r = parse_embeddings(b, kEmbedVocab, kEmbedTokens);
        check(r.texts.size() + r.ids.size() >= 1 && r.texts.size() + r.ids.size() <= 2048);
        for (const auto& row : r.ids) {
          check(!row.empty() && static_cast<int64_t>(row.size()) <= kEmbedTokens);
          for (int32_t id : row) check(id >= 0 && id < kEmbedVocab);
        }
      }
    } catch (const HttpError& e) {
      check(e.status >= 400 && e.status < 500 && !e.message.empty());
      (void)error_body(e);
    } catch (const rlx::Error&) {
    }
  }
  return 0;
}
