#include "models/qwen3.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "ops/builder.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

using ir::Attrs;
using ir::Op;
using ir::ValueId;

namespace {

// Added to the scores of keys a query may not see. Finite, so a row never becomes NaN, and
// far enough below any score that exp() of it is exactly 0.
constexpr double kMaskedScore = -1e30;

[[noreturn]] void bad_spec(const std::string& what) { throw Error(ErrorKind::invalid_argument, cat("llama spec: ", what)); }

// bias[rows, 1, queries, L]: 0 where key c ≤ the query's position (and, for a sliding layer's
// mask, inside the window), kMaskedScore elsewhere (later keys and a cache's unused tail).
// pos: i64 positions reshaped [rows, queries].
ValueId window_mask(ops::Builder& b, const LlamaSpec& spec, ValueId pos, const Dim& rows, const Dim& queries, const Dim& L, bool sliding) {
  b.set_context("attention_mask", "");
  ValueId keys = b.reshape(b.iota({Dim(1), L}, DType::i64, 1), {Dim(1), Dim(1), L});
  ValueId query = b.reshape(pos, {rows, queries, Dim(1)});
  ValueId allowed = b.binary(Op::le, keys, query);
  if (sliding && spec.sliding_window) {
    ValueId oldest = b.sub(query, b.scalar(DType::i64, static_cast<double>(*spec.sliding_window)));
    allowed = b.binary(Op::logical_and, allowed, b.binary(Op::gt, keys, oldest));
  }
  ValueId bias = b.select(allowed, b.scalar(DType::f32, 0.0), b.scalar(DType::f32, kMaskedScore));
  return b.reshape(bias, {rows, Dim(1), queries, L});
}

class LlamaEmitter {
 public:
  LlamaEmitter(ir::Graph& g, const LlamaSpec& spec, const LlamaWeights& w, const LlamaGraphOptions& o)
      : b_(g), spec_(spec), w_(w), opt_(o) {}

  ops::Builder& builder() { return b_; }
  const LlamaGraphOptions& options() const { return opt_; }

  const LlamaWeight& weight(const std::string& name, const std::vector<int64_t>& shape) {
    auto it = w_.find(name);
    if (it == w_.end()) throw Error(ErrorKind::invalid_argument, cat("llama graph: weight '", name, "' was not provided"));
    if (it->second.shape != shape)
      throw Error(ErrorKind::invalid_argument, cat("llama graph: weight '", name, "' is [", join(it->second.shape, ","), "], expected [",
                                                   join(shape, ","), "]"));
    return it->second;
  }

  // Norm weights and biases: dense f32.
  ValueId vector(const std::string& name, int64_t n) {
    const LlamaWeight& w = weight(name, {n});
    if (w.is_packed() || w.dense.dtype() != DType::f32)
      throw Error(ErrorKind::invalid_argument, cat("llama graph: '", name, "' must be a dense f32 vector"));
    return b_.constant(w.dense);
  }

  // x[..., k] · Wᵀ for W[n, k] however it is stored.
  ValueId matmul(ValueId x, const std::string& name, int64_t n, int64_t k) {
    const LlamaWeight& w = weight(name, {n, k});
    if (opt_.matmul_input_stats) {  // Σ over x's rows of x², by column (an importance matrix's sums)
      const auto rank = static_cast<int64_t>(b_.graph().type(x).shape.size());
      ir::Ints rows;
      for (int64_t a = 0; a + 1 < rank; ++a) rows.push_back(a);
      ValueId x32 = b_.cast(x, DType::f32);
      stats_.push_back({name, b_.reduce(b_.mul(x32, x32), "sum", rows, false)});
    }
    if (w.is_packed()) return dequant_matmul(x, w.packed, w.type, n, k);
    DType d = w.dense.dtype();
    if (d == DType::f32) return b_.emit1(Op::linear, {x, b_.constant(w.dense)});
    if (d != DType::bf16 && d != DType::f16)
      throw Error(ErrorKind::invalid_argument, cat("llama graph: '", name, "' is ", dtype_name(d), "; expected f32, bf16 or f16"));
    if (d == DType::bf16 && opt_.half_matmul == "gemm") {
      int64_t r = static_cast<int64_t>(b_.rank(x));
      return b_.emit1(Op::dot_general, {b_.cast(x, DType::bf16), b_.constant(w.dense)},
                      Attrs{{"batch", ir::Intss{{}, {}}}, {"contract", ir::Intss{{r - 1}, {1}}}, {"out", DType::f32}});
    }
    // The half-precision bytes as packed rows of one-element blocks.
    Tensor c = w.dense.contiguous();
    Tensor bytes = Tensor::wrap(DType::u8, {n, 2 * k}, c.data(), std::make_shared<Tensor>(c));
    return dequant_matmul(x, bytes, d == DType::bf16 ? quant::BlockType::bf16 : quant::BlockType::f16, n, k);
  }

  ValueId dequant_matmul(ValueId x, const Tensor& packed, quant::BlockType t, int64_t n, int64_t k) {
    Attrs a{{"type", std::string(quant::block_type_name(t))}, {"n", n}, {"k", k}};
    if (opt_.bf16_activations) {
      a.set("out", DType::f32);
      x = b_.cast(x, DType::bf16);
    } else if (opt_.q8_activations && t != quant::BlockType::f16 && t != quant::BlockType::bf16 && k % 32 == 0 &&
               (t != quant::BlockType::q8_0 || opt_.q8_activations_q8_0)) {
      a.set("act", std::string("q8"));
    }
    return b_.emit1(Op::dequant_matmul, {x, b_.constant(packed)}, a);
  }

  ValueId rms_norm(ValueId x, const std::string& name, int64_t n) {
    return b_.emit1(Op::rms_norm, {x, vector(name, n)}, Attrs{{"eps", spec_.rms_norm_eps}});
  }

  // ids[B, S] → f32[B, S, H]
  ValueId embed(ValueId ids, const Dim& B, const Dim& S) {
    b_.set_context("embed_tokens", "");
    const int64_t H = spec_.hidden_size;
    const LlamaWeight& w = weight("model.embed_tokens.weight", {spec_.vocab_size, H});
    ValueId x;
    if (w.is_packed()) {
      ValueId rows = b_.gather(b_.constant(w.packed), ids, 0);  // u8[B, S, row bytes]
      x = b_.emit1(Op::dequantize, {rows}, Attrs{{"type", std::string(quant::block_type_name(w.type))}, {"shape", Shape{B, S, Dim(H)}}});
    } else {
      x = b_.cast(b_.emit1(Op::embedding, {b_.constant(w.dense), ids}), DType::f32);
    }
    // Gemma: × √hidden as an f32 (transformers' normalizer in the hidden dtype)
    return spec_.embed_scale != 0 ? b_.mul(x, b_.scalar(DType::f32, spec_.embed_scale)) : x;
  }

  // Rotary embedding of x[B, H, S, D] at positions[S]; `local`: a sliding layer's, with its
  // own base where the model has one.
  ValueId rope(ValueId x, ValueId pos, bool local) {
    if (local && spec_.rope_local_theta)
      return b_.emit1(Op::rope, {x, pos}, Attrs{{"theta", *spec_.rope_local_theta}, {"interleaved", spec_.rope_interleaved}});
    if (spec_.rope_inv_freq.empty())
      return b_.emit1(Op::rope, {x, pos}, Attrs{{"theta", spec_.rope_theta}, {"interleaved", spec_.rope_interleaved}});
    // Scaled RoPE: the rope op's arithmetic with the given frequencies.
    int64_t D = spec_.head_dim, half = D / 2;
    Shape xs = b_.shape(x);
    ValueId inv = b_.constant(Tensor::from_vector(spec_.rope_inv_freq, {half}));
    if (!spec_.rope_long_inv_freq.empty()) {  // LongRoPE: this step's frequencies ([1 or S, half])
      if (long_rope_ == ir::kNoValue) throw Error(ErrorKind::internal, "llama graph: LongRoPE without the step's switch");
      inv = b_.select(long_rope_, b_.constant(Tensor::from_vector(spec_.rope_long_inv_freq, {half})), inv);
    }
    ValueId ang = b_.mul(b_.reshape(b_.cast(pos, DType::f32), {xs[2], Dim(1)}), inv);  // [S, half]
    auto scaled = [&](ValueId v) { return spec_.rope_attention_factor == 1.0 ? v : b_.mul(v, b_.scalar(DType::f32, spec_.rope_attention_factor)); };
    if (!spec_.rope_interleaved) {
      ValueId emb = b_.concat({ang, ang}, -1);
      ValueId c = scaled(b_.unary(Op::cos, emb)), s = scaled(b_.unary(Op::sin, emb));
      ValueId x1 = b_.slice_axis(x, 3, Dim(0), Dim(half)), x2 = b_.slice_axis(x, 3, Dim(half), Dim(D));
      return b_.add(b_.mul(x, c), b_.mul(b_.concat({b_.unary(Op::neg, x2), x1}, -1), s));
    }
    ValueId xp = b_.reshape(x, {xs[0], xs[1], xs[2], Dim(half), Dim(2)});
    ValueId x0 = b_.slice_axis(xp, 4, Dim(0), Dim(1)), x1 = b_.slice_axis(xp, 4, Dim(1), Dim(2));
    ValueId a = b_.reshape(ang, {xs[2], Dim(half), Dim(1)});
    ValueId c = scaled(b_.unary(Op::cos, a)), s = scaled(b_.unary(Op::sin, a));
    ValueId o0 = b_.sub(b_.mul(x0, c), b_.mul(x1, s)), o1 = b_.add(b_.mul(x1, c), b_.mul(x0, s));
    return b_.reshape(b_.concat({o0, o1}, -1), xs);
  }

  // LongRoPE's switch: `step_pos` i64[N] is the last position of each row's forward step (N = 1
  // for one sequence, or one per row); rows whose step ends at or past rope_long_after take the
  // long frequencies.
  void set_long_rope(ValueId step_pos) {
    if (spec_.rope_long_inv_freq.empty()) return;
    Dim n = b_.shape(step_pos)[0];
    ValueId last = b_.scalar(DType::i64, static_cast<double>(spec_.rope_long_after));
    long_rope_ = b_.reshape(b_.binary(Op::ge, step_pos, last), {n, Dim(1)});
  }

  struct Cache {
    ValueId k, v;
  };

  // One layer's queries, keys and values for x[B, S, H]: [B, S, heads, D] each, q and k normed
  // where the model has QK-norm, before RoPE.
  struct Qkv {
    ValueId q, k, v;
  };
  Qkv project(int64_t l, ValueId x, const Dim& B, const Dim& S) {
    const std::string p = cat("model.layers.", l, ".");
    const int64_t H = spec_.hidden_size, D = spec_.head_dim, Hq = spec_.num_heads, Hkv = spec_.num_kv_heads;
    b_.set_context(p + "self_attn", "");
    ValueId h = rms_norm(x, p + "input_layernorm.weight", H);
    ValueId q = matmul(h, p + "self_attn.q_proj.weight", Hq * D, H);
    ValueId k = matmul(h, p + "self_attn.k_proj.weight", Hkv * D, H);
    ValueId v = matmul(h, p + "self_attn.v_proj.weight", Hkv * D, H);
    if (spec_.attention_bias) {
      q = b_.add(q, vector(p + "self_attn.q_proj.bias", Hq * D));
      k = b_.add(k, vector(p + "self_attn.k_proj.bias", Hkv * D));
      v = b_.add(v, vector(p + "self_attn.v_proj.bias", Hkv * D));
    }
    q = b_.reshape(q, {B, S, Dim(Hq), Dim(D)});
    k = b_.reshape(k, {B, S, Dim(Hkv), Dim(D)});
    v = b_.reshape(v, {B, S, Dim(Hkv), Dim(D)});
    if (spec_.qk_norm) {
      q = rms_norm(q, p + "self_attn.q_norm.weight", D);
      k = rms_norm(k, p + "self_attn.k_norm.weight", D);
    }
    return {q, k, v};
  }

  // A row-parallel matmul's partial sum, summed over the tensor-parallel ranks.
  ValueId across_ranks(ValueId partial) {
    if (opt_.tensor_parallel == 1) return partial;
    return b_.emit1(Op::all_reduce, {partial}, Attrs{{"op", std::string("sum")}});
  }

  // The rest of a layer after attention a[B, S, heads·D]: output projection, residual, MLP.
  ValueId finish(int64_t l, ValueId x, ValueId a) {
    const std::string p = cat("model.layers.", l, ".");
    const int64_t H = spec_.hidden_size, D = spec_.head_dim, Hq = spec_.num_heads;
    ValueId o = across_ranks(matmul(a, p + "self_attn.o_proj.weight", H, Hq * D));
    if (spec_.sandwich_norms) o = rms_norm(o, p + "post_attention_layernorm.weight", H);
    x = b_.add(x, o);
    b_.set_context(p + "mlp", "");
    ValueId h = rms_norm(x, p + (spec_.sandwich_norms ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight"), H);
    const int64_t F = spec_.intermediate_size;
    ValueId m;
    if (layer_is_moe(spec_, l)) {
      m = experts(p, h);
    } else {
      ValueId gate = b_.emit1(spec_.mlp_act == "gelu_tanh" ? Op::gelu_tanh : Op::silu, {matmul(h, p + "mlp.gate_proj.weight", F, H)});
      ValueId up = matmul(h, p + "mlp.up_proj.weight", F, H);
      m = across_ranks(matmul(b_.mul(gate, up), p + "mlp.down_proj.weight", H, F));
    }
    if (spec_.sandwich_norms) m = rms_norm(m, p + "post_feedforward_layernorm.weight", H);
    return b_.add(x, m);
  }

  // A sparse MoE MLP of h[B, S, H]: the router's softmax over the experts, each token's top k
  // (renormalized if asked), the chosen experts' SwiGLU as grouped products (expert_matmul),
  // their outputs weighted by the probabilities and summed.
  ValueId experts(const std::string& p, ValueId h) {
    const int64_t H = spec_.hidden_size, E = spec_.num_experts, K = spec_.experts_per_token, F = spec_.expert_intermediate_size;
    Shape hs = b_.shape(h);
    Dim T = hs[0] * hs[1];
    ValueId x = b_.reshape(h, {T, Dim(H)});
    b_.set_context(p + "mlp.gate", "");
    ValueId probs = b_.emit1(Op::softmax, {matmul(x, p + "mlp.gate.weight", E, H)}, Attrs{{"axis", int64_t{-1}}});
    std::vector<ValueId> top = b_.emit(Op::topk, {probs}, Attrs{{"k", K}, {"axis", int64_t{-1}}});
    ValueId w = top[0], idx = top[1];  // [T, K]
    if (spec_.norm_topk_prob) w = b_.div(w, b_.reduce(w, "sum", {1}, true));
    b_.set_context(p + "mlp.experts", "");
    ValueId gate = b_.emit1(Op::silu, {expert_matmul(x, idx, p + "mlp.experts.gate_proj.weight", F, H)});
    ValueId up = expert_matmul(x, idx, p + "mlp.experts.up_proj.weight", F, H);
    ValueId down = expert_matmul(b_.mul(gate, up), idx, p + "mlp.experts.down_proj.weight", H, F);  // [T, K, H]
    ValueId y = b_.reduce(b_.mul(down, b_.reshape(w, {T, Dim(K), Dim(1)})), "sum", {1}, false);
    return b_.reshape(y, hs);
  }

  // x[T, k] or x[T, K, k] times the chosen experts' W[n, k] however the stack is stored.
  ValueId expert_matmul(ValueId x, ValueId idx, const std::string& name, int64_t n, int64_t k) {
    const LlamaWeight& w = weight(name, {spec_.num_experts, n, k});
    Attrs a{{"n", n}, {"k", k}};
    Tensor stack;
    if (w.is_packed()) {
      a.set("type", std::string(quant::block_type_name(w.type)));
      stack = w.packed;
      // 8-bit x for integer dot products, by the same rule as dequant_matmul's
      if (opt_.q8_activations && w.type != quant::BlockType::f16 && w.type != quant::BlockType::bf16 && k % 32 == 0 &&
          (w.type != quant::BlockType::q8_0 || opt_.q8_activations_q8_0))
        a.set("act", std::string("q8"));
    } else if (w.dense.dtype() == DType::f32) {
      stack = w.dense;
    } else if (w.dense.dtype() == DType::bf16 || w.dense.dtype() == DType::f16) {
      // the half-precision bytes as rows of one-element blocks
      Tensor c = w.dense.contiguous();
      a.set("type", std::string(w.dense.dtype() == DType::bf16 ? "bf16" : "f16"));
      stack = Tensor::wrap(DType::u8, {spec_.num_experts, n, 2 * k}, c.data(), std::make_shared<Tensor>(c));
    } else {
      throw Error(ErrorKind::invalid_argument, cat("llama graph: '", name, "' is ", dtype_name(w.dense.dtype()), "; expected f32, bf16 or f16"));
    }
    // prefill graphs with bf16 activations: packed experts multiply bf16 rows (bf16 GEMMs)
    if (opt_.bf16_activations && a.has("type") && !a.has("act")) x = b_.cast(x, DType::bf16);
    return b_.emit1(Op::expert_matmul, {x, idx, b_.constant(stack)}, a);
  }

  // The attention op's attributes for this model.
  Attrs attention_attrs() const {
    Attrs a{{"mask", std::string("additive")}};
    if (spec_.attn_scale != 0) a.set("scale", spec_.attn_scale);
    if (spec_.attn_softcap != 0) a.set("softcap", spec_.attn_softcap);
    return a;
  }

  // One layer over sequences that own rows of a slot cache f32[slots·C, Hkv, D] (bshd, the slot
  // and position axes merged so the scatter writes the donated input in place): row r
  // of x[B, S, H] belongs to sequence slot_of[r] (i64[B·S]) at position pos_of[r] (i64[B·S]); its
  // key and value are written at cache row slot·C + position, and it attends to `keys`/`values`
  // of its slot as `view` picks them from the updated cache, under `bias` (additive).
  struct SlotCache {
    ValueId k, v;
  };
  ValueId slot_layer(int64_t l, ValueId x, ValueId rope_pos, ValueId rows, ValueId bias, SlotCache& cache, const Dim& B, const Dim& S,
                     const std::function<ValueId(ValueId)>& view) {
    const int64_t D = spec_.head_dim, Hq = spec_.num_heads, Hkv = spec_.num_kv_heads;
    Qkv t = project(l, x, B, S);
    const bool local = layer_slides(spec_, l);
    // RoPE over the rows as one sequence [1, heads, B·S, D] at their own positions
    auto rotate = [&](ValueId y, int64_t heads) {
      ValueId flat = b_.transpose(b_.reshape(y, {Dim(1), B * S, Dim(heads), Dim(D)}), {0, 2, 1, 3});
      return b_.reshape(b_.transpose(rope(flat, rope_pos, local), {0, 2, 1, 3}), {B, S, Dim(heads), Dim(D)});
    };
    ValueId q = rotate(t.q, Hq), k = rotate(t.k, Hkv);
    auto write = [&](ValueId c, ValueId y) {
      return b_.emit1(Op::scatter, {c, rows, b_.reshape(y, {B * S, Dim(Hkv), Dim(D)})}, Attrs{{"axis", int64_t{0}}});
    };
    cache.k = write(cache.k, k);
    cache.v = write(cache.v, t.v);
    Attrs attn = attention_attrs();
    attn.set("layout", std::string("bshd"));
    ValueId a = b_.emit1(Op::attention, {q, view(cache.k), view(cache.v), bias}, attn);
    return finish(l, x, b_.reshape(a, {B, S, Dim(Hq * D)}));
  }

  // One decoder layer; returns the new residual stream and the updated caches.
  ValueId layer(int64_t l, ValueId x, ValueId pos, ValueId bias, Cache& cache, const Dim& B, const Dim& S) {
    const int64_t D = spec_.head_dim, Hq = spec_.num_heads;
    Qkv t = project(l, x, B, S);
    const bool local = layer_slides(spec_, l);
    ValueId q = rope(b_.transpose(t.q, {0, 2, 1, 3}), pos, local);
    ValueId k = rope(b_.transpose(t.k, {0, 2, 1, 3}), pos, local);
    ValueId v = b_.transpose(t.v, {0, 2, 1, 3});
    // The new rows go into the cache at their positions; attention reads the whole cache.
    cache.k = b_.emit1(Op::scatter, {cache.k, pos, k}, Attrs{{"axis", int64_t{2}}});
    cache.v = b_.emit1(Op::scatter, {cache.v, pos, v}, Attrs{{"axis", int64_t{2}}});
    Attrs attn = attention_attrs();
    if (opt_.bf16_activations) attn.set("compute", DType::bf16);  // both products on AMX, like the matmuls
    ValueId a = b_.emit1(Op::attention, {q, cache.k, cache.v, bias}, attn);
    return finish(l, x, b_.reshape(b_.transpose(a, {0, 2, 1, 3}), {B, S, Dim(Hq * D)}));
  }

 private:
  ops::Builder b_;
  const LlamaSpec& spec_;
  const LlamaWeights& w_;
  const LlamaGraphOptions& opt_;
  ValueId long_rope_ = ir::kNoValue;
  std::vector<std::pair<std::string, ValueId>> stats_;  // matmul_input_stats

 public:
  const std::vector<std::pair<std::string, ValueId>>& stats() const { return stats_; }
};

// The two attention masks a model may need — global (causal) and sliding-window — each built
// once, only if some layer uses it.
class LayerMasks {
 public:
  LayerMasks(const LlamaSpec& spec, const std::function<ValueId(bool sliding)>& make) : spec_(spec) {
    for (int64_t l = 0; l < spec.num_layers; ++l) {
      bool s = layer_slides(spec, l);
      if (!(s ? sliding_ : global_)) (s ? sliding_ : global_) = make(s);
    }
  }
  ValueId of(int64_t l) const { return *(layer_slides(spec_, l) ? sliding_ : global_); }

 private:
  const LlamaSpec& spec_;
  std::optional<ValueId> global_, sliding_;
};

// The head of a graph: the residual stream's rows h[N, H] → logits f32[N, vocab] (soft-capped
// where the model caps them).
ValueId lm_head(LlamaEmitter& e, const LlamaSpec& spec, ValueId h) {
  ops::Builder& b = e.builder();
  b.set_context("lm_head", "");
  h = e.rms_norm(h, "model.norm.weight", spec.hidden_size);
  const LlamaGraphOptions& o = e.options();
  ValueId logits;
  if (o.tensor_parallel > 1 && o.vocab_parallel_head) {  // this rank's vocabulary rows, then every rank's
    logits = e.matmul(h, "lm_head.weight", spec.vocab_size / o.tensor_parallel, spec.hidden_size);
    logits = b.emit1(Op::all_gather, {logits}, Attrs{{"axis", int64_t{-1}}, {"ranks", o.tensor_parallel}});
  } else {
    logits = e.matmul(h, spec.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight", spec.vocab_size, spec.hidden_size);
  }
  if (spec.final_softcap == 0) return logits;
  ValueId cap = b.scalar(DType::f32, spec.final_softcap);
  return b.mul(b.unary(Op::tanh, b.div(logits, cap)), cap);
}

}  // namespace

int64_t LlamaWeight::bytes() const {
  if (is_packed()) return packed.numel();
  return static_cast<int64_t>(dense.nbytes());
}

void validate_llama_spec(const LlamaSpec& s) {
  static const char* const kArchs[] = {"qwen3", "qwen3moe", "qwen2", "llama", "phi3", "gemma", "gemma2", "gemma3"};
  if (std::find(std::begin(kArchs), std::end(kArchs), s.arch) == std::end(kArchs))
    bad_spec(cat("unknown architecture '", s.arch, "' (qwen3, qwen3moe, qwen2, llama, phi3, gemma, gemma2 and gemma3 are known)"));
  for (auto [name, v] : {std::pair{"vocab_size", s.vocab_size}, {"hidden_size", s.hidden_size}, {"intermediate_size", s.intermediate_size},
                         {"num_layers", s.num_layers}, {"num_heads", s.num_heads}, {"num_kv_heads", s.num_kv_heads}, {"head_dim", s.head_dim}})
    if (v <= 0) bad_spec(cat(name, " must be positive, got ", v));
  if (s.num_heads % s.num_kv_heads) bad_spec(cat(s.num_heads, " heads are not a multiple of ", s.num_kv_heads, " key/value heads"));
  if (s.head_dim % 2) bad_spec(cat("head_dim ", s.head_dim, " must be even for RoPE"));
  if (!s.rope_inv_freq.empty() && static_cast<int64_t>(s.rope_inv_freq.size()) != s.head_dim / 2)
    bad_spec(cat("rope_inv_freq has ", s.rope_inv_freq.size(), " frequencies, expected head_dim/2 = ", s.head_dim / 2));
  if (!s.rope_long_inv_freq.empty() &&
      (static_cast<int64_t>(s.rope_long_inv_freq.size()) != s.head_dim / 2 || s.rope_inv_freq.empty() || s.rope_long_after <= 0))
    bad_spec(cat("LongRoPE needs head_dim/2 = ", s.head_dim / 2, " short and long frequencies and a positive switch position"));
  if (!(s.rope_attention_factor > 0) || !std::isfinite(s.rope_attention_factor)) bad_spec("rope_attention_factor must be positive");
  if (!(s.rope_theta > 0)) bad_spec("rope_theta must be positive");
  if (!(s.rms_norm_eps >= 0)) bad_spec("rms_norm_eps must not be negative");
  if (s.sliding_window && *s.sliding_window <= 0) bad_spec("sliding_window must be positive");
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    bad_spec(cat("sliding_layers names ", s.sliding_layers.size(), " layers, the model has ", s.num_layers));
  if (s.rope_local_theta && !(*s.rope_local_theta > 0)) bad_spec("rope_local_theta must be positive");
  if (s.mlp_act != "silu" && s.mlp_act != "gelu_tanh") bad_spec(cat("mlp_act '", s.mlp_act, "' is not silu or gelu_tanh"));
  for (auto [name, v] : {std::pair{"embed_scale", s.embed_scale}, {"attn_scale", s.attn_scale}, {"attn_softcap", s.attn_softcap},
                         {"final_softcap", s.final_softcap}})
    if (!(v >= 0) || !std::isfinite(v)) bad_spec(cat(name, " must be finite and not negative, got ", v));
  if (s.num_experts < 0) bad_spec("num_experts must not be negative");
  if (s.num_experts > 0) {
    if (s.experts_per_token <= 0 || s.experts_per_token > s.num_experts)
      bad_spec(cat("experts_per_token ", s.experts_per_token, " must be in [1, num_experts = ", s.num_experts, "]"));
    if (s.expert_intermediate_size <= 0) bad_spec("expert_intermediate_size must be positive");
    if (!s.moe_layers.empty() && static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
      bad_spec(cat("moe_layers names ", s.moe_layers.size(), " layers, the model has ", s.num_layers));
  }
}

bool layer_is_moe(const LlamaSpec& s, int64_t l) {
  if (s.num_experts == 0) return false;
  return s.moe_layers.empty() || s.moe_layers[static_cast<size_t>(l)];
}

bool is_gemma(const LlamaSpec& s) { return s.arch == "gemma" || s.arch == "gemma2" || s.arch == "gemma3"; }

bool layer_slides(const LlamaSpec& s, int64_t l) {
  if (!s.sliding_window) return false;
  return s.sliding_layers.empty() || s.sliding_layers[static_cast<size_t>(l)];
}

LlamaSpec qwen3_0_6b_spec() {
  LlamaSpec s;
  s.arch = "qwen3";
  s.vocab_size = 151936;
  s.hidden_size = 1024;
  s.intermediate_size = 3072;
  s.num_layers = 28;
  s.num_heads = 16;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.max_position_embeddings = 40960;
  s.rms_norm_eps = 1e-6;
  s.rope_theta = 1000000.0;
  s.tie_word_embeddings = true;
  s.qk_norm = true;
  s.bos_token_id = 151643;
  s.eos_token_ids = {151645, 151643};
  return s;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> llama_weight_shapes(const LlamaSpec& s) {
  const int64_t H = s.hidden_size, D = s.head_dim, F = s.intermediate_size;
  const int64_t q = s.num_heads * D, kv = s.num_kv_heads * D;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out = {{"model.embed_tokens.weight", {s.vocab_size, H}}};
  for (int64_t l = 0; l < s.num_layers; ++l) {
    std::string p = cat("model.layers.", l, ".");
    out.push_back({p + "input_layernorm.weight", {H}});
    out.push_back({p + "self_attn.q_proj.weight", {q, H}});
    out.push_back({p + "self_attn.k_proj.weight", {kv, H}});
    out.push_back({p + "self_attn.v_proj.weight", {kv, H}});
    if (s.attention_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q}});
      out.push_back({p + "self_attn.k_proj.bias", {kv}});
      out.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    if (s.qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", {D}});
      out.push_back({p + "self_attn.k_norm.weight", {D}});
    }
    out.push_back({p + "self_attn.o_proj.weight", {H, q}});
    out.push_back({p + "post_attention_layernorm.weight", {H}});
    if (s.sandwich_norms) {
      out.push_back({p + "pre_feedforward_layernorm.weight", {H}});
      out.push_back({p + "post_feedforward_layernorm.weight", {H}});
    }
    if (layer_is_moe(s, l)) {
      const int64_t E = s.num_experts, Fe = s.expert_intermediate_size;
      out.push_back({p + "mlp.gate.weight", {E, H}});
      out.push_back({p + "mlp.experts.gate_proj.weight", {E, Fe, H}});
      out.push_back({p + "mlp.experts.up_proj.weight", {E, Fe, H}});
      out.push_back({p + "mlp.experts.down_proj.weight", {E, H, Fe}});
      continue;
    }
    out.push_back({p + "mlp.gate_proj.weight", {F, H}});
    out.push_back({p + "mlp.up_proj.weight", {F, H}});
    out.push_back({p + "mlp.down_proj.weight", {H, F}});
  }
  out.push_back({"model.norm.weight", {H}});
  if (!s.tie_word_embeddings) out.push_back({"lm_head.weight", {s.vocab_size, H}});
  return out;
}

ir::Graph build_llama_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options) {
  validate_llama_spec(spec);
  if (options.half_matmul != "gemm" && options.half_matmul != "packed")
    throw Error(ErrorKind::invalid_argument, cat("llama graph: half_matmul must be gemm or packed, got '", options.half_matmul, "'"));
  const int64_t first = options.first_layer, end = options.end_layer < 0 ? spec.num_layers : options.end_layer;
  if (first < 0 || first > end || end > spec.num_layers)
    throw Error(ErrorKind::invalid_argument, cat("llama graph: layers [", first, ", ", end, ") are not within the model's ", spec.num_layers));
  ir::Graph g;
  g.name = spec.arch;
  Dim B = Dim::symbol("B"), C = Dim::symbol("C");
  Dim S = options.fixed_seq ? Dim(*options.fixed_seq) : Dim::symbol("S");
  const Dim Hkv(spec.num_kv_heads), D(spec.head_dim), H(spec.hidden_size);
  ValueId ids = options.hidden_input ? g.add_input({DType::f32, {B, S, H}}, "hidden") : g.add_input({DType::i64, {B, S}}, "input_ids");
  ValueId pos = g.add_input({DType::i64, {S}}, "positions");
  ValueId last = g.add_input({DType::i64, {Dim(1)}}, "last_index");
  std::vector<LlamaEmitter::Cache> caches(static_cast<size_t>(end - first));
  for (int64_t l = first; l < end; ++l) {
    caches[static_cast<size_t>(l - first)].k = g.add_input({DType::f32, {B, Hkv, C, D}}, cat("k_cache.", l));
    caches[static_cast<size_t>(l - first)].v = g.add_input({DType::f32, {B, Hkv, C, D}}, cat("v_cache.", l));
  }
  LlamaEmitter e(g, spec, weights, options);
  ops::Builder& b = e.builder();
  ValueId x = options.hidden_input ? ids : e.embed(ids, B, S);
  e.set_long_rope(b.gather(pos, last, 0));  // the step's last real row (rows past it are padding)
  LayerMasks masks(spec, [&](bool sliding) { return window_mask(b, spec, pos, Dim(1), S, C, sliding); });
  for (int64_t l = first; l < end; ++l) x = e.layer(l, x, pos, masks.of(l), caches[static_cast<size_t>(l - first)], B, S);
  // the matmuls' input statistics so far: the LM head's input is one row, not the text's
  const std::vector<std::pair<std::string, ValueId>> stats = e.stats();
  ValueId head;
  if (options.hidden_output) {  // a pipeline stage before the last: every row goes on
    head = x;
    g.value(head).name = "hidden_out";
  } else {  // only the row that predicts the next token reaches the norm and the LM head
    head = lm_head(e, spec, b.reshape(b.gather(x, last, 1), {B, H}));
    g.value(head).name = "logits";
  }
  std::vector<ValueId> outs = {head};
  for (int64_t l = first; l < end; ++l) {
    const auto& c = caches[static_cast<size_t>(l - first)];
    g.value(c.k).name = cat("k_cache_out.", l);
    g.value(c.v).name = cat("v_cache_out.", l);
    outs.push_back(c.k);
    outs.push_back(c.v);
  }
  size_t donated = outs.size();
  if (options.next_token_output && !options.hidden_output) {
    ValueId next = b.reduce(head, "argmax", {1}, false);
    g.value(next).name = "next_token";
    outs.push_back(next);
  }
  for (const auto& [name, v] : stats) {
    g.value(v).name = "sq:" + name;
    outs.push_back(v);
  }
  g.set_outputs(outs);
  for (size_t i = 1; i < donated; ++i) g.donations.push_back({static_cast<int32_t>(i), static_cast<int32_t>(i + 2)});
  return g;
}

namespace {

struct SlotInputs {
  std::vector<LlamaEmitter::SlotCache> caches;
  size_t first_cache_input = 0;
};

SlotInputs add_slot_caches(ir::Graph& g, const LlamaSpec& spec, int64_t slots, int64_t capacity) {
  SlotInputs s;
  s.first_cache_input = g.inputs().size();
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    Shape cs = {Dim(slots * capacity), Dim(spec.num_kv_heads), Dim(spec.head_dim)};
    s.caches.push_back({g.add_input({DType::f32, cs}, cat("k_cache.", l)), g.add_input({DType::f32, cs}, cat("v_cache.", l))});
  }
  return s;
}

// Outputs: logits, then every cache (each donated by its input).
void finish_slot_graph(ir::Graph& g, ValueId logits, const SlotInputs& in) {
  g.value(logits).name = "logits";
  std::vector<ValueId> outs = {logits};
  for (size_t l = 0; l < in.caches.size(); ++l) {
    g.value(in.caches[l].k).name = cat("k_cache_out.", l);
    g.value(in.caches[l].v).name = cat("v_cache_out.", l);
    outs.push_back(in.caches[l].k);
    outs.push_back(in.caches[l].v);
  }
  g.set_outputs(outs);
  for (size_t i = 1; i < outs.size(); ++i) g.donations.push_back({static_cast<int32_t>(i), static_cast<int32_t>(in.first_cache_input + i - 1)});
}

}  // namespace

ir::Graph build_llama_slot_decode_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options, int64_t slots,
                                        int64_t capacity) {
  validate_llama_spec(spec);
  ir::Graph g;
  g.name = spec.arch + "_slots_decode";
  // B, the rows of a pass, is symbolic: a pass runs the first B slots (callers keep live
  // sequences low), so a lone sequence does not pay for the empty slots.
  const Dim B = Dim::symbol("B"), S(1), L = Dim::symbol("L"), C(capacity);
  ValueId ids = g.add_input({DType::i64, {B, S}}, "input_ids");
  ValueId pos = g.add_input({DType::i64, {B}}, "positions");
  g.add_input({DType::i64, {L}}, "kv_window");
  SlotInputs in = add_slot_caches(g, spec, slots, capacity);
  LlamaEmitter e(g, spec, weights, options);
  ops::Builder& b = e.builder();
  const bool full = options.slot_attention_full_cache;
  LayerMasks masks(spec, [&](bool sliding) { return window_mask(b, spec, pos, B, S, full ? C : L, sliding); });
  // slot b's new row lands at cache row b·C + positions[b]
  ValueId rows = b.add(b.mul(b.iota({B}, DType::i64, 0), b.scalar(DType::i64, static_cast<double>(capacity))), pos);
  const Shape by_slot = {Dim(slots), C, Dim(spec.num_kv_heads), Dim(spec.head_dim)};
  // The first B slots are a contiguous view of the cache; their first L positions are a copy.
  auto view = [&](ValueId c) {
    ValueId live = b.slice_axis(b.reshape(c, by_slot), 0, Dim(0), B);
    return full ? live : b.slice_axis(live, 1, Dim(0), L);
  };
  ValueId x = e.embed(ids, B, S);
  e.set_long_rope(pos);  // each row is its own sequence's step
  for (int64_t l = 0; l < spec.num_layers; ++l) x = e.slot_layer(l, x, pos, rows, masks.of(l), in.caches[static_cast<size_t>(l)], B, S, view);
  finish_slot_graph(g, lm_head(e, spec, b.reshape(x, {B, Dim(spec.hidden_size)})), in);
  return g;
}

ir::Graph build_llama_slot_prefill_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options, int64_t slots,
                                         int64_t capacity) {
  validate_llama_spec(spec);
  ir::Graph g;
  g.name = spec.arch + "_slots_prefill";
  const Dim B(1), S = Dim::symbol("S"), L = Dim::symbol("L");
  ValueId ids = g.add_input({DType::i64, {B, S}}, "input_ids");
  ValueId pos = g.add_input({DType::i64, {S}}, "positions");
  ValueId slot = g.add_input({DType::i64, {Dim(1)}}, "slot");
  ValueId last = g.add_input({DType::i64, {Dim(1)}}, "last_index");
  g.add_input({DType::i64, {L}}, "kv_window");
  SlotInputs in = add_slot_caches(g, spec, slots, capacity);
  LlamaEmitter e(g, spec, weights, options);
  ops::Builder& b = e.builder();
  LayerMasks masks(spec, [&](bool sliding) { return window_mask(b, spec, pos, B, S, L, sliding); });
  ValueId rows = b.add(b.mul(slot, b.scalar(DType::i64, static_cast<double>(capacity))), pos);  // [S]
  // attention reads the slot's own rows: [1, L, Hkv, D]
  const Shape by_slot = {Dim(slots), Dim(capacity), Dim(spec.num_kv_heads), Dim(spec.head_dim)};
  auto view = [&](ValueId c) { return b.slice_axis(b.gather(b.reshape(c, by_slot), slot, 0), 1, Dim(0), L); };
  ValueId x = e.embed(ids, B, S);
  e.set_long_rope(b.gather(pos, last, 0));
  for (int64_t l = 0; l < spec.num_layers; ++l) x = e.slot_layer(l, x, pos, rows, masks.of(l), in.caches[static_cast<size_t>(l)], B, S, view);
  ValueId h = b.reshape(b.gather(x, last, 1), {B, Dim(spec.hidden_size)});
  finish_slot_graph(g, lm_head(e, spec, h), in);
  return g;
}

}  // namespace rlx::models
