#include "models/slot_runner.h"

#include <algorithm>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

CompiledModel compile(ir::Graph g, const std::string& device) { return Session(device).compile(Graph(std::make_shared<ir::Graph>(std::move(g)))); }

// Prefill rounds activations as decode does: a prompt's rows then take the same integer
// kernels (on the cpu device, the repacked Q8_0 weights decode reads too).
LlamaGraphOptions prefill_graph_options(const SlotRunnerOptions& o) {
  const std::string& qa = o.precision.quantized_activations;
  if (qa != "auto" && qa != "q8" && qa != "f32") throw Error(ErrorKind::invalid_argument, cat("quantized activations must be auto, q8 or f32, got '", qa, "'"));
  LlamaGraphOptions g;
  g.q8_activations = qa == "q8" || (qa == "auto" && device_info(o.device).int8_dot_products);
  g.q8_activations_q8_0 = qa == "q8";
  return g;
}

LlamaGraphOptions decode_graph_options(const SlotRunnerOptions& o) {
  LlamaGraphOptions g = prefill_graph_options(o);
  g.half_matmul = "packed";  // a few rows: decode-on-the-fly beats a GEMM
  g.slot_attention_full_cache = device_info(o.device).name == "cpu";
  return g;
}

}  // namespace

SlotRunner::SlotRunner(const LlamaSpec& spec, const LlamaWeights& weights, const SlotRunnerOptions& o)
    : spec_(spec),
      options_(o),
      prefill_(compile(build_llama_slot_prefill_graph(spec, weights, prefill_graph_options(o), o.slots, o.capacity), o.device)),
      decode_(compile(build_llama_slot_decode_graph(spec, weights, decode_graph_options(o), o.slots, o.capacity), o.device)) {
  if (o.slots < 1 || o.capacity < 1 || o.window_step < 1)
    throw Error(ErrorKind::invalid_argument, cat("slot runner: slots, capacity and window_step must be positive (", o.slots, ", ", o.capacity, ", ", o.window_step, ")"));
  if (!spec.rope_long_inv_freq.empty() && spec.max_position_embeddings > 0 && o.capacity > spec.max_position_embeddings)
    throw Error(ErrorKind::invalid_argument, cat("slot runner: a slot of ", o.capacity, " positions exceeds the model's context (max_position_embeddings = ",
                                                 spec.max_position_embeddings, "; LongRoPE is not defined past it)"));
  for (int64_t l = 0; l < spec.num_layers; ++l)
    for (int kv = 0; kv < 2; ++kv) caches_.push_back(Tensor::zeros(DType::f32, {o.slots * o.capacity, spec.num_kv_heads, spec.head_dim}));
  // On a GPU the caches live in device memory: steps move only ids, positions and logits.
  for (const Tensor& c : caches_) decode_.keep_on_device(c);
  prefill_logits_ = Tensor::zeros(DType::f32, {1, spec.vocab_size});
}

SlotRunner::~SlotRunner() {
  for (const Tensor& c : caches_) decode_.release_from_device(c, false);
}

Tensor SlotRunner::window(int64_t length) const {
  int64_t L = std::min(options_.capacity, (std::max<int64_t>(length, 1) + options_.window_step - 1) / options_.window_step * options_.window_step);
  return Tensor::zeros(DType::i64, {L});
}

const Tensor& SlotRunner::prefill(int64_t slot, const std::vector<int32_t>& ids) {
  auto n = static_cast<int64_t>(ids.size());
  if (slot < 0 || slot >= options_.slots) throw Error(ErrorKind::invalid_argument, cat("slot ", slot, " is not one of the ", options_.slots, " slots"));
  if (n == 0) throw Error(ErrorKind::invalid_argument, "the prompt has no tokens");
  if (n > options_.capacity) throw Error(ErrorKind::invalid_argument, cat("a prompt of ", n, " tokens does not fit a slot of ", options_.capacity, " positions"));
  // Prompts are padded to a bucket (16, 32, 64, …, capacity) so a few shapes serve them all; the
  // padding's rows land past the prompt, where no query looks until decoding overwrites them.
  int64_t S = 16;
  while (S < n) S *= 2;
  S = std::min(S, options_.capacity);
  Tensor tok = Tensor::zeros(DType::i64, {1, S}), pos = Tensor::zeros(DType::i64, {S});
  for (int64_t i = 0; i < S; ++i) {
    tok.data_as<int64_t>()[i] = i < n ? ids[static_cast<size_t>(i)] : 0;
    pos.data_as<int64_t>()[i] = i;
  }
  inputs_ = {tok, pos, Tensor::from_f64(DType::i64, {1}, {static_cast<double>(slot)}), Tensor::from_f64(DType::i64, {1}, {static_cast<double>(n - 1)}),
             window(S)};
  outputs_ = {prefill_logits_};
  for (const Tensor& c : caches_) {
    inputs_.push_back(c);
    outputs_.push_back(c);
  }
  prefill_.run_into(inputs_, outputs_);
  return prefill_logits_;
}

const Tensor& SlotRunner::decode(const std::vector<int32_t>& ids, const std::vector<int64_t>& positions) {
  const auto n = static_cast<int64_t>(ids.size());
  if (n < 1 || n > options_.slots || static_cast<int64_t>(positions.size()) != n)
    throw Error(ErrorKind::invalid_argument, cat("a decode pass takes a token and a position for each of the first 1…", options_.slots,
                                                 " slots; got ", ids.size(), " tokens and ", positions.size(), " positions"));
  Tensor tok = Tensor::zeros(DType::i64, {n, 1}), pos = Tensor::zeros(DType::i64, {n});
  int64_t longest = 1;
  for (int64_t s = 0; s < n; ++s) {
    int64_t p = positions[static_cast<size_t>(s)];
    if (p < 0 || p >= options_.capacity) throw Error(ErrorKind::invalid_argument, cat("slot ", s, ": position ", p, " is outside its ", options_.capacity, " positions"));
    tok.data_as<int64_t>()[s] = ids[static_cast<size_t>(s)];
    pos.data_as<int64_t>()[s] = p;
    longest = std::max(longest, p + 1);
  }
  if (!decode_logits_.defined() || decode_logits_.shape()[0] != n) decode_logits_ = Tensor::zeros(DType::f32, {n, spec_.vocab_size});
  inputs_ = {tok, pos, window(longest)};
  outputs_ = {decode_logits_};
  for (const Tensor& c : caches_) {
    inputs_.push_back(c);
    outputs_.push_back(c);
  }
  decode_.run_into(inputs_, outputs_);
  return decode_logits_;
}

}  // namespace rlx::models
