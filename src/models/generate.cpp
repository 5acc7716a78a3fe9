#include "models/generate.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

CompiledModel compile(const LlamaSpec& spec, const LlamaWeights& w, LlamaGraphOptions o, const LlamaRunnerOptions& ro) {
  o.tensor_parallel = ro.tensor_parallel;
  o.vocab_parallel_head = ro.vocab_parallel_head;
  const LlamaPipeline& p = ro.pipeline;
  o.first_layer = p.first_layer;
  o.end_layer = p.end_layer;
  o.hidden_input = p.stage > 0;
  o.hidden_output = p.stage < p.stages - 1;
  return Session(ro.device).compile(Graph(std::make_shared<ir::Graph>(build_llama_graph(spec, w, o))));
}

bool use_bf16_prefill(const LlamaWeights& w, const LlamaRunnerOptions& o) {
  if (o.prefill_bf16 != "auto" && o.prefill_bf16 != "on" && o.prefill_bf16 != "off")
    throw Error(ErrorKind::invalid_argument, cat("prefill_bf16 must be auto, on or off, got '", o.prefill_bf16, "'"));
  bool all_f32 = true;
  for (const auto& [name, x] : w) all_f32 = all_f32 && !x.is_packed() && x.dense.dtype() == DType::f32;
  return o.prefill_bf16 == "on" || (o.prefill_bf16 == "auto" && !all_f32);
}

LlamaGraphOptions decode_options(const LlamaRunnerOptions& o) {
  LlamaGraphOptions g;
  g.fixed_seq = 1;
  g.half_matmul = o.decode_half_matmul == "auto" ? "packed" : o.decode_half_matmul;
  const std::string& qa = o.precision.quantized_activations;
  if (qa != "auto" && qa != "q8" && qa != "f32") throw Error(ErrorKind::invalid_argument, cat("quantized activations must be auto, q8 or f32, got '", qa, "'"));
  g.q8_activations = qa == "q8" || (qa == "auto" && device_info(o.device).int8_dot_products);
  g.q8_activations_q8_0 = qa == "q8";
  g.next_token_output = true;
  return g;
}

}  // namespace

LlamaRunner::LlamaRunner(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaRunnerOptions& options)
    : spec_(spec),
      options_(options),
      prefill_(compile(spec, weights, LlamaGraphOptions{}, options)),
      decode_(compile(spec, weights, decode_options(options), options)) {
  if (use_bf16_prefill(weights, options)) {
    LlamaGraphOptions g;
    g.bf16_activations = true;
    prefill_bf16_ = compile(spec, weights, g, options);
  }
  logits_ = Tensor::zeros(DType::f32, {1, spec.vocab_size});
  device_logits_ = Tensor::zeros(DType::f32, {1, spec.vocab_size});
  decode_.keep_on_device(device_logits_);
  next_token_ = Tensor::zeros(DType::i64, {1});
}

LlamaRunner::~LlamaRunner() {
  release_caches();
  decode_.release_from_device(device_logits_, false);
}

void LlamaRunner::release_caches() {
  for (const Tensor& c : caches_) decode_.release_from_device(c, false);
  caches_.clear();
}

void LlamaRunner::reset(int64_t capacity) {
  if (capacity <= 0) throw Error(ErrorKind::invalid_argument, cat("the KV cache needs a positive capacity, got ", capacity));
  length_ = 0;
  if (capacity == capacity_) return;
  release_caches();
  capacity_ = 0;
  const int64_t layers = (options_.pipeline.end_layer < 0 ? spec_.num_layers : options_.pipeline.end_layer) - options_.pipeline.first_layer;
  for (int64_t l = 0; l < 2 * layers; ++l) caches_.push_back(Tensor::zeros(DType::f32, {1, spec_.num_kv_heads, capacity, spec_.head_dim}));
  // On a GPU the cache lives in device memory: each step then moves only the token ids in and
  // the logits out (every graph of the runner writes the same cache, in place).
  for (const Tensor& c : caches_) decode_.keep_on_device(c);
  capacity_ = capacity;
}

int64_t LlamaRunner::prefill_rows(int64_t n) const {
  if (!options_.bucket_prompts) return n;
  int64_t rows = 16;
  while (rows < n) rows *= 2;
  // Padding rows are written to the cache too (past the prompt; decode overwrites them), so
  // they must fit.
  return length_ + rows <= capacity_ ? rows : n;
}

void LlamaRunner::check_room(const std::vector<int32_t>& ids) const {
  if (ids.empty()) throw Error(ErrorKind::invalid_argument, "forward() needs at least one token");
  if (capacity_ == 0) throw Error(ErrorKind::invalid_argument, "call reset(capacity) before forward()");
  auto n = static_cast<int64_t>(ids.size());
  if (length_ + n > capacity_)
    throw Error(ErrorKind::invalid_argument, cat("the KV cache holds ", capacity_, " positions; ", length_, " are used and ", n, " more were given"));
  // LongRoPE's frequencies are defined up to the extended context, not past it
  if (!spec_.rope_long_inv_freq.empty() && spec_.max_position_embeddings > 0 && length_ + n > spec_.max_position_embeddings)
    throw Error(ErrorKind::invalid_argument, cat("the model's context ends at max_position_embeddings = ", spec_.max_position_embeddings, " positions; ", length_,
                                                 " are used and ", n, " more were given"));
  for (int32_t id : ids)
    if (id < 0 || id >= spec_.vocab_size) throw Error(ErrorKind::invalid_argument, cat("token id ", id, " is outside the vocabulary of ", spec_.vocab_size));
}

const Tensor& LlamaRunner::forward(const std::vector<int32_t>& ids) {
  check_room(ids);
  auto n = static_cast<int64_t>(ids.size());
  if (n == 1) {
    run_decode(ids[0], logits_);
  } else {
    int64_t rows = prefill_rows(n);
    set_inputs(ids, rows, logits_);
    run_step(prefill_bf16_ && rows >= options_.bf16_rows ? *prefill_bf16_ : prefill_, logits_);
  }
  length_ += n;
  return logits_;
}

int32_t LlamaRunner::forward_greedy(int32_t id) {
  check_room({id});
  run_decode(id, device_logits_);
  length_ += 1;
  return static_cast<int32_t>(next_token_.data_as<int64_t>()[0]);
}

void LlamaRunner::run_decode(int32_t id, const Tensor& logits) {
  set_inputs({id}, 1, logits);
  if (last_stage()) outputs_.push_back(next_token_);  // the decode graph's last output
  run_step(decode_, &logits == &device_logits_ ? next_token_ : logits);
}

void LlamaRunner::run_step(CompiledModel& graph, const Tensor& result) {
  const LlamaPipeline& p = options_.pipeline;
  if (!p.comm) {
    graph.run_into(inputs_, outputs_);
    return;
  }
  if (!first_stage()) p.comm->recv(inputs_[0], p.prev);
  graph.run_into(inputs_, outputs_);
  if (!last_stage()) p.comm->send(outputs_[0], p.next);
  Tensor r = result;
  p.comm->broadcast(r, p.root);
}

void LlamaRunner::set_inputs(const std::vector<int32_t>& ids, int64_t rows, const Tensor& logits) {
  auto n = static_cast<int64_t>(ids.size());
  Tensor tok = Tensor::zeros(DType::i64, {1, rows}), pos = Tensor::zeros(DType::i64, {rows});
  Tensor last = Tensor::zeros(DType::i64, {1});
  for (int64_t i = 0; i < rows; ++i) {
    tok.data_as<int64_t>()[i] = i < n ? ids[static_cast<size_t>(i)] : 0;
    pos.data_as<int64_t>()[i] = length_ + i;
  }
  last.data_as<int64_t>()[0] = n - 1;
  inputs_ = {tok, pos, last};
  outputs_ = {logits};
  if (options_.pipeline.comm) {  // a stage takes and/or gives the residual stream's rows
    if (!hidden_.defined() || hidden_.shape()[1] != rows) hidden_ = Tensor::zeros(DType::f32, {1, rows, spec_.hidden_size});
    if (!first_stage()) inputs_[0] = hidden_;
    if (!last_stage()) outputs_[0] = hidden_;
  }
  for (const Tensor& c : caches_) {
    inputs_.push_back(c);
    outputs_.push_back(c);
  }
}

TokenStream::TokenStream(LlamaRunner& runner, std::vector<int32_t> prompt, const GenerateOptions& o)
    : runner_(runner), o_(o), sampler_(o.sampling), history_(std::move(prompt)) {
  if (history_.empty()) throw Error(ErrorKind::invalid_argument, "the prompt has no tokens");
  if (o.max_tokens < 0) throw Error(ErrorKind::invalid_argument, cat("max tokens must be ≥ 0, got ", o.max_tokens));
  int64_t n = static_cast<int64_t>(history_.size());
  // Room for the prompt's bucket and the answer, in steps of 256 so similar requests share a shape.
  int64_t capacity = std::max<int64_t>(n + o.max_tokens, n <= 16 ? 16 : 0);
  runner_.reset((capacity + 255) / 256 * 256);
  // Greedy without a repetition penalty needs only the argmax, which the decode graph computes.
  device_argmax_ = o.sampling.temperature == 0 && o.sampling.repetition_penalty == 1;
  r_.stop_reason = "length";
  done_ = o.max_tokens == 0;
}

std::optional<int32_t> TokenStream::next() {
  using clock = std::chrono::steady_clock;
  if (done_) return std::nullopt;
  int32_t id = 0;
  size_t step = r_.ids.size();
  if (step == 0) {
    auto t0 = clock::now();
    logits_ = &runner_.forward(history_);
    r_.prefill_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    decode_start_ = clock::now();
  }
  if (step > 0 && device_argmax_) {
    id = runner_.forward_greedy(history_.back());
  } else {
    if (step > 0) logits_ = &runner_.forward({history_.back()});
    id = sampler_.sample(logits_->data_as<float>(), runner_.spec().vocab_size, history_);
  }
  history_.push_back(id);
  r_.ids.push_back(id);
  r_.decode_steps = static_cast<int64_t>(r_.ids.size()) - 1;
  r_.decode_ms = r_.decode_steps ? std::chrono::duration<double, std::milli>(clock::now() - decode_start_).count() : 0;
  bool eos = std::find(o_.eos_token_ids.begin(), o_.eos_token_ids.end(), id) != o_.eos_token_ids.end();
  if (eos) r_.stop_reason = "eos";
  done_ = eos || static_cast<int64_t>(r_.ids.size()) >= o_.max_tokens;
  return id;
}

GenerateResult generate(LlamaRunner& runner, const std::vector<int32_t>& prompt, const GenerateOptions& o,
                        const std::function<bool(int32_t)>& on_token) {
  TokenStream s(runner, prompt, o);
  while (auto id = s.next())
    if (on_token && !on_token(*id)) break;
  return s.result();
}

}  // namespace rlx::models
