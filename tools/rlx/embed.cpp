// rlx embed: sentence vectors of texts with a BERT-family model directory (sentence-transformers
// layout or plain Hugging Face), batched with padding, as sentence-transformers computes them.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "json.h"
#include "models/sentence_embedder.h"
#include "progress.h"
#include "rlx/error.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

// One text per line; a trailing newline does not make an extra empty text. "-" is stdin.
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) throw Error(ErrorKind::io, cat("--file ", path, ": cannot open it for reading"));
    in = &file;
  }
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(*in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string preview(const std::string& text, size_t max_bytes = 40) {
  std::string t = text.size() <= max_bytes ? text : text.substr(0, max_bytes);
  // Do not cut a UTF-8 sequence in half.
  while (t.size() < text.size() && !t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80) t.pop_back();
  if (t.size() < text.size() && !t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0xC0) t.pop_back();
  return json_quote(t) + (t.size() < text.size() ? "…" : "");
}

std::string pooling_names(const models::PoolingSpec& p) {
  return join(p.modes, "+", [](models::PoolingMode m) { return std::string(models::pooling_mode_name(m)); });
}

}  // namespace

// Where the pooling came from: modules.json, the defaults of a plain directory, or a GGUF's key.
std::string pooling_source(const models::BertModel& m, bool json) {
  bool gguf = m.dir.size() > 5 && m.dir.compare(m.dir.size() - 5, 5, ".gguf") == 0;
  return gguf ? "bert.pooling_type" : m.layout.defaulted ? (json ? "default" : "defaults") : "modules.json";
}

int cmd_embed(Args& args) {
  auto model_dir = args.value("model");
  std::vector<std::string> texts = args.values("text");
  auto file = args.value("file");
  int64_t batch = args.int_or("batch", 32);
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string precision = args.value_or("precision", "f32");
  auto threads = args.value("threads");
  bool json = args.flag("json");
  args.finish();
  if (!model_dir) throw Error(ErrorKind::invalid_argument, "--model DIR is required (a sentence-transformers or Hugging Face BERT directory)");
  if (batch < 1) throw Error(ErrorKind::invalid_argument, cat("--batch must be at least 1, got ", batch));
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  if (file)
    for (auto& line : read_lines(*file)) texts.push_back(std::move(line));
  if (texts.empty()) throw Error(ErrorKind::invalid_argument, "no texts: give --text T (repeatable) or --file F (one text per line)");

  auto t0 = std::chrono::steady_clock::now();
  SessionOptions options;
  options.precision = precision;  // the session rejects names it does not know
  models::SentenceEmbedder emb = models::SentenceEmbedder::open(*model_dir, device, options);
  const models::SentenceLayout& layout = emb.model().layout;
  // Say so when the pooling is a guess rather than declared by the directory.
  if (layout.defaulted) std::fprintf(stderr, "rlx embed: note: %s: %s\n", model_dir->c_str(), layout.description.c_str());
  Progress progress("embed", static_cast<int64_t>(texts.size()), !json && texts.size() > static_cast<size_t>(batch));
  Tensor out = emb.embed(texts, static_cast<size_t>(batch), [&](size_t done, size_t) {
    progress.update(static_cast<int64_t>(done), cat(done, "/", texts.size(), " texts"));
  });
  progress.finish();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t D = emb.dim();
  const float* p = out.data_as<float>();

  if (json) {
    std::vector<std::string> rows;
    rows.reserve(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<std::string> v;
      v.reserve(static_cast<size_t>(D));
      for (int64_t j = 0; j < D; ++j) v.push_back(format_float(p[static_cast<int64_t>(i) * D + j]));
      rows.push_back(json_array(v));
    }
    std::printf("{\"dim\":%lld,\"count\":%zu,\"pooling\":%s,\"normalize\":%s,\"pooling_source\":%s,\"note\":%s,"
                "\"max_tokens\":%lld,\"device\":%s,\"precision\":%s,\"embeddings\":%s}\n",
                static_cast<long long>(D), texts.size(), json_quote(pooling_names(layout.pooling)).c_str(),
                json_bool(layout.pooling.normalize).c_str(), json_quote(pooling_source(emb.model(), true)).c_str(),
                json_quote(layout.description).c_str(), static_cast<long long>(emb.model().max_tokens),
                json_quote(device).c_str(), json_quote(precision).c_str(), json_array(rows).c_str());
    return 0;
  }
  std::printf("%zu embeddings of dimension %lld (%s pooling%s; %s) in %.2f s on %s, %s\n", texts.size(),
              static_cast<long long>(D), pooling_names(layout.pooling).c_str(), layout.pooling.normalize ? ", L2 normalized" : "",
              pooling_source(emb.model(), false).c_str(), seconds, device.c_str(), precision.c_str());
  for (size_t i = 0; i < texts.size(); ++i) {
    const float* r = p + static_cast<int64_t>(i) * D;
    std::string head;
    for (int64_t j = 0; j < std::min<int64_t>(D, 4); ++j) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%+.4f", j ? " " : "", static_cast<double>(r[j]));
      head += buf;
    }
    std::printf("%4zu  %-44s [%s%s]\n", i, preview(texts[i]).c_str(), head.c_str(), D > 4 ? " …" : "");
  }
  return 0;
}

}  // namespace rlx::cli
