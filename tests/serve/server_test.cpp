// `rlx serve` over HTTP (serve/server.h) with a real client (cpp-httplib's): completions and
// chat equal to the same request run alone, server-sent events, embeddings equal to the
// embedder's, concurrent streams that neither lose nor mix tokens, a client that goes away
// freeing its slot, and the malformed-request catalogue with its status codes.
#include <gtest/gtest.h>
#include <sstream>
#include <fstream>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "models/generate.h"
#include "models/qwen3_model.h"
#include "models/sentence_embedder.h"
#include "serve/engine.h"
#include "serve/server.h"

namespace rlx::serve {
namespace {

using json = nlohmann::json;
const char* kKey = "sk-rlx-test";

// One server for the whole suite: a tiny Qwen3 (3 sequences × 128 positions) and a BERT embedder.
class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model = new models::LlamaModel(models::load_llama_model(std::string(RLX_FIXTURE_DIR) + "/qwen3/qwen3_tiny"));
    models::SlotRunnerOptions ro;
    ro.slots = 3;
    ro.capacity = 128;
    engine = new Engine(*model, ro);
    embedder = new models::SentenceEmbedder(models::SentenceEmbedder::open(std::string(RLX_FIXTURE_DIR) + "/bert/st_mean"));
    ServerOptions so;
    so.port = 0;
    so.api_key = kKey;
    so.model_name = "tiny";
    so.embedding_model_name = "st";
    so.max_body_bytes = 64 << 10;
    server = new Server(so, model, engine, embedder);
    port = server->start();
  }
  static void TearDownTestSuite() {
    delete server;
    delete engine;
    delete embedder;
    delete model;
  }

  static httplib::Client client(bool auth = true) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    if (auth) c.set_default_headers({{"Authorization", std::string("Bearer ") + kKey}});
    return c;
  }
  static std::pair<int, json> post(const std::string& path, const std::string& body, bool auth = true) {
    auto res = client(auth).Post(path, body, "application/json");
    if (!res) return {0, json()};
    json j = json::parse(res->body, nullptr, false);
    return {res->status, j};
  }
  // The greedy ids of `prompt` run alone (one sequence, the single-sequence runner), EOS included.
  static std::vector<int32_t> alone_ids(const std::vector<int32_t>& prompt, int64_t max_tokens) {
    models::LlamaRunner r(model->spec, model->weights);
    models::GenerateOptions o;
    o.max_tokens = max_tokens;
    o.eos_token_ids = model->eos_token_ids;
    return models::generate(r, prompt, o).ids;
  }
  // Their text.
  static std::string alone(const std::vector<int32_t>& prompt, int64_t max_tokens) {
    std::vector<int32_t> ids = alone_ids(prompt, max_tokens);
    if (!ids.empty() && std::find(model->eos_token_ids.begin(), model->eos_token_ids.end(), ids.back()) != model->eos_token_ids.end()) ids.pop_back();
    return model->tokenizer->decode(ids, true);
  }
  // A streamed request: the text of every event's delta, the finish reason, the event count.
  struct Streamed {
    std::string text, finish;
    int events = 0;
    bool done = false;
    std::vector<int32_t> ids;  // with return_tokens
    json usage;                // with stream_options.include_usage
  };
  static Streamed stream(const std::string& path, json body, int stop_after_events = -1) {
    body["stream"] = true;
    Streamed s;
    std::string buf;
    auto c = client();
    httplib::Request req;
    req.method = "POST";
    req.path = path;
    req.body = body.dump();
    req.headers = {{"Authorization", std::string("Bearer ") + kKey}, {"Content-Type", "application/json"}};
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      buf.append(data, n);
      for (size_t end; (end = buf.find("\n\n")) != std::string::npos;) {
        std::string ev = buf.substr(0, end);
        buf.erase(0, end + 2);
        EXPECT_EQ(ev.rfind("data: ", 0), 0u) << ev;
        std::string data = ev.substr(6);
        if (data == "[DONE]") {
          s.done = true;
          continue;
        }
        json j = json::parse(data);
        if (j["choices"].empty()) {  // the usage chunk
          s.usage = j["usage"];
          continue;
        }
        const json& ch = j["choices"][0];
        if (ch.contains("token_ids"))
          for (const auto& id : ch["token_ids"]) s.ids.push_back(id.get<int32_t>());
        if (ch.contains("delta") && ch["delta"].contains("content")) s.text += ch["delta"]["content"].get<std::string>();
        if (ch.contains("text")) s.text += ch["text"].get<std::string>();
        if (!ch["finish_reason"].is_null()) s.finish = ch["finish_reason"];
        ++s.events;
        if (stop_after_events > 0 && s.events >= stop_after_events) return false;  // hang up
      }
      return true;
    };
    httplib::Response res;
    httplib::Error err;
    c.send(req, res, err);
    return s;
  }

  static models::LlamaModel* model;
  static Engine* engine;
  static models::SentenceEmbedder* embedder;
  static Server* server;
  static int port;
};
models::LlamaModel* Serve::model = nullptr;
Engine* Serve::engine = nullptr;
models::SentenceEmbedder* Serve::embedder = nullptr;
Server* Serve::server = nullptr;
int Serve::port = 0;

TEST_F(Serve, CompletionIsTheGreedyTextRunAlone) {
  auto [status, j] = post("/v1/completions", R"({"model":"tiny","prompt":"The quick brown fox","max_tokens":12,"temperature":0})");
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], alone(model->tokenizer->encode("The quick brown fox").ids, 12));
  EXPECT_EQ(j["usage"]["completion_tokens"].get<int>() + j["usage"]["prompt_tokens"].get<int>(), j["usage"]["total_tokens"].get<int>());
  // token ids as the prompt
  auto [s2, j2] = post("/v1/completions", R"({"model":"tiny","prompt":[5,17,300],"max_tokens":6,"temperature":0})");
  ASSERT_EQ(s2, 200) << j2.dump();
  EXPECT_EQ(j2["choices"][0]["text"], alone({5, 17, 300}, 6));
}

TEST_F(Serve, ReturnTokensGivesTheIdsAndUsageComesLastWhenAsked) {
  std::vector<int32_t> prompt = model->tokenizer->encode("token ids, please").ids;
  std::vector<int32_t> want = alone_ids(prompt, 16);
  json body = {{"model", "tiny"}, {"prompt", prompt}, {"max_tokens", 16}, {"temperature", 0}, {"return_tokens", true}};
  auto [status, j] = post("/v1/completions", body.dump());
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<int32_t>>(), want);
  body["stream_options"] = {{"include_usage", true}};
  Streamed s = stream("/v1/completions", body);
  EXPECT_EQ(s.ids, want);
  ASSERT_TRUE(s.usage.is_object());
  EXPECT_EQ(s.usage["completion_tokens"].get<size_t>(), want.size());
  EXPECT_EQ(s.usage["prompt_tokens"].get<size_t>(), prompt.size());
}

TEST_F(Serve, ChatUsesTheModelsFormatAndStreamsTheSameText) {
  json body = {{"model", "tiny"}, {"messages", {{{"role", "system"}, {"content", "be brief"}}, {{"role", "user"}, {"content", "hello"}}}},
               {"max_tokens", 10}, {"temperature", 0}};
  auto [status, j] = post("/v1/chat/completions", body.dump());
  ASSERT_EQ(status, 200) << j.dump();
  std::string prompt = models::chat_prompt(*model, {{"system", "be brief"}, {"user", "hello"}}, true);
  std::string want = alone(model->tokenizer->encode(prompt, false).ids, 10);
  EXPECT_EQ(j["choices"][0]["message"]["content"], want);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  Streamed s = stream("/v1/chat/completions", body);
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.text, want);
  EXPECT_EQ(s.finish, j["choices"][0]["finish_reason"]);
}

// The model's own chat template (here one of the jinja2-checked fixtures; one short enough for
// the tiny model's 128 positions): the request's messages and chat_template_kwargs reach it as
// transformers passes them, and its
// raise_exception becomes a 400 with the template's message.
TEST_F(Serve, ChatRendersTheModelsOwnTemplate) {
  auto read = [](const std::string& name) {
    std::ifstream f(std::string(RLX_FIXTURE_DIR) + "/chat_templates/" + name, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  nlohmann::ordered_json cases = nlohmann::ordered_json::parse(read("cases.json"));
  const nlohmann::ordered_json* tools_case = nullptr;
  for (const auto& c : cases)
    if (c["name"] == "chatml_thinking_off") tools_case = &c;
  ASSERT_NE(tools_case, nullptr);
  std::string saved = model->chat_template;
  model->chat_template = read("templates/chatml_thinking.jinja");
  nlohmann::ordered_json body = {{"model", "tiny"}, {"max_tokens", 6}, {"temperature", 0}};
  body["messages"] = (*tools_case)["context"]["messages"];
  if ((*tools_case)["context"].contains("tools")) body["tools"] = (*tools_case)["context"]["tools"];
  body["chat_template_kwargs"] = {{"enable_thinking", (*tools_case)["context"]["enable_thinking"]}};
  auto [status, j] = post("/v1/chat/completions", body.dump());
  // jinja2's rendering of the same conversation, tokenized, is what the model was fed
  std::vector<int32_t> want_prompt = model->tokenizer->encode((*tools_case)["expected"].get<std::string>(), false).ids;
  model->chat_template = read("templates/gemma.jinja");
  json refused = {{"model", "tiny"}, {"messages", {{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}}}}};
  auto [status2, j2] = post("/v1/chat/completions", refused.dump());
  model->chat_template = saved;
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["usage"]["prompt_tokens"], static_cast<int64_t>(want_prompt.size()));
  EXPECT_EQ(j["choices"][0]["message"]["content"], alone(want_prompt, 6));
  EXPECT_EQ(status2, 400) << j2.dump();
  EXPECT_NE(j2["error"]["message"].get<std::string>().find("Conversation roles must alternate"), std::string::npos) << j2.dump();
}

TEST_F(Serve, StopStringsCutTheTextAndFinishWithStop) {
  std::string full = alone(model->tokenizer->encode("abc").ids, 20);
  ASSERT_GE(full.size(), 6u);
  std::string stop = full.substr(3, 2);  // a stop string the greedy text contains
  json body = {{"model", "tiny"}, {"prompt", "abc"}, {"max_tokens", 20}, {"temperature", 0}, {"stop", {stop}}};
  auto [status, j] = post("/v1/completions", body.dump());
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["choices"][0]["text"], full.substr(0, full.find(stop)));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  Streamed s = stream("/v1/completions", body);
  EXPECT_EQ(s.text, full.substr(0, full.find(stop)));
  EXPECT_EQ(s.finish, "stop");
}

TEST_F(Serve, LogprobsAreTheModelsAndSeededSamplingRepeats) {
  auto [status, j] = post("/v1/chat/completions",
                          R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"max_tokens":4,"logprobs":true,"top_logprobs":3,"temperature":0})");
  ASSERT_EQ(status, 200) << j.dump();
  const json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 4u);
  for (const auto& t : content) {
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(t["logprob"].get<double>(), t["top_logprobs"][0]["logprob"].get<double>());  // greedy: the best
    EXPECT_GE(t["top_logprobs"][0]["logprob"].get<double>(), t["top_logprobs"][1]["logprob"].get<double>());
  }
  std::string sampled = R"({"model":"tiny","prompt":"hi","max_tokens":12,"temperature":1.0,"top_p":0.9,"seed":42})";
  auto [a, ja] = post("/v1/completions", sampled);
  auto [b, jb] = post("/v1/completions", sampled);
  ASSERT_EQ(a, 200);
  ASSERT_EQ(b, 200);
  EXPECT_EQ(ja["choices"][0]["text"], jb["choices"][0]["text"]);
}

TEST_F(Serve, EmbeddingsAreTheEmbeddersVectors) {
  auto [status, j] = post("/v1/embeddings", R"({"model":"st","input":["a sentence","another one here"]})");
  ASSERT_EQ(status, 200) << j.dump();
  Tensor want = embedder->embed({"a sentence", "another one here"});
  ASSERT_EQ(j["data"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& e = j["data"][i]["embedding"];
    ASSERT_EQ(static_cast<int64_t>(e.size()), embedder->dim());
    for (int64_t d = 0; d < embedder->dim(); ++d) EXPECT_FLOAT_EQ(e[d].get<float>(), want.data_as<float>()[i * embedder->dim() + d]);
  }
  auto [s64, j64] = post("/v1/embeddings", R"({"model":"st","input":"a sentence","encoding_format":"base64"})");
  ASSERT_EQ(s64, 200);
  EXPECT_EQ(j64["data"][0]["embedding"].get<std::string>().size(), static_cast<size_t>((embedder->dim() * 4 + 2) / 3 * 4));
}

// The bounded load test: more concurrent streams than slots, each with its own prompt; every
// stream's text is exactly its greedy text alone — nothing lost, nothing from another stream.
TEST_F(Serve, ConcurrentStreamsNeitherLoseNorMixTokens) {
  const int n = 8;
  std::vector<std::string> prompts, want(n);
  for (int i = 0; i < n; ++i) prompts.push_back("stream number " + std::to_string(i) + std::string(static_cast<size_t>(i), '!'));
  for (int i = 0; i < n; ++i) {
    want[i] = alone(model->tokenizer->encode(prompts[i]).ids, 10 + i);
    ASSERT_FALSE(want[i].empty());
  }
  std::vector<Streamed> got(n);
  std::vector<std::thread> clients;
  for (int i = 0; i < n; ++i)
    clients.emplace_back([&, i] {
      got[i] = stream("/v1/completions", {{"model", "tiny"}, {"prompt", prompts[i]}, {"max_tokens", 10 + i}, {"temperature", 0}});
    });
  for (auto& t : clients) t.join();
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(got[i].done) << "stream " << i;
    EXPECT_EQ(got[i].text, want[i]) << "stream " << i;
  }
}

TEST_F(Serve, AClientThatHangsUpFreesItsSlot) {
  // alone, this request runs its full 120 tokens (no EOS on the way)
  {
    models::LlamaRunner r(model->spec, model->weights);
    models::GenerateOptions o;
    o.max_tokens = 120;
    o.eos_token_ids = model->eos_token_ids;
    ASSERT_EQ(models::generate(r, model->tokenizer->encode("go on").ids, o).stop_reason, "length");
  }
  int64_t before = engine->stats().generated_tokens;
  Streamed s = stream("/v1/completions", {{"model", "tiny"}, {"prompt", "go on"}, {"max_tokens", 120}, {"temperature", 0}, {"stop", {"\x01\x02"}}}, 2);
  EXPECT_FALSE(s.done);
  EXPECT_EQ(s.events, 2);
  auto t0 = std::chrono::steady_clock::now();
  while (engine->stats().live > 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(engine->stats().live, 0);
  EXPECT_LT(engine->stats().generated_tokens - before, 100) << "the sequence ran on after its client left";
}

// A reader that falls behind holds its sequence (GenerationRequest::ready): nothing is generated
// for it meanwhile, and once it reads on, the sequence goes on to the same tokens as alone.
TEST_F(Serve, AReaderThatFallsBehindHoldsItsSequence) {
  std::vector<int32_t> prompt = model->tokenizer->encode("go on").ids;
  std::vector<int32_t> want = alone_ids(prompt, 40);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> got;
  bool reading = false, done = false;
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = 40;
  r.eos_token_ids = model->eos_token_ids;
  r.on_token = [&](const TokenEvent& ev) {
    std::lock_guard<std::mutex> l(mu);
    got.push_back(ev.id);
    return true;
  };
  r.ready = [&] {
    std::lock_guard<std::mutex> l(mu);
    return reading || got.size() < 5;
  };
  r.on_done = [&](const std::string&) {
    std::lock_guard<std::mutex> l(mu);
    done = true;
    cv.notify_all();
  };
  engine->submit(r);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(got.size(), 5u) << "the sequence ran on while its reader was behind";
    EXPECT_EQ(engine->stats().live, 1);
    reading = true;
  }
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return done; }));
  EXPECT_EQ(got, want);
}

TEST_F(Serve, MalformedRequestsGetTheirStatusAndAJsonError) {
  struct Case {
    const char* path;
    std::string body;
    int status;
    bool auth = true;
  };
  std::string too_long = R"({"model":"st","input":[101)";
  for (int i = 0; i < 1000; ++i) too_long += ",7";
  too_long += "]}";
  const std::vector<Case> cases = {
      {"/v1/completions", "{not json", 400},
      {"/v1/completions", "[1,2]", 400},
      {"/v1/completions", R"({"model":"tiny"})", 400},                                  // no prompt
      {"/v1/completions", R"({"model":"tiny","prompt":5})", 400},                       // wrong type
      {"/v1/completions", R"({"model":"tiny","prompt":"x","max_tokens":"ten"})", 400},  // wrong type
      {"/v1/completions", R"({"model":"tiny","prompt":"x","max_tokens":1000000000})", 400},  // huge
      {"/v1/completions", R"({"model":"tiny","prompt":"x","temperature":7})", 400},
      {"/v1/completions", R"({"model":"tiny","prompt":[1,-4]})", 400},
      {"/v1/completions", R"({"model":"tiny","prompt":""})", 400},  // no tokens
      {"/v1/completions", R"({"model":"tiny","prompt":"x","stop":[1]})", 400},
      {"/v1/completions", R"({"model":"tiny","prompt":"x","n":3})", 400},
      {"/v1/completions", R"({"model":"gpt-4","prompt":"x"})", 404},  // unknown model
      {"/v1/completions", R"({"prompt":"x"})", 400},                  // no model
      {"/v1/chat/completions", R"({"model":"tiny","messages":[]})", 400},
      {"/v1/chat/completions", R"({"model":"tiny","messages":[{"content":"no role"}]})", 400},
      {"/v1/chat/completions", R"({"model":"tiny","messages":"hi"})", 400},
      {"/v1/embeddings", R"({"model":"st","input":5})", 400},
      {"/v1/embeddings", R"({"model":"tiny","input":"x"})", 404},
      {"/v1/embeddings", R"({"model":"st","input":"x","encoding_format":"hex"})", 400},
      {"/v1/embeddings", R"({"model":"st","input":[101,4294967398,102]})", 400},  // an id past int32 (once read as 102)
      {"/v1/embeddings", R"({"model":"st","input":[[101],[-1]]})", 400},           // an id outside the vocabulary
      {"/v1/embeddings", R"({"model":"st","input":[[101],5]})", 400},              // a row that is not a list
      {"/v1/embeddings", too_long, 400},                                          // longer than the model reads
      {"/v1/completions", R"({"model":"tiny","prompt":"x","max_tokens":18446744073709551615})", 400},  // past int64: not a negative budget
      {"/v1/completions", R"({"model":"tiny","prompt":"x"})", 401, false},  // no key
      {"/v1/nowhere", "{}", 404},
      {"/v1/completions", std::string(100 << 10, ' '), 413},
  };
  for (const Case& c : cases) {
    auto [status, j] = post(c.path, c.body, c.auth);
    EXPECT_EQ(status, c.status) << c.path << " " << c.body.substr(0, 80) << " → " << j.dump();
    ASSERT_TRUE(j.is_object() && j.contains("error")) << c.path << " " << c.body.substr(0, 80) << " → " << j.dump();
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  }
  auto wrong = client(false);
  wrong.set_default_headers({{"Authorization", "Bearer nope"}});
  auto res = wrong.Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  // the server is still fine
  auto ok = client().Get("/v1/models");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["data"].size(), 2u);
}

TEST_F(Serve, HealthAndMetricsNeedNoKey) {
  auto c = client(false);
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  post("/v1/completions", R"({"model":"tiny","prompt":"count me","max_tokens":3,"temperature":0})");
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  for (const char* series : {"rlx_requests_total{endpoint=\"/v1/completions\",status=\"200\"}", "rlx_generated_tokens_total",
                             "rlx_time_to_first_token_seconds_bucket", "rlx_inter_token_latency_seconds_count", "rlx_queue_depth",
                             "rlx_kv_cache_usage_ratio"})
    EXPECT_NE(m->body.find(series), std::string::npos) << series;
}

}  // namespace
}  // namespace rlx::serve
