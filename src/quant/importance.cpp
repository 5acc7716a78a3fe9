#include "quant/importance.h"

#include <algorithm>
#include <memory>

#include "rlx/error.h"
#include "rlx/session.h"
#include "util/strings.h"

namespace rlx::quant {

std::map<std::string, std::vector<float>> llama_matmul_importance(const models::LlamaSpec& spec, const models::LlamaWeights& weights,
                                                                  const std::vector<int32_t>& ids, const ImportanceOptions& options) {
  if (ids.empty()) throw Error(ErrorKind::invalid_argument, "importance: the calibration text has no tokens");
  if (options.chunk < 1) throw Error(ErrorKind::invalid_argument, cat("importance: chunk must be at least 1, got ", options.chunk));
  models::LlamaGraphOptions o;
  o.matmul_input_stats = true;
  auto g = std::make_shared<ir::Graph>(models::build_llama_graph(spec, weights, o));
  // the statistics follow the logits and the caches (build_llama_graph)
  const size_t first = 1 + 2 * static_cast<size_t>(spec.num_layers);
  std::vector<std::string> names;
  for (size_t i = first; i < g->outputs().size(); ++i) names.push_back(g->value(g->outputs()[i]).name.substr(3));  // "sq:"
  CompiledModel m = Session(options.device).compile(Graph(g));
  std::map<std::string, std::vector<double>> sums;
  int64_t rows = 0;
  const auto total = static_cast<int64_t>(ids.size());
  for (int64_t at = 0; at < total; at += options.chunk) {
    const int64_t n = std::min(options.chunk, total - at);
    Tensor tok = Tensor::zeros(DType::i64, {1, n}), pos = Tensor::zeros(DType::i64, {n}), last = Tensor::zeros(DType::i64, {1});
    for (int64_t i = 0; i < n; ++i) {
      tok.data_as<int64_t>()[i] = ids[static_cast<size_t>(at + i)];
      pos.data_as<int64_t>()[i] = i;
    }
    last.data_as<int64_t>()[0] = n - 1;
    std::vector<Tensor> in = {tok, pos, last};
    for (int64_t l = 0; l < 2 * spec.num_layers; ++l) in.push_back(Tensor::zeros(DType::f32, {1, spec.num_kv_heads, n, spec.head_dim}));
    std::vector<Tensor> out = m.run(in);
    for (size_t i = 0; i < names.size(); ++i) {
      const Tensor s = out.at(first + i).contiguous();
      std::vector<double>& acc = sums[names[i]];
      acc.resize(static_cast<size_t>(s.numel()), 0.0);
      for (int64_t j = 0; j < s.numel(); ++j) acc[static_cast<size_t>(j)] += s.data_as<float>()[j];
    }
    rows += n;
    if (options.progress) options.progress(at + n, total);
  }
  // Mean squares, with a floor of 1e-3 of the matrix's average so that no column is ignored
  // (one the text never exercised still carries weight for other texts).
  std::map<std::string, std::vector<float>> out;
  for (auto& [name, acc] : sums) {
    double mean = 0;
    for (double& v : acc) mean += v /= static_cast<double>(rows);
    mean /= static_cast<double>(std::max<size_t>(1, acc.size()));
    std::vector<float>& w = out[name];
    for (double v : acc) w.push_back(static_cast<float>(std::max(v, 1e-3 * mean) + (mean == 0 ? 1.0 : 0.0)));
  }
  return out;
}

}  // namespace rlx::quant
