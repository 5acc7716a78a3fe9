// rlx generate: text generation with a Qwen3 / llama-family model (Hugging Face directory or
// GGUF file), streamed as it is produced; --json prints ids, text and timings at the end.
#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <cstdio>

#include "commands.h"
#include "json.h"
#include "models/generate.h"
#include "models/llama_parallel.h"
#include "models/qwen3_model.h"
#include "rlx/error.h"
#include "text/decode_stream.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  for (const auto& part : split(text, ',')) {
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v < 0 || v > INT32_MAX)
      throw Error(ErrorKind::invalid_argument, cat("--prompt-ids expects token ids like 1,2,3; got '", part, "'"));
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

std::string ids_json(const std::vector<int32_t>& ids) {
  std::vector<std::string> v;
  for (int32_t id : ids) v.push_back(std::to_string(id));
  return json_array(v);
}

}  // namespace

int cmd_generate(Args& args) {
  auto model_path = args.value("model");
  auto prompt = args.value("prompt");
  auto prompt_ids = args.value("prompt-ids");
  int64_t max_tokens = args.int_or("max-tokens", 128);
  auto temperature = args.value("temperature");
  auto top_k = args.value("top-k");
  auto top_p = args.value("top-p");
  auto min_p = args.value("min-p");
  auto penalty = args.value("repeat-penalty");
  int64_t seed = args.int_or("seed", 0);
  bool chat = args.flag("chat");
  bool no_think = args.flag("no-think");
  bool ignore_eos = args.flag("ignore-eos");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string precision = args.value_or("precision", "f32");
  auto threads = args.value("threads");
  std::string activations = args.value_or("activations", "auto");
  bool json = args.flag("json");
  auto chat_template = args.value("chat-template");
  int64_t tp = args.int_or("tp", 1);
  int64_t args_pp = args.int_or("pp", 1);
  // the dispatch report of the decode step — under rlx launch, every rank's, with its share of the model
  bool report = args.flag("report");
  args.finish();
  if (!model_path) throw Error(ErrorKind::invalid_argument, "--model DIR|FILE.gguf is required (a Qwen3 / llama-family model)");
  if (chat_template && !chat) throw Error(ErrorKind::invalid_argument, "--chat-template applies to --chat prompts");
  if (!prompt == !prompt_ids) throw Error(ErrorKind::invalid_argument, "give exactly one of --prompt TEXT or --prompt-ids 1,2,3");
  if (prompt_ids && chat) throw Error(ErrorKind::invalid_argument, "--chat formats a text prompt; it cannot be combined with --prompt-ids");
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  // Tensor and pipeline parallel: this process is one rank of `rlx launch -n TP·PP -- rlx generate
  // … --tp TP --pp PP`.
  models::LlamaParallel par(tp, args_pp);
  const int64_t pp = args_pp;
  dist::Communicator* comm = par.comm();
  const bool quiet = !par.lead();

  auto t0 = std::chrono::steady_clock::now();
  PrecisionPolicy policy(precision);  // one policy: the matrices' precision and the activations'
  policy.quantized_activations = activations;
  models::LlamaLoadOptions lo;
  lo.precision = policy;
  models::LlamaModel m = models::load_llama_model(*model_path, lo);
  if (chat_template) m.chat_template = models::read_chat_template(*chat_template);
  std::vector<int32_t> ids;
  if (prompt_ids) {
    ids = parse_ids(*prompt_ids);
  } else {
    if (!m.tokenizer) throw Error(ErrorKind::invalid_argument, cat(*model_path, " has no tokenizer; give --prompt-ids instead of --prompt"));
    ids = chat ? m.tokenizer->encode(models::chat_prompt(m, *prompt, !no_think), false).ids : m.tokenizer->encode(*prompt).ids;
  }
  // Sampling: the model's generation_config.json when it asks to sample, then the options given.
  models::GenerateOptions go;
  go.max_tokens = max_tokens;
  models::SamplingOptions& s = go.sampling;
  if (m.generation.do_sample) {
    s.temperature = m.generation.temperature.value_or(1.0);
    s.top_k = m.generation.top_k.value_or(0);
    s.top_p = m.generation.top_p.value_or(1.0);
    s.min_p = m.generation.min_p.value_or(0.0);
  }
  s.repetition_penalty = m.generation.repetition_penalty.value_or(1.0);
  auto number = [](const std::string& opt, const std::string& v) {
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) throw Error(ErrorKind::invalid_argument, cat("--", opt, " expects a number, got '", v, "'"));
    return x;
  };
  if (temperature) s.temperature = number("temperature", *temperature);
  if (top_k) s.top_k = static_cast<int64_t>(number("top-k", *top_k));
  if (top_p) s.top_p = number("top-p", *top_p);
  if (min_p) s.min_p = number("min-p", *min_p);
  if (penalty) s.repetition_penalty = number("repeat-penalty", *penalty);
  s.seed = static_cast<uint64_t>(seed);
  if (!ignore_eos) go.eos_token_ids = m.eos_token_ids;

  models::LlamaRunnerOptions ro;
  ro.device = device;
  ro.precision = policy;
  if (comm)  // every rank must hold the same model and decode the same prompt the same way
    dist::require_same_config(*comm, "model or generation settings",
                              cat(m.spec.arch, " ", m.spec.num_layers, " layers, hidden ", m.spec.hidden_size, ", vocab ", m.spec.vocab_size, ", ",
                                  m.weight_bytes(), " weight bytes, tp ", tp, " pp ", pp, ", device ", device, ", precision ", precision, ", prompt ",
                                  ids.size(), " ids ", ids_json(ids), ", max tokens ", max_tokens, ", T ", s.temperature, " top-k ", s.top_k, " top-p ", s.top_p,
                                  " min-p ", s.min_p, " penalty ", s.repetition_penalty, " seed ", seed, ", eos ", go.eos_token_ids.size()));
  par.prepare(m.spec, m.weights, ro);
  models::LlamaRunner runner(par.spec(), par.weights(), ro);
  std::string report_json = "null";
  if (report) {
    const std::string where = par.placement();
    const std::string mine = json ? cat("{\"rank\":", comm ? comm->rank() : 0, ",\"placement\":", json_quote(where), ",\"decode\":", runner.decode_model().dispatch_report_json(), "}")
                                  : cat(where, "\n", runner.decode_model().dispatch_report());
    const std::vector<std::string> all = comm ? dist::all_gather_text(*comm, mine) : std::vector<std::string>{mine};
    if (json) report_json = json_array(all);
    else if (!quiet)
      for (const auto& t : all) std::fprintf(stderr, "%s\n", t.c_str());
  }
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // Stream only complete UTF-8; the token that ends the run (EOS) is not printed.
  std::optional<text::DecodeStream> stream;
  if (m.tokenizer && !json && !quiet) stream.emplace(m.tokenizer->decode_stream());
  size_t vocab_known = m.tokenizer ? m.tokenizer->vocab_size() : 0;
  auto on_token = [&](int32_t id) {
    if (!stream || static_cast<size_t>(id) >= vocab_known) return true;
    if (std::find(go.eos_token_ids.begin(), go.eos_token_ids.end(), id) != go.eos_token_ids.end()) return true;
    std::string piece = stream->step(id);
    if (!piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  models::GenerateResult r = models::generate(runner, ids, go, on_token);
  if (stream) {
    std::string tail = stream->finish();
    std::fwrite(tail.data(), 1, tail.size(), stdout);
    std::printf("\n");
  }
  std::vector<int32_t> text_ids;
  for (size_t i = 0; i < r.ids.size(); ++i)
    if (static_cast<size_t>(r.ids[i]) < vocab_known && !(r.stop_reason == "eos" && i + 1 == r.ids.size())) text_ids.push_back(r.ids[i]);
  if (quiet) return 0;
  if (json) {
    std::string text = m.tokenizer ? m.tokenizer->decode(text_ids) : "";
    std::printf("{\"model\":%s,\"device\":%s,\"prompt_ids\":%s,\"ids\":%s,\"text\":%s,\"prompt_tokens\":%zu,\"generated_tokens\":%zu,"
                "\"stop_reason\":%s,\"load_ms\":%s,\"prefill_ms\":%s,\"decode_tokens_per_second\":%s,\"tensor_parallel\":%lld,\"pipeline_parallel\":%lld,\"report\":%s,\"sampling\":{\"temperature\":%s,"
                "\"top_k\":%lld,\"top_p\":%s,\"min_p\":%s,\"repeat_penalty\":%s,\"seed\":%lld}}\n",
                json_quote(*model_path).c_str(), json_quote(device).c_str(), ids_json(ids).c_str(), ids_json(r.ids).c_str(),
                json_quote(text).c_str(), ids.size(), r.ids.size(), json_quote(r.stop_reason).c_str(), format_double(load_ms).c_str(),
                format_double(r.prefill_ms).c_str(), format_double(r.decode_tokens_per_second()).c_str(), static_cast<long long>(tp), static_cast<long long>(pp), report_json.c_str(),
                format_double(s.temperature).c_str(), static_cast<long long>(s.top_k), format_double(s.top_p).c_str(),
                format_double(s.min_p).c_str(), format_double(s.repetition_penalty).c_str(), static_cast<long long>(seed));
    return 0;
  }
  std::fprintf(stderr, "[rlx generate: %zu prompt tokens, prefill %.1f ms; %zu tokens (%s), %.1f tokens/s; loaded in %.0f ms on %s]\n",
               ids.size(), r.prefill_ms, r.ids.size(), r.stop_reason.c_str(), r.decode_tokens_per_second(), load_ms, device.c_str());
  return 0;
}

}  // namespace rlx::cli
