#include "models/llama_parallel.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

const LlamaWeight& find(const LlamaWeights& w, const std::string& name) {
  auto it = w.find(name);
  if (it == w.end()) throw Error(ErrorKind::invalid_argument, cat("tensor parallel: weight '", name, "' is missing"));
  return it->second;
}

// Rows [r·n/parts, (r+1)·n/parts) of a matrix [n, k] or a vector [n]: a view.
LlamaWeight rows(const LlamaWeight& w, int rank, int ranks) {
  const int64_t n = w.shape[0] / ranks, lo = n * rank;
  LlamaWeight out = w;
  out.shape[0] = n;
  if (w.is_packed()) out.packed = w.packed.slice(0, lo, lo + n);
  else out.dense = w.dense.slice(0, lo, lo + n);
  return out;
}

// Columns [r·k/ranks, …) of a matrix [n, k]: a copy (packed: whole blocks of each row).
LlamaWeight columns(const std::string& name, const LlamaWeight& w, int rank, int ranks) {
  const int64_t k = w.shape[1] / ranks, lo = k * rank;
  LlamaWeight out = w;
  out.shape[1] = k;
  if (!w.is_packed()) {
    out.dense = w.dense.slice(1, lo, lo + k).contiguous();
    return out;
  }
  const int64_t per_block = quant::block_elems(w.type), bytes = quant::block_bytes(w.type);
  if (k % per_block)
    throw Error(ErrorKind::invalid_argument, cat("tensor parallel: ", name, " (", quant::block_type_name(w.type), ", ", per_block,
                                                 "-element blocks) cannot split its ", w.shape[1], " columns into ", ranks, " whole-block parts"));
  const int64_t b0 = lo / per_block * bytes, b1 = (lo + k) / per_block * bytes;
  out.packed = w.packed.slice(1, b0, b1).contiguous();
  return out;
}

void require_divides(int ranks, int64_t n, const char* what) {
  if (n % ranks)
    throw Error(ErrorKind::invalid_argument, cat("tensor parallel over ", ranks, " ranks needs ", what, " (", n, ") to be a multiple of ", ranks));
}

}  // namespace

LlamaShard shard_llama_tensor_parallel(const LlamaSpec& spec, const LlamaWeights& weights, int rank, int ranks) {
  validate_llama_spec(spec);
  if (ranks < 1 || rank < 0 || rank >= ranks) throw Error(ErrorKind::invalid_argument, cat("tensor parallel: rank ", rank, " of ", ranks));
  if (spec.num_experts > 0) throw Error(ErrorKind::unsupported, "tensor parallel of a mixture-of-experts model (expert parallelism) is not built yet");
  require_divides(ranks, spec.num_heads, "the attention heads");
  // Fewer KV heads than ranks: each rank keeps a copy of the one its query heads read (Megatron's
  // replication), which needs the ranks to be a multiple of the KV heads.
  const bool kv_split = spec.num_kv_heads % ranks == 0;
  if (!kv_split && ranks % spec.num_kv_heads)
    throw Error(ErrorKind::invalid_argument, cat("tensor parallel over ", ranks, " ranks needs the key/value heads (", spec.num_kv_heads,
                                                 ") to be a multiple of ", ranks, " or to divide it"));
  const int kv_part = kv_split ? rank : rank / (ranks / static_cast<int>(spec.num_kv_heads));
  const int kv_parts = kv_split ? ranks : static_cast<int>(spec.num_kv_heads);
  require_divides(ranks, spec.intermediate_size, "the MLP width (intermediate_size)");
  LlamaShard s;
  s.spec = spec;
  s.spec.num_heads /= ranks;
  s.spec.num_kv_heads /= kv_parts;
  s.spec.intermediate_size /= ranks;
  s.weights = weights;  // norms, embedding: whole (views share the loaded storage)
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    const std::string p = cat("model.layers.", l, ".");
    for (const char* m : {"self_attn.q_proj.", "self_attn.k_proj.", "self_attn.v_proj."}) {
      const bool q = m[10] == 'q';
      const int part = q ? rank : kv_part, parts = q ? ranks : kv_parts;
      s.weights[p + m + "weight"] = rows(find(weights, p + m + "weight"), part, parts);
      if (spec.attention_bias) s.weights[p + m + "bias"] = rows(find(weights, p + m + "bias"), part, parts);
    }
    s.weights[p + "self_attn.o_proj.weight"] = columns(p + "self_attn.o_proj.weight", find(weights, p + "self_attn.o_proj.weight"), rank, ranks);
    for (const char* m : {"mlp.gate_proj.weight", "mlp.up_proj.weight"}) s.weights[p + m] = rows(find(weights, p + m), rank, ranks);
    s.weights[p + "mlp.down_proj.weight"] = columns(p + "mlp.down_proj.weight", find(weights, p + "mlp.down_proj.weight"), rank, ranks);
  }
  s.vocab_parallel = ranks > 1 && spec.vocab_size % ranks == 0;
  if (s.vocab_parallel) {
    s.weights["lm_head.weight"] = rows(find(weights, spec.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"), rank, ranks);
    s.spec.tie_word_embeddings = false;
  }
  return s;
}

LlamaParallel::LlamaParallel(int64_t tp, int64_t pp) : tp_(tp), pp_(pp) {
  if (tp < 1 || pp < 1) throw Error(ErrorKind::invalid_argument, cat("tensor- and pipeline-parallel sizes must be positive, got ", tp, " and ", pp));
  if (tp == 1 && pp == 1) return;
  dist::Rendezvous rv = dist::Rendezvous::from_env();
  comm_ = dist::connect(rv);
  if (comm_->size() != tp * pp)
    throw Error(ErrorKind::invalid_argument, cat("tensor parallel ", tp, " × pipeline parallel ", pp, " needs a job of ", tp * pp, " ranks; this one has ",
                                                 comm_->size(), " (rlx launch -n ", tp * pp, ")"));
  tp_rank_ = comm_->rank() % static_cast<int>(tp);
  stage_ = comm_->rank() / static_cast<int>(tp);
  dist::Communicator* group = comm_.get();
  if (tp > 1 && pp > 1) {  // each stage's tensor-parallel ranks reduce among themselves
    tp_comm_ = comm_->split(stage_, tp_rank_);
    group = tp_comm_.get();
  }
  if (tp > 1) lent_.emplace(*group);
}

void LlamaParallel::prepare(const LlamaSpec& spec, const LlamaWeights& weights, LlamaRunnerOptions& ro) {
  spec_ = &spec;
  weights_ = &weights;
  first_layer_ = 0;
  end_layer_ = spec.num_layers;
  if (tp_ > 1) {
    shard_ = shard_llama_tensor_parallel(spec, weights, tp_rank_, static_cast<int>(tp_));
    ro.tensor_parallel = tp_;
    ro.vocab_parallel_head = shard_->vocab_parallel;
  }
  if (pp_ > 1) {  // contiguous layers, the first num_layers mod pp stages one more (as --dry-run plans)
    const int64_t L = spec.num_layers;
    if (pp_ > L) throw Error(ErrorKind::invalid_argument, cat(pp_, " pipeline stages for ", L, " layers"));
    LlamaPipeline& p = ro.pipeline;
    p.comm = comm_.get();
    p.stage = stage_;
    p.stages = static_cast<int>(pp_);
    p.first_layer = 0;
    for (int s = 0; s < stage_; ++s) p.first_layer += L / pp_ + (s < L % pp_ ? 1 : 0);
    p.end_layer = p.first_layer + L / pp_ + (stage_ < L % pp_ ? 1 : 0);
    first_layer_ = p.first_layer;
    end_layer_ = p.end_layer;
    p.prev = comm_->rank() - static_cast<int>(tp_);
    p.next = comm_->rank() + static_cast<int>(tp_);
    p.root = static_cast<int>((pp_ - 1) * tp_);
  }
}

std::string LlamaParallel::placement() const {
  if (!spec_) return "";
  const LlamaSpec& full = *spec_;
  if (tp_ == 1 && pp_ == 1) return cat("one process: layers 0–", full.num_layers - 1, ", the embedding and the head");
  std::string out = cat("rank ", comm_ ? comm_->rank() : 0, ": ");
  out += cat("stage ", stage_, " of ", pp_, " — layers ", first_layer_, "–", end_layer_ - 1);
  if (stage_ == 0) out += ", the embedding";
  if (stage_ == pp_ - 1) out += ", the final norm and the head";
  if (tp_ > 1 && shard_) {
    const LlamaSpec& part = shard_->spec;
    const int64_t q0 = tp_rank_ * part.num_heads, kv_parts = full.num_kv_heads / part.num_kv_heads;
    const int64_t kv_part = kv_parts == tp_ ? tp_rank_ : tp_rank_ / (tp_ / kv_parts), kv0 = kv_part * part.num_kv_heads;
    const int64_t f0 = tp_rank_ * part.intermediate_size;
    out += cat("; tensor shard ", tp_rank_, " of ", tp_, " — query heads ", q0, "–", q0 + part.num_heads - 1, " of ", full.num_heads, ", KV heads ", kv0, "–",
               kv0 + part.num_kv_heads - 1, " of ", full.num_kv_heads, kv_parts < tp_ ? " (a copy: fewer KV heads than ranks)" : "", ", MLP rows ", f0, "–",
               f0 + part.intermediate_size - 1, " of ", full.intermediate_size);
    if (stage_ == pp_ - 1) {
      const int64_t v = full.vocab_size / tp_;
      out += shard_->vocab_parallel ? cat(", vocabulary rows ", tp_rank_ * v, "–", (tp_rank_ + 1) * v - 1, " of ", full.vocab_size) : std::string(", the whole head");
    }
  }
  return out;
}

}  // namespace rlx::models
