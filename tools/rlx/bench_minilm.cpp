// rlx bench minilm: latency of sentence embeddings on the all-MiniLM-L6-v2 architecture (6
// layers, hidden 384, 12 heads, FFN 1536, vocab 30522) with seeded random weights — the whole
// encoder plus mean pooling and L2 normalization, on full (unpadded) sequences, the shapes the
// peer scripts in bench/ time.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <memory>

#include "bench.h"
#include "formats/safetensors.h"
#include "formats/tensor_view.h"
#include "json.h"
#include "models/bert.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

struct Inputs {
  Tensor ids, mask, types;
};

// Ids spread over the vocabulary the way the peer scripts pick them; no padding.
Inputs make_inputs(int64_t batch, int64_t seq, int64_t vocab) {
  Inputs in{Tensor::zeros(DType::i64, {batch, seq}), Tensor::zeros(DType::i64, {batch, seq}),
            Tensor::zeros(DType::i64, {batch, seq})};
  int64_t* ids = in.ids.data_as<int64_t>();
  int64_t* mask = in.mask.data_as<int64_t>();
  for (int64_t i = 0; i < batch * seq; ++i) {
    ids[i] = 1000 + (i * 7919) % std::min<int64_t>(29000, vocab - 1000);
    mask[i] = 1;
  }
  return in;
}

// A timing of wrong numbers is worthless: every vector must be finite with unit norm.
void check_output(const Tensor& out, int64_t batch, int64_t dim) {
  Tensor c = out.contiguous();
  if (c.shape() != std::vector<int64_t>{batch, dim})
    throw Error(ErrorKind::internal, cat("minilm: output has shape [", join(c.shape(), ","), "], expected [", batch, ",", dim, "]"));
  const float* p = c.data_as<float>();
  for (int64_t b = 0; b < batch; ++b) {
    double sq = 0;
    for (int64_t j = 0; j < dim; ++j) sq += static_cast<double>(p[b * dim + j]) * p[b * dim + j];
    if (!std::isfinite(sq) || std::abs(sq - 1.0) > 1e-3)
      throw Error(ErrorKind::internal, cat("minilm: embedding ", b, " has squared norm ", sq, " instead of 1"));
  }
}

// Smallest cosine similarity between matching rows of two [batch, dim] embedding tensors.
double min_cosine(const Tensor& a, const Tensor& b) {
  Tensor x = a.contiguous(), y = b.contiguous();
  int64_t rows = x.shape()[0], dim = x.shape()[1];
  const float* p = x.data_as<float>();
  const float* q = y.data_as<float>();
  double worst = 1.0;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, nx = 0, ny = 0;
    for (int64_t j = 0; j < dim; ++j) {
      dot += static_cast<double>(p[r * dim + j]) * q[r * dim + j];
      nx += static_cast<double>(p[r * dim + j]) * p[r * dim + j];
      ny += static_cast<double>(q[r * dim + j]) * q[r * dim + j];
    }
    worst = std::min(worst, dot / std::sqrt(nx * ny));
  }
  return worst;
}

// The benchmark's model as a sentence-transformers directory (config.json, model.safetensors,
// a WordPiece vocab.txt of placeholder words w5 … w30521, mean pooling, normalization), so other
// front ends (Python's rlx.Embedder, peers) load exactly the model timed here.
void save_model_dir(const std::string& dir, const models::BertSpec& spec, const models::BertWeights& weights) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(dir) / "1_Pooling");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream f(fs::path(dir) / name);
    if (!(f << text)) throw Error(ErrorKind::io, cat("cannot write ", (fs::path(dir) / name).string()));
  };
  write("config.json", cat("{\"model_type\": \"bert\", \"vocab_size\": ", spec.vocab_size, ", \"hidden_size\": ", spec.hidden_size,
                           ", \"num_hidden_layers\": ", spec.num_layers, ", \"num_attention_heads\": ", spec.num_heads,
                           ", \"intermediate_size\": ", spec.intermediate_size, ", \"max_position_embeddings\": 512, \"type_vocab_size\": 2, "
                           "\"layer_norm_eps\": 1e-12, \"hidden_act\": \"gelu\", \"pad_token_id\": 0}\n"));
  write("modules.json", "[{\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\": \"sentence_transformers.models.Transformer\"}, "
                        "{\"idx\": 1, \"name\": \"1\", \"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}, "
                        "{\"idx\": 2, \"name\": \"2\", \"path\": \"2_Normalize\", \"type\": \"sentence_transformers.models.Normalize\"}]\n");
  write("sentence_bert_config.json", "{\"max_seq_length\": 256, \"do_lower_case\": false}\n");
  write("tokenizer_config.json", "{\"do_lower_case\": true, \"tokenizer_class\": \"BertTokenizer\", \"unk_token\": \"[UNK]\", "
                                 "\"sep_token\": \"[SEP]\", \"pad_token\": \"[PAD]\", \"cls_token\": \"[CLS]\", \"mask_token\": \"[MASK]\"}\n");
  write("1_Pooling/config.json", cat("{\"word_embedding_dimension\": ", spec.hidden_size, ", \"pooling_mode_mean_tokens\": true}\n"));
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int64_t i = 5; i < spec.vocab_size; ++i) vocab += cat("w", i, "\n");
  write("vocab.txt", vocab);
  std::vector<formats::TensorView> views;
  for (const auto& [name, t] : weights) views.push_back(formats::view_of(name, t));
  formats::write_safetensors((fs::path(dir) / "model.safetensors").string(), views);
}

std::vector<std::string> to_strings(const std::vector<double>& v) {
  std::vector<std::string> out;
  for (double x : v) out.push_back(format_double(x));
  return out;
}

}  // namespace

int bench_minilm(Args& args) {
  std::vector<int64_t> batches = parse_int_list("batch", args.value_or("batch", "1,8,32"));
  std::vector<int64_t> seqs = parse_int_list("seq", args.value_or("seq", "128"));
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string precision = args.value_or("precision", "f32");
  auto threads = args.value("threads");
  int64_t seed = args.int_or("seed", 0);
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  bool times = args.flag("times");  // every timed run in the JSON, for scripts that pool runs
  auto save = args.value("save");
  // Another device timed beside this one in the same sitting (interleaved rounds), its vectors
  // compared with this one's: the side-by-side a device comparison needs.
  auto versus = args.value("versus");
  args.finish();
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  int64_t nthreads = num_threads();

  models::BertSpec spec = models::minilm_l6_spec();
  for (int64_t s : seqs)
    if (s > spec.max_tokens()) throw Error(ErrorKind::invalid_argument, cat("--seq ", s, " exceeds MiniLM's ", spec.max_tokens(), " positions"));
  models::PoolingSpec pooling;  // mean + L2 normalize, as all-MiniLM-L6-v2 ships
  auto t0 = std::chrono::steady_clock::now();
  models::BertWeights weights = models::random_bert_weights(spec, static_cast<uint64_t>(seed));
  if (save) save_model_dir(*save, spec, weights);
  SessionOptions session_options;
  session_options.precision = precision;  // validated by the session
  CompiledModel model = Session(device, session_options).compile(
      Graph(std::make_shared<ir::Graph>(models::build_bert_graph(spec, pooling, weights))));
  double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Below f32, every shape's embeddings are compared with the f32 model's (same weights):
  // a speed bought with wrong vectors would not count.
  std::unique_ptr<CompiledModel> reference;
  if (precision != "f32")
    reference = std::make_unique<CompiledModel>(
        Session(device).compile(Graph(std::make_shared<ir::Graph>(models::build_bert_graph(spec, pooling, weights)))));
  std::unique_ptr<CompiledModel> other;
  if (versus)
    other = std::make_unique<CompiledModel>(
        Session(*versus, session_options).compile(Graph(std::make_shared<ir::Graph>(models::build_bert_graph(spec, pooling, weights)))));

  if (!json)
    std::printf("minilm: all-MiniLM-L6-v2 architecture (6 layers, hidden 384, 12 heads, FFN 1536), random weights\n"
                "device %s, %s, %lld threads, graph built and compiled in %.0f ms\n\n"
                "%6s %5s %10s %10s %10s %6s %14s%s\n",
                device.c_str(), precision.c_str(), static_cast<long long>(nthreads), compile_ms, "batch", "seq", "p50 ms",
                "p90 ms", "mean ms", "runs", "first run ms", versus ? cat("  ", *versus, " p50 ms  ratio ", *versus, "/", device).c_str() : "");
  std::vector<std::string> rows;
  for (int64_t s : seqs)
    for (int64_t b : batches) {
      Inputs in = make_inputs(b, s, spec.vocab_size);
      std::vector<Tensor> feed = {in.ids, in.mask, in.types};
      // The first run of a shape specializes the graph for it; reported apart from the timings.
      auto f0 = std::chrono::steady_clock::now();
      Tensor got = model.run(feed)[0];
      double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f0).count();
      check_output(got, b, spec.hidden_size);
      std::string cosine, cosine_text;
      if (reference) {
        double c = min_cosine(got, reference->run(feed)[0]);
        cosine = cat(",\"min_cos_vs_f32\":", format_double(c));
        cosine_text = cat("   (cos vs f32 >= ", format_double(c), ")");
      }
      Timing t = time_runs([&] { model.run(feed); }, timing);
      std::string side, side_text;
      if (other) {
        // two interleaved rounds each, the better p50 of each device counted
        Tensor theirs = other->run(feed)[0];
        double c = min_cosine(got, theirs);
        Timing o = time_runs([&] { other->run(feed); }, timing);
        Timing t2 = time_runs([&] { model.run(feed); }, timing);
        Timing o2 = time_runs([&] { other->run(feed); }, timing);
        if (t2.p50 < t.p50) t = t2;
        if (o2.p50 < o.p50) o = o2;
        side = cat(",\"versus\":{\"device\":", json_quote(*versus), ",\"p50_ms\":", format_double(o.p50), ",\"ratio\":", format_double(o.p50 / t.p50),
                   ",\"min_cos\":", format_double(c), "}");
        char buf[128];
        std::snprintf(buf, sizeof buf, " %12.2f %10.3fx  (cos >= %.6f)", o.p50, o.p50 / t.p50, c);
        side_text = buf;
        if (c < 0.999) throw Error(ErrorKind::internal, cat("minilm: ", device, " and ", *versus, " embeddings differ (min cosine ", c, ")"));
      }
      rows.push_back(cat("{\"batch\":", b, ",\"seq\":", s, ",\"p50_ms\":", format_double(t.p50), ",\"p90_ms\":", format_double(t.p90),
                         ",\"mean_ms\":", format_double(t.mean), ",\"min_ms\":", format_double(t.min), ",\"runs\":", t.runs(),
                         ",\"warmup\":", t.warmup, ",\"first_run_ms\":", format_double(first_ms), cosine, side,
                         times ? cat(",\"times_ms\":", json_array(to_strings(t.ms))) : std::string(), "}"));
      if (!json)
        std::printf("%6lld %5lld %10.2f %10.2f %10.2f %6d %14.1f%s%s\n", static_cast<long long>(b), static_cast<long long>(s), t.p50,
                    t.p90, t.mean, t.runs(), first_ms, cosine_text.c_str(), side_text.c_str());
      std::fflush(stdout);
    }
  if (json)
    std::printf("{\"workload\":\"minilm\",\"device\":%s,\"precision\":%s,\"threads\":%lld,\"model\":{\"layers\":%lld,\"hidden\":%lld,"
                "\"heads\":%lld,\"ffn\":%lld,\"vocab\":%lld,\"pooling\":\"mean\",\"normalize\":true},\"compile_ms\":%s,\"results\":%s}\n",
                json_quote(device).c_str(), json_quote(precision).c_str(), static_cast<long long>(nthreads),
                static_cast<long long>(spec.num_layers), static_cast<long long>(spec.hidden_size),
                static_cast<long long>(spec.num_heads), static_cast<long long>(spec.intermediate_size),
                static_cast<long long>(spec.vocab_size), format_double(compile_ms).c_str(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
