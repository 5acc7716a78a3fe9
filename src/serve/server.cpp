#include "serve/server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "rlx/error.h"
#include "serve/metrics.h"
#include "serve/request.h"
#include "serve/stop_scanner.h"
#include "text/decode_stream.h"
#include "util/base64.h"
#include "util/strings.h"

namespace rlx::serve {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// What one request's generation hands from the engine thread to its HTTP thread.
struct Pending {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<TokenEvent> tokens;
  bool done = false;
  bool abandon = false;  // the HTTP side wants no more tokens (a stop string, a gone client)
  std::string finish;
  Clock::time_point arrived = Clock::now(), last;
  int64_t generated = 0;
};

}  // namespace

struct Server::Impl {
  ServerOptions o;
  const models::LlamaModel* model;
  Engine* engine;
  const models::SentenceEmbedder* embedder;
  httplib::Server svr;
  Metrics metrics;
  std::thread thread;
  int64_t created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::atomic<int64_t> next_id{1};

  void check_auth(const httplib::Request& req) const {
    if (o.api_key.empty()) return;
    if (req.get_header_value("Authorization") != "Bearer " + o.api_key) bad("invalid or missing API key (Authorization: Bearer …)", "", 401, "invalid_api_key");
  }

  // The handler wrapper: authentication, errors as JSON, metrics.
  httplib::Server::Handler route(const std::string& endpoint, bool open, std::function<void(const httplib::Request&, httplib::Response&)> fn) {
    return [this, endpoint, open, fn](const httplib::Request& req, httplib::Response& res) {
      auto t0 = Clock::now();
      try {
        if (!open) check_auth(req);
        fn(req, res);
        if (res.status == -1) res.status = 200;  // httplib fills it in after the handler
      } catch (const HttpError& e) {
        res.status = e.status;
        res.set_content(error_body(e), "application/json");
      } catch (const Error& e) {
        int status = e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::parse ? 400 : e.kind() == ErrorKind::unsupported ? 400 : 500;
        res.status = status;
        res.set_content(error_body({status, e.what(), "", ""}), "application/json");
      } catch (const std::exception& e) {
        res.status = 500;
        res.set_content(error_body({500, cat("internal error: ", e.what()), "", ""}), "application/json");
      }
      metrics.request(endpoint, res.status);
      if (res.status != 200 || !res.is_chunked_content_provider_)
        metrics.request_duration.observe(std::chrono::duration<double>(Clock::now() - t0).count());
    };
  }

  // A token's text; ids past the tokenizer's vocabulary (a model's padding rows) have none.
  bool has_text(int32_t id) const { return model->tokenizer && static_cast<size_t>(id) < model->tokenizer->vocab_size(); }
  std::string token_text(int32_t id) const { return has_text(id) ? model->tokenizer->decode({id}, false) : model->tokenizer ? "" : std::to_string(id); }

  json logprob_entry(const TokenEvent& ev, bool chat) const {
    if (chat) {
      json top = json::array();
      for (const auto& [id, lp] : ev.top) top.push_back({{"token", token_text(id)}, {"logprob", lp}});
      return {{"token", token_text(ev.id)}, {"logprob", ev.logprob}, {"top_logprobs", top}};
    }
    json top = json::object();
    for (const auto& [id, lp] : ev.top) top[token_text(id)] = lp;
    return {{"token", token_text(ev.id)}, {"logprob", ev.logprob}, {"top", top}};
  }

  // One request's tokens turned into text (stop strings, EOS held back) and written out.
  struct Stream {
    Impl* s;
    std::shared_ptr<Pending> p;
    int64_t engine_id;
    CompletionPlan plan;
    bool chat;
    std::string rid;
    int64_t prompt_tokens;
    std::optional<text::DecodeStream> decode;
    StopScanner stops;
    std::string finish;
    json logprobs = json::array();
    std::vector<int32_t> token_ids;  // since the last chunk (return_tokens)
    Stream(Impl* impl, std::shared_ptr<Pending> pending, int64_t id, CompletionPlan pl, bool c, std::string r, int64_t n)
        : s(impl), p(std::move(pending)), engine_id(id), plan(std::move(pl)), chat(c), rid(std::move(r)), prompt_tokens(n), stops(plan.stops) {
      if (s->model->tokenizer) decode.emplace(s->model->tokenizer->decode_stream(true));
    }

    // Waits for the next tokens; returns (text to send, finished?) with the finish reason set.
    std::pair<std::string, bool> next() {
      std::unique_lock<std::mutex> lock(p->mu);
      p->cv.wait(lock, [&] { return !p->tokens.empty() || p->done; });
      std::deque<TokenEvent> evs;
      evs.swap(p->tokens);
      bool done = p->done;
      std::string reason = p->finish;
      lock.unlock();
      std::string text;
      for (const TokenEvent& ev : evs) {
        if (stops.stopped()) break;
        if (plan.logprobs >= 0) logprobs.push_back(s->logprob_entry(ev, chat));
        token_ids.push_back(ev.id);
        bool eos = std::find(plan.gen.eos_token_ids.begin(), plan.gen.eos_token_ids.end(), ev.id) != plan.gen.eos_token_ids.end();
        if (eos) continue;
        if (!decode) text += stops.feed(cat(ev.id, " "));
        else if (s->has_text(ev.id)) text += stops.feed(decode->step(ev.id));
      }
      if (stops.stopped() && !done) {
        // the text has what it needs: let the engine free the slot now
        {
          std::lock_guard<std::mutex> l(p->mu);
          p->abandon = true;
        }
        s->engine->cancel(engine_id);
        finish = "stop";
        return {text, true};
      }
      if (done) {
        if (decode && !stops.stopped()) text += stops.feed(decode->finish());
        text += stops.flush();
        finish = stops.stopped() ? "stop" : reason == "cancelled" ? "stop" : reason;
        if (starts_with(finish, "error")) finish = "stop";
      }
      return {text, done};
    }

    json usage() const {
      // under the lock: after a stop string the engine may still deliver a token or two (their
      // on_token returns false) while the answer is written (ThreadSanitizer, 2026-12-07)
      int64_t generated;
      {
        std::lock_guard<std::mutex> lock(p->mu);
        generated = p->generated;
      }
      return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", generated}, {"total_tokens", prompt_tokens + generated}};
    }

    // A non-streamed answer, written when generation ends. Until then a space goes out every
    // 200 ms (JSON allows leading whitespace): a client that hung up fails that write, and its
    // sequence leaves within a fraction of a second instead of running to max_tokens.
    bool whole(httplib::DataSink& sink) {
      constexpr auto kKeepAlive = std::chrono::milliseconds(200);
      std::string text;
      auto last_write = Clock::now();
      for (bool done = false; !done;) {
        bool ready;
        {
          std::unique_lock<std::mutex> lock(p->mu);
          ready = p->cv.wait_for(lock, kKeepAlive, [&] { return !p->tokens.empty() || p->done; });
        }
        if (Clock::now() - last_write >= kKeepAlive) {
          if (!sink.write(" ", 1)) return gone();
          last_write = Clock::now();
        }
        if (!ready) continue;
        auto [t, d] = next();
        text += t;
        done = d;
      }
      std::string body = wire(answer(text));
      finished = true;
      if (!sink.write(body.data(), body.size())) return false;
      sink.done();
      s->metrics.request_duration.observe(std::chrono::duration<double>(Clock::now() - p->arrived).count());
      return true;
    }

    json answer(const std::string& text) {
      json choice;
      if (chat) {
        choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finish}};
        choice["logprobs"] = plan.logprobs >= 0 ? json{{"content", logprobs}} : json(nullptr);
      } else {
        choice = {{"index", 0}, {"text", text}, {"finish_reason", finish}};
        choice["logprobs"] = plan.logprobs >= 0 ? completion_logprobs() : json(nullptr);
      }
      if (plan.return_tokens) choice["token_ids"] = token_ids;
      return {{"id", rid}, {"object", chat ? "chat.completion" : "text_completion"}, {"created", s->created}, {"model", s->o.model_name},
              {"choices", json::array({choice})}, {"usage", usage()}};
    }

    json completion_logprobs() const {
      json tokens = json::array(), lps = json::array(), tops = json::array();
      for (const auto& e : logprobs) {
        tokens.push_back(e["token"]);
        lps.push_back(e["logprob"]);
        tops.push_back(e["top"]);
      }
      return {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", tops}};
    }

    json chunk(const std::string& text, const std::optional<std::string>& reason, bool first) {
      json choice;
      if (chat) {
        json delta = json::object();
        if (first) delta["role"] = "assistant";
        if (!text.empty()) delta["content"] = text;
        choice = {{"index", 0}, {"delta", delta}, {"finish_reason", reason ? json(*reason) : json(nullptr)}};
        if (plan.logprobs >= 0) choice["logprobs"] = json{{"content", logprobs}};
      } else {
        choice = {{"index", 0}, {"text", text}, {"finish_reason", reason ? json(*reason) : json(nullptr)}};
        choice["logprobs"] = plan.logprobs >= 0 ? completion_logprobs() : json(nullptr);
      }
      if (plan.return_tokens) choice["token_ids"] = token_ids;
      token_ids.clear();
      json c = {{"id", rid}, {"object", chat ? "chat.completion.chunk" : "text_completion"}, {"created", s->created}, {"model", s->o.model_name},
                {"choices", json::array({choice})}};
      logprobs = json::array();
      return c;
    }

    bool sent_first = false, finished = false;
    bool stream(httplib::DataSink& sink) {
      auto send = [&](const std::string& data) { return sink.write(data.data(), data.size()); };
      while (true) {
        auto [text, done] = next();
        if (!text.empty() || (chat && !sent_first) || (plan.return_tokens && !token_ids.empty() && !done)) {
          if (!send(cat("data: ", wire(chunk(text, std::nullopt, !sent_first)), "\n\n"))) return gone();
          sent_first = true;
        }
        if (done) {
          std::string tail = cat("data: ", wire(chunk("", finish, !sent_first)), "\n\n");
          if (plan.include_usage)  // OpenAI's usage chunk: no choices
            tail += cat("data: ", wire(json{{"id", rid}, {"object", chat ? "chat.completion.chunk" : "text_completion"}, {"created", s->created},
                                       {"model", s->o.model_name}, {"choices", json::array()}, {"usage", usage()}}), "\n\n");
          if (!send(tail + "data: [DONE]\n\n")) return gone();
          sink.done();
          finished = true;
          s->metrics.request_duration.observe(std::chrono::duration<double>(Clock::now() - p->arrived).count());
          return true;
        }
      }
    }

    // The client went away: its sequence leaves before the next pass.
    bool gone() {
      {
        std::lock_guard<std::mutex> l(p->mu);
        p->abandon = true;
      }
      s->engine->cancel(engine_id);
      return false;
    }
  };

  void completion(const httplib::Request& req, httplib::Response& res, bool chat) {
    if (!model || !engine) bad("this server serves embeddings only", "model", 404, "model_not_found");
    Body b = parse_body(req.body);
    check_model(b, o.model_name, "completion");
    CompletionPlan plan_ = parse_completion(b, chat, *model, engine->capacity());
    int64_t prompt_tokens = static_cast<int64_t>(plan_.gen.prompt.size());
    auto pending = std::make_shared<Pending>();
    Metrics* mt = &metrics;
    plan_.gen.on_token = [pending, mt](const TokenEvent& ev) {
      std::lock_guard<std::mutex> lock(pending->mu);
      auto now = Clock::now();
      if (pending->generated == 0) mt->time_to_first_token.observe(std::chrono::duration<double>(now - pending->arrived).count());
      else mt->inter_token_latency.observe(std::chrono::duration<double>(now - pending->last).count());
      pending->last = now;
      ++pending->generated;
      pending->tokens.push_back(ev);
      pending->cv.notify_all();
      return !pending->abandon;
    };
    // A stream's reader may fall this many tokens behind before its sequence waits for it.
    constexpr size_t kReadAhead = 32;
    plan_.gen.ready = [pending] {
      std::lock_guard<std::mutex> lock(pending->mu);
      return pending->tokens.size() < kReadAhead || pending->abandon;
    };
    plan_.gen.on_done = [pending](const std::string& reason) {
      std::lock_guard<std::mutex> lock(pending->mu);
      pending->done = true;
      pending->finish = reason;
      pending->cv.notify_all();
    };
    int64_t id = engine->submit(plan_.gen);
    std::string rid = cat(chat ? "chatcmpl-" : "cmpl-", next_id++);
    auto state = std::make_shared<Stream>(this, pending, id, plan_, chat, rid, prompt_tokens);
    if (!plan_.stream) {
      res.set_chunked_content_provider(
          "application/json", [state](size_t, httplib::DataSink& sink) { return state->whole(sink); },
          [state](bool) {
            if (!state->finished) state->gone();
          });
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [state](size_t, httplib::DataSink& sink) { return state->stream(sink); },
        [state](bool) {  // the response is gone: if the stream did not end, its client did
          if (!state->finished) state->gone();
        });
  }

  void embeddings(const httplib::Request& req, httplib::Response& res) {
    Body b = parse_body(req.body);
    check_model(b, embedder ? o.embedding_model_name : "", "embedding");
    const models::BertSpec& spec = embedder->model().spec;
    EmbeddingRequest in = parse_embeddings(b, spec.vocab_size, spec.max_tokens());
    const std::vector<std::string>& texts = in.texts;
    const std::vector<std::vector<int32_t>>& ids = in.ids;
    int64_t tokens = 0;
    for (const auto& t : texts) tokens += static_cast<int64_t>(embedder->tokenizer().encode(t).ids.size());
    for (const auto& r : ids) tokens += static_cast<int64_t>(r.size());
    Tensor v = texts.empty() ? embedder->embed_ids(ids) : embedder->embed(texts);
    json data = json::array();
    const float* pv = v.data_as<float>();
    int64_t dim = v.shape()[1];
    for (int64_t i = 0; i < v.shape()[0]; ++i) {
      json e = {{"object", "embedding"}, {"index", i}};
      if (!in.base64) e["embedding"] = std::vector<float>(pv + i * dim, pv + (i + 1) * dim);
      else e["embedding"] = base64_encode(std::string(reinterpret_cast<const char*>(pv + i * dim), static_cast<size_t>(dim) * 4));
      data.push_back(e);
    }
    json out = {{"object", "list"}, {"data", data}, {"model", o.embedding_model_name}, {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
    res.set_content(wire(out), "application/json");
  }

  void routes() {
    svr.set_payload_max_length(o.max_body_bytes);
    int threads = o.threads;
    svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    svr.Get("/health", route("/health", true, [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"status":"ok"})", "application/json"); }));
    svr.Get("/metrics", route("/metrics", true, [this](const httplib::Request&, httplib::Response& res) {
              std::vector<std::pair<std::string, double>> gauges;
              int64_t prompt = 0, generated = 0;
              if (engine) {
                EngineStats st = engine->stats();
                gauges = {{"rlx_queue_depth", static_cast<double>(st.queued)}, {"rlx_live_sequences", static_cast<double>(st.live)},
                          {"rlx_slots", static_cast<double>(st.slots)}, {"rlx_kv_cache_usage_ratio", st.kv_cache_use},
                          {"rlx_decode_passes", static_cast<double>(st.passes)}};
                prompt = st.prompt_tokens;
                generated = st.generated_tokens;
              }
              res.set_content(metrics.text(gauges, prompt, generated), "text/plain; version=0.0.4");
            }));
    svr.Get("/v1/models", route("/v1/models", false, [this](const httplib::Request&, httplib::Response& res) {
              json data = json::array();
              if (model) data.push_back({{"id", o.model_name}, {"object", "model"}, {"created", created}, {"owned_by", "rlx"}});
              if (embedder) data.push_back({{"id", o.embedding_model_name}, {"object", "model"}, {"created", created}, {"owned_by", "rlx"}});
              res.set_content(wire(json{{"object", "list"}, {"data", data}}), "application/json");
            }));
    svr.Post("/v1/completions", route("/v1/completions", false, [this](const httplib::Request& q, httplib::Response& r) { completion(q, r, false); }));
    svr.Post("/v1/chat/completions",
             route("/v1/chat/completions", false, [this](const httplib::Request& q, httplib::Response& r) { completion(q, r, true); }));
    svr.Post("/v1/embeddings", route("/v1/embeddings", false, [this](const httplib::Request& q, httplib::Response& r) { embeddings(q, r); }));
    svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string msg = res.status == 404 ? cat("no route ", req.method, " ", req.path) : res.status == 413 ? std::string("the body is too large") : cat("HTTP ", res.status);
      res.set_content(error_body({res.status, msg, "", ""}), "application/json");
    });
  }
};

Server::Server(ServerOptions options, const models::LlamaModel* model, Engine* engine, const models::SentenceEmbedder* embedder)
    : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(options);
  impl_->model = model;
  impl_->engine = engine;
  impl_->embedder = embedder;
  impl_->routes();
}

Server::~Server() { stop(); }

void Server::run() {
  port_ = impl_->o.port == 0 ? impl_->svr.bind_to_any_port(impl_->o.host) : (impl_->svr.bind_to_port(impl_->o.host, impl_->o.port) ? impl_->o.port : -1);
  if (port_ < 0) throw Error(ErrorKind::io, cat("cannot listen on ", impl_->o.host, ":", impl_->o.port, " (in use, or not an address of this machine)"));
  impl_->svr.listen_after_bind();
}

int Server::start() {
  port_ = impl_->o.port == 0 ? impl_->svr.bind_to_any_port(impl_->o.host) : (impl_->svr.bind_to_port(impl_->o.host, impl_->o.port) ? impl_->o.port : -1);
  if (port_ < 0) throw Error(ErrorKind::io, cat("cannot listen on ", impl_->o.host, ":", impl_->o.port));
  impl_->thread = std::thread([this] { impl_->svr.listen_after_bind(); });
  return port_;
}

void Server::stop() {
  if (!impl_) return;
  impl_->svr.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace rlx::serve
