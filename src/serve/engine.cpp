#include "serve/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::serve {

Engine::Engine(const models::LlamaModel& model, const models::SlotRunnerOptions& options)
    : model_(model), runner_(model.spec, model.weights, options), live_(static_cast<size_t>(options.slots)) {
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int64_t Engine::submit(GenerationRequest request) {
  if (request.prompt.empty()) throw Error(ErrorKind::invalid_argument, "the prompt has no tokens");
  if (static_cast<int64_t>(request.prompt.size()) >= runner_.capacity())
    throw Error(ErrorKind::invalid_argument, cat("the prompt has ", request.prompt.size(), " tokens; a sequence holds at most ", runner_.capacity(),
                                                 " (prompt and answer)"));
  if (request.max_tokens < 0) throw Error(ErrorKind::invalid_argument, cat("max_tokens must be ≥ 0, got ", request.max_tokens));
  for (int32_t id : request.prompt)
    if (id < 0 || id >= model_.spec.vocab_size)
      throw Error(ErrorKind::invalid_argument, cat("token id ", id, " is outside the vocabulary [0, ", model_.spec.vocab_size, ")"));
  auto s = std::make_unique<Sequence>();
  s->sampler = std::make_unique<models::Sampler>(request.sampling);  // validates the options
  s->history = request.prompt;
  s->req = std::move(request);
  std::lock_guard<std::mutex> lock(mu_);
  s->id = next_id_++;
  int64_t id = s->id;
  queue_.push_back(std::move(s));
  cv_.notify_all();
  return id;
}

void Engine::cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_.push_back(id);
  cv_.notify_all();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStats s;
  s.queued = static_cast<int64_t>(queue_.size());
  s.slots = runner_.slots();
  int64_t held = 0;
  for (const auto& q : live_)
    if (q) ++s.live, held += q->position;
  s.kv_cache_use = static_cast<double>(held) / static_cast<double>(runner_.slots() * runner_.capacity());
  s.prompt_tokens = prompt_tokens_;
  s.generated_tokens = generated_tokens_;
  s.passes = passes_;
  return s;
}

void Engine::finish(Sequence& s, const std::string& reason) {
  if (s.req.on_done) s.req.on_done(reason);
  s.req.on_done = nullptr;
}

bool Engine::emit(Sequence& s, const float* logits) {
  const int64_t V = model_.spec.vocab_size;
  TokenEvent ev;
  ev.id = s.sampler->sample(logits, V, s.history);
  // log-probabilities under the model's distribution (before temperature and truncation)
  float mx = *std::max_element(logits, logits + V);
  double sum = 0;
  for (int64_t i = 0; i < V; ++i) sum += std::exp(static_cast<double>(logits[i] - mx));
  double lse = mx + std::log(sum);
  ev.logprob = logits[ev.id] - lse;
  if (s.req.top_logprobs > 0) {
    std::vector<int32_t> idx(static_cast<size_t>(V));
    std::iota(idx.begin(), idx.end(), 0);
    size_t k = std::min<size_t>(static_cast<size_t>(s.req.top_logprobs), idx.size());
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (size_t i = 0; i < k; ++i) ev.top.emplace_back(idx[i], logits[idx[i]] - lse);
  }
  s.history.push_back(ev.id);
  s.next = ev.id;
  ++s.generated;
  ++generated_tokens_;
  bool go_on = !s.req.on_token || s.req.on_token(ev);
  bool eos = std::find(s.req.eos_token_ids.begin(), s.req.eos_token_ids.end(), ev.id) != s.req.eos_token_ids.end();
  if (eos || !go_on) {
    finish(s, "stop");
    return false;
  }
  if (s.generated >= s.req.max_tokens || s.position + 1 >= runner_.capacity()) {
    finish(s, "length");
    return false;
  }
  return true;
}

void Engine::admit(std::unique_lock<std::mutex>& lock) {
  for (size_t slot = 0; slot < live_.size() && !queue_.empty(); ++slot) {
    if (live_[slot]) continue;
    std::unique_ptr<Sequence> s = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    bool live = false;
    if (s->req.max_tokens == 0) {
      finish(*s, "length");
    } else {
      try {
        const Tensor& logits = runner_.prefill(static_cast<int64_t>(slot), s->req.prompt);
        prompt_tokens_ += static_cast<int64_t>(s->req.prompt.size());
        s->slot = static_cast<int64_t>(slot);
        s->position = static_cast<int64_t>(s->req.prompt.size());
        live = emit(*s, logits.data_as<float>());
      } catch (const std::exception& e) {
        finish(*s, cat("error: ", e.what()));
      }
    }
    lock.lock();
    if (live) live_[slot] = std::move(s);
  }
}

void Engine::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // cancellations: queued requests leave at once, live ones here between passes
    std::vector<std::unique_ptr<Sequence>> gone;
    for (int64_t id : cancelled_) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if ((*it)->id == id) {
          gone.push_back(std::move(*it));
          queue_.erase(it);
          break;
        }
      for (auto& s : live_)
        if (s && s->id == id) gone.push_back(std::move(s));
    }
    cancelled_.clear();
    if (stopping_) {
      for (auto& s : queue_) gone.push_back(std::move(s));
      for (auto& s : live_)
        if (s) gone.push_back(std::move(s));
      queue_.clear();
    }
    if (!gone.empty()) {
      lock.unlock();
      for (auto& s : gone) finish(*s, "cancelled");
      lock.lock();
    }
    if (stopping_) return;
    admit(lock);
    bool any = std::any_of(live_.begin(), live_.end(), [](const auto& s) { return s != nullptr; });
    if (!any) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !cancelled_.empty(); });
      continue;
    }
    // one pass over the slots up to the highest live one: every live sequence feeds its last
    // token at its position (admit() fills the lowest free slots, so the pass stays short)
    size_t rows = 0;
    for (size_t i = 0; i < live_.size(); ++i)
      if (live_[i]) rows = i + 1;
    // A held sequence feeds a dummy token at its slot's last position, which it has not reached
    // (it would have finished) and which it writes itself before ever reading it.
    std::vector<int32_t> ids(rows, 0);
    std::vector<int64_t> pos(rows, 0);
    std::vector<bool> held(rows, false);
    size_t active = 0;
    for (size_t i = 0; i < rows; ++i) {
      if (!live_[i]) continue;
      held[i] = live_[i]->req.ready && !live_[i]->req.ready();
      if (held[i]) pos[i] = runner_.capacity() - 1;
      else ids[i] = live_[i]->next, pos[i] = live_[i]->position, ++active;
    }
    if (active == 0) {  // every reader is behind: look again shortly (or at a cancellation)
      cv_.wait_for(lock, std::chrono::milliseconds(2), [&] { return stopping_ || !cancelled_.empty(); });
      continue;
    }
    lock.unlock();
    std::vector<bool> done(live_.size(), false);
    try {
      const Tensor& logits = runner_.decode(ids, pos);
      ++passes_;
      for (size_t i = 0; i < rows; ++i) {
        if (!live_[i] || held[i]) continue;
        ++live_[i]->position;
        done[i] = !emit(*live_[i], logits.data_as<float>() + static_cast<int64_t>(i) * model_.spec.vocab_size);
      }
    } catch (const std::exception& e) {
      for (size_t i = 0; i < live_.size(); ++i)
        if (live_[i]) finish(*live_[i], cat("error: ", e.what())), done[i] = true;
    }
    lock.lock();
    for (size_t i = 0; i < live_.size(); ++i)
      if (done[i]) live_[i].reset();
  }
}

}  // namespace rlx::serve
