// rlx quantize: a llama-family model (Hugging Face directory) written as a GGUF file of a
// quantized type, measured against the full-precision model before it is kept — the KL
// divergence of the quantized next-token distributions, top-1 agreement and both perplexities
// over an evaluation text, teacher-forced (as llama.cpp's perplexity --kl-divergence) — and
// refused (nothing written, exit code 3) when a --gate limit is broken. --compare measures a GGUF
// file made elsewhere (llama.cpp's llama-quantize) the same way, so two quantizers meet on one
// runtime and one text.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "commands.h"
#include "json.h"
#include "models/generate.h"
#include "models/qwen3_model.h"
#include "models/qwen3_weights.h"
#include "plot.h"
#include "progress.h"
#include "quant/compare.h"
#include "quant/importance.h"
#include "rlx/error.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

namespace fs = std::filesystem;

// The evaluation text when none is given: plain prose of the kind general models are trained on.
const char* kDefaultEvalText =
    "The river rises in the hills north of the town and runs south for about forty miles before it reaches the sea. "
    "In the spring, when the snow melts, it floods the low fields along its banks, and the farmers who work them "
    "plant late for that reason. A stone bridge crosses it near the market square; it was built two hundred years ago "
    "and has been repaired many times since. Children fish from it in the summer, and in the autumn the leaves of the "
    "old trees on both banks turn yellow and red and drift down the water toward the coast. The town library keeps a "
    "record of every flood since the bridge was built, written by hand in a series of large books, and anyone may "
    "read them on a weekday afternoon.";

struct Target {
  formats::WeightType type;
  models::KQuantMix mix = models::KQuantMix::none;  // a llama.cpp recipe (Q4_K_M, Q3_K_S, …)
  std::string name;
};

Target parse_target(const std::string& to) {
  const std::string prefix = "gguf:";
  if (to.rfind(prefix, 0) != 0)
    throw Error(ErrorKind::invalid_argument, cat("--to ", to, ": RLX quantizes to GGUF types so far (gguf:Q8_0, Q6_K, Q5_K_M, Q5_K_S, Q5_K, Q5_1, Q5_0, Q4_K_M, Q4_K_S, Q4_K, Q4_1, Q4_0, IQ4_NL, IQ4_XS, Q3_K_L, Q3_K_M, Q3_K_S, Q3_K, Q2_K_S, Q2_K, F32, F16, BF16)"));
  std::string t = to.substr(prefix.size());
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (auto mix = models::k_quant_mix_from_name(t)) return {mix->second, mix->first, t};
  const std::map<std::string, formats::WeightType> types = {{"Q8_0", formats::WeightType::q8_0}, {"Q6_K", formats::WeightType::q6_k},
                                                            {"Q5_K", formats::WeightType::q5_k}, {"Q4_K", formats::WeightType::q4_k},
                                                            {"Q3_K", formats::WeightType::q3_k}, {"Q2_K", formats::WeightType::q2_k},
                                                            {"Q5_1", formats::WeightType::q5_1}, {"Q5_0", formats::WeightType::q5_0},
                                                            {"Q4_1", formats::WeightType::q4_1}, {"Q4_0", formats::WeightType::q4_0},
                                                            {"IQ4_NL", formats::WeightType::iq4_nl}, {"IQ4_XS", formats::WeightType::iq4_xs},
                                                            {"F16", formats::WeightType::f16},   {"BF16", formats::WeightType::bf16},
                                                            {"F32", formats::WeightType::f32}};
  auto it = types.find(t);
  if (it == types.end()) throw Error(ErrorKind::invalid_argument, cat("--to ", to, ": not a type RLX's quantizer writes (Q8_0, Q6_K, Q5_K_M, Q5_K_S, Q5_K, Q5_1, Q5_0, Q4_K_M, Q4_K_S, Q4_K, Q4_1, Q4_0, IQ4_NL, IQ4_XS, Q3_K_L, Q3_K_M, Q3_K_S, Q3_K, Q2_K_S, Q2_K, F32, F16, BF16)"));
  return {it->second, models::KQuantMix::none, t};
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("--eval ", path, ": cannot open it for reading"));
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Per-position KLD as a histogram on a log scale (counts per bin), one line per model.
void write_kld_plot(const std::string& path, const quant::Comparison& c, const std::string& label) {
  const int bins = 40;
  const double lo = -8, hi = 1;  // log10 nats
  Series s{"tokens", {}, {}, 0x2a6fdb};  // (the plot font has no digits in labels: the type goes in the title)
  std::vector<double> counts(bins, 0);
  for (double k : c.kld) {
    const double x = std::log10(std::max(k, 1e-8));
    counts[static_cast<size_t>(std::clamp(static_cast<int>((x - lo) / (hi - lo) * bins), 0, bins - 1))] += 1;
  }
  for (int b = 0; b < bins; ++b) {
    s.x.push_back(lo + (b + 0.5) * (hi - lo) / bins);
    s.y.push_back(counts[static_cast<size_t>(b)]);
  }
  Series p99{"p99", {std::log10(std::max(c.kld_p99, 1e-8)), std::log10(std::max(c.kld_p99, 1e-8))}, {0, *std::max_element(counts.begin(), counts.end())}, 0xd0413a};
  write_plot_png(path, {Panel{cat("KL divergence per token, ", label, " against f32"), "log10 KLD (nats)", {s, p99}}});
}

std::string quoted_array(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const std::string& s : items) q.push_back(json_quote(s));
  return json_array(q);
}

}  // namespace

int cmd_quantize(Args& args) {
  const std::string to = args.value_or("to", "");
  std::string out = args.value_or("output", "");
  if (auto o = args.value("o")) out = *o;
  if (to == "int8" || to == "int4") return cmd_quantize_classifier(args, to, out);
  const auto eval_file = args.value("eval");
  const auto compare = args.value("compare");
  const auto imatrix_text = args.value("imatrix-text");  // calibration text: importance-weighted quantization
  const int64_t imatrix_tokens = args.int_or("imatrix-tokens", 4096);  // a GGUF file made elsewhere (llama-quantize), measured only
  const int64_t max_tokens = args.int_or("tokens", 512);
  const std::string gate_text = args.value_or("gate", "");
  const auto plot = args.value("plot");
  const auto threads = args.value("threads");
  const bool json = args.flag("json");
  std::vector<std::string> files = args.positionals();
  args.finish();
  if (files.size() != 1) throw Error(ErrorKind::invalid_argument, "rlx quantize takes one MODEL (a Hugging Face llama-family directory)");
  if (compare && (!to.empty() || !out.empty())) throw Error(ErrorKind::invalid_argument, "rlx quantize: --compare FILE.gguf measures a file; it takes no --to or -o");
  if (!compare && to.empty()) throw Error(ErrorKind::invalid_argument, "rlx quantize needs --to (gguf:Q8_0, gguf:Q4_K_M, …) or --compare FILE.gguf");
  if (!compare && out.empty()) throw Error(ErrorKind::invalid_argument, "rlx quantize needs -o OUT.gguf");
  if (compare && imatrix_text) throw Error(ErrorKind::invalid_argument, "rlx quantize: --imatrix-text quantizes; --compare only measures");
  if (imatrix_tokens < 1) throw Error(ErrorKind::invalid_argument, cat("--imatrix-tokens must be at least 1, got ", imatrix_tokens));
  if (max_tokens < 2) throw Error(ErrorKind::invalid_argument, cat("--tokens must be at least 2, got ", max_tokens));
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  if (!compare) {
    const fs::path folder = fs::path(out).parent_path();
    if (!folder.empty() && !fs::is_directory(folder)) throw Error(ErrorKind::io, cat("-o ", out, ": the folder ", folder.string(), " does not exist"));
  }
  const Target target = compare ? Target{formats::WeightType::f32, models::KQuantMix::none, fs::path(*compare).filename().string()} : parse_target(to);
  const quant::Gate gate = quant::Gate::parse(gate_text);
  if (gate.accuracy >= 0)
    throw Error(ErrorKind::invalid_argument, "--gate accuracy judges classifiers (--to int8|int4); a language model is judged by kld, kld_p99, top1 and ppl");
  const auto t0 = std::chrono::steady_clock::now();

  models::LlamaModel ref = models::load_llama_model(files[0]);
  if (ref.format != "safetensors") throw Error(ErrorKind::invalid_argument, cat(files[0], " is already ", ref.format, ": quantize from the Hugging Face weights"));
  if (!ref.tokenizer) throw Error(ErrorKind::invalid_argument, cat(files[0], " has no tokenizer, which the evaluation needs"));
  // written beside the destination and kept only if the gate passes
  const std::string pending = out + ".pending.gguf";
  models::GgufExportOptions o;
  o.matrix_type = target.type;
  o.k_quant_mix = target.mix;
  const fs::path dir = fs::is_directory(files[0]) ? fs::path(files[0]) : fs::path(files[0]).parent_path();
  if (fs::exists(dir / "tokenizer.json")) o.tokenizer_json = (dir / "tokenizer.json").string();
  if (!ref.chat_template.empty()) o.chat_template = ref.chat_template;
  o.name = dir.filename().string();
  std::map<std::string, std::vector<float>> importance;
  size_t imatrix_used = 0;
  if (imatrix_text) {
    std::vector<int32_t> cal = ref.tokenizer->encode(read_text(*imatrix_text), true).ids;
    if (static_cast<int64_t>(cal.size()) > imatrix_tokens) cal.resize(static_cast<size_t>(imatrix_tokens));
    Progress bar("rlx quantize: importance", static_cast<int64_t>(cal.size()), !json);
    quant::ImportanceOptions io;
    io.progress = [&](int64_t done, int64_t) { bar.update(done, "tokens"); };
    importance = quant::llama_matmul_importance(ref.spec, ref.weights, cal, io);
    bar.finish();
    imatrix_used = cal.size();
    o.importance = &importance;
  }
  if (!compare) models::write_llama_gguf(pending, ref.spec, ref.weights, o);
  const std::string measured = compare ? *compare : pending;
  try {
    models::LlamaModel q = models::load_llama_model(measured);
    if (q.format != "gguf") throw Error(ErrorKind::invalid_argument, cat("--compare ", measured, ": not a GGUF file"));
    std::vector<int32_t> ids = ref.tokenizer->encode(eval_file ? read_text(*eval_file) : kDefaultEvalText, true).ids;
    if (ids.size() < 2) throw Error(ErrorKind::invalid_argument, "the evaluation text is shorter than 2 tokens");
    if (static_cast<int64_t>(ids.size()) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
    models::LlamaRunner a(ref.spec, ref.weights), b(q.spec, q.weights);
    a.reset(static_cast<int64_t>(ids.size()));
    b.reset(static_cast<int64_t>(ids.size()));
    quant::LogitComparer cmp;
    Progress bar("rlx quantize: evaluating", static_cast<int64_t>(ids.size()), !json);
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& la = a.forward({ids[i]});
      const Tensor& lb = b.forward({ids[i]});
      const int64_t vocab = la.shape().back();
      cmp.add(la.data_as<float>(), lb.data_as<float>(), vocab, i + 1 < ids.size() ? ids[i + 1] : -1);
      bar.update(static_cast<int64_t>(i + 1), "tokens");
    }
    bar.finish();
    const quant::Comparison c = cmp.result();
    const std::vector<std::string> failed = gate.failures(c);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const uintmax_t bytes = fs::file_size(measured);
    if (plot) write_kld_plot(*plot, c, target.name);
    if (!compare && failed.empty()) fs::rename(pending, out);
    else if (!compare) fs::remove(pending);
    if (json) {
      std::printf("{\"model\":%s,\"type\":%s,\"output\":%s,\"bytes\":%ju,\"f32_bytes\":%lld,\"tokens\":%zu,\"kld_mean\":%s,\"kld_median\":%s,\"kld_p99\":%s,"
                  "\"kld_max\":%s,\"top1\":%s,\"ppl_reference\":%s,\"ppl_quantized\":%s,\"imatrix_tokens\":%zu,\"gate\":%s,\"passed\":%s,\"failures\":%s,\"seconds\":%s}\n",
                  json_quote(files[0]).c_str(), json_quote(target.name).c_str(), compare ? json_quote(*compare).c_str() : failed.empty() ? json_quote(out).c_str() : "null", bytes,
                  static_cast<long long>(ref.weight_bytes()), c.positions, format_double(c.kld_mean).c_str(), format_double(c.kld_median).c_str(),
                  format_double(c.kld_p99).c_str(), format_double(c.kld_max).c_str(), format_double(c.top1).c_str(), format_double(c.ppl_reference).c_str(),
                  format_double(c.ppl_test).c_str(), imatrix_used, json_quote(gate.str()).c_str(), json_bool(failed.empty()).c_str(),
                  quoted_array(failed).c_str(), format_double(secs).c_str());
    } else {
      std::printf("rlx quantize: %s → %s: %.2f MB (f32 weights %.2f MB)%s\n", files[0].c_str(), target.name.c_str(), static_cast<double>(bytes) / 1e6,
                  static_cast<double>(ref.weight_bytes()) / 1e6, imatrix_used ? cat("; importance from ", imatrix_used, " tokens").c_str() : "");
      std::printf("  against f32 over %zu tokens: KLD mean %.6f, median %.6f, p99 %.6f, max %.6f nats; top-1 agreement %.2f%%; perplexity %.4f → %.4f\n",
                  c.positions, c.kld_mean, c.kld_median, c.kld_p99, c.kld_max, 100 * c.top1, c.ppl_reference, c.ppl_test);
      if (plot) std::printf("  KLD histogram: %s\n", plot->c_str());
      if (failed.empty() && compare) std::printf("  %s\n", gate.empty() ? "no gate" : cat("gate ", gate.str(), " passed").c_str());
      else if (failed.empty()) std::printf("  %s%s\n", gate.empty() ? "no gate; written to " : cat("gate ", gate.str(), " passed; written to ").c_str(), out.c_str());
    }
    if (!failed.empty()) {
      std::fflush(stdout);
      if (compare) std::fprintf(stderr, "rlx quantize: refused: %s (gate %s): %s fails it\n", join(failed, "; ").c_str(), gate.str().c_str(), compare->c_str());
      else std::fprintf(stderr, "rlx quantize: refused: %s (gate %s); nothing written to %s\n", join(failed, "; ").c_str(), gate.str().c_str(), out.c_str());
      return 3;
    }
    return 0;
  } catch (...) {
    std::error_code ec;
    if (!compare) fs::remove(pending, ec);
    throw;
  }
}

}  // namespace rlx::cli
