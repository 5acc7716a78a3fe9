#include "dist/plan.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::dist {

Plan plan(const DecoderShape& m, const Layout& l) {
  if (l.tp < 1 || l.pp < 1) throw Error(ErrorKind::invalid_argument, "tp and pp must be at least 1");
  if (m.heads % l.tp) throw Error(ErrorKind::invalid_argument, cat(m.name, ": ", m.heads, " attention heads do not split over tp=", l.tp));
  if (m.intermediate % l.tp) throw Error(ErrorKind::invalid_argument, cat(m.name, ": the MLP's ", m.intermediate, " columns do not split over tp=", l.tp));
  if (l.pp > m.layers) throw Error(ErrorKind::invalid_argument, cat(m.name, ": pp=", l.pp, " stages for ", m.layers, " layers"));
  Plan p;
  // KV heads: split when they divide; replicated (each rank keeps the ones its query heads read)
  // when tp exceeds them, as Megatron does for GQA.
  double kv_per_rank;
  if (m.kv_heads % l.tp == 0) {
    kv_per_rank = static_cast<double>(m.kv_heads) / l.tp;
  } else if (l.tp % m.kv_heads == 0) {
    kv_per_rank = 1;
    p.notes.push_back(cat(m.kv_heads, " KV heads over tp=", l.tp, ": each KV head is replicated on ", l.tp / m.kv_heads, " ranks"));
  } else {
    throw Error(ErrorKind::invalid_argument, cat(m.name, ": ", m.kv_heads, " KV heads neither split over nor replicate across tp=", l.tp));
  }
  const double H = static_cast<double>(m.hidden), I = static_cast<double>(m.intermediate), V = static_cast<double>(m.vocab), D = static_cast<double>(m.head_dim);
  const double q = static_cast<double>(m.heads) / l.tp * D;  // this rank's query width
  const double kv = kv_per_rank * D;
  const double attention = H * q + 2 * H * kv + q * H;         // q, k, v columns; o rows
  const double mlp = 2 * H * I / l.tp + I / l.tp * H;           // gate, up columns; down rows
  const double norms = 2 * H + (m.qk_norm ? 2 * D : 0);         // replicated
  const double per_layer = attention + mlp + norms;
  const double embedding = V / l.tp * H;                        // vocab-parallel
  const double head = (m.tied_embeddings && l.pp == 1 ? 0 : V / l.tp * H) + H;  // its rows + the final norm
  int64_t first = 0;
  for (int s = 0; s < l.pp; ++s) {
    const int64_t n = m.layers / l.pp + (s < m.layers % l.pp ? 1 : 0);
    for (int t = 0; t < l.tp; ++t) {
      RankPlan r;
      r.rank = s * l.tp + t;
      r.tp_rank = t;
      r.stage = s;
      r.first_layer = first;
      r.layers = n;
      r.embedding = s == 0;
      r.head = s == l.pp - 1;
      r.params = per_layer * static_cast<double>(n) + (r.embedding ? embedding : 0) + (r.head ? head : 0);
      r.weight_bytes = r.params * l.weight_bytes;
      r.kv_bytes = static_cast<double>(n) * 2 * kv * static_cast<double>(l.context) * static_cast<double>(l.batch) * l.kv_bytes;
      p.ranks.push_back(r);
    }
    first += n;
  }
  if (m.tied_embeddings && l.pp > 1) p.notes.push_back("tied embeddings over pp > 1: the last stage keeps its own copy of the LM head");
  // Per step: each layer all-reduces after the attention output and after the MLP's down rows,
  // and the vocab-parallel embedding once; the LM head all-gathers its logits' columns.
  auto traffic = [&](double tokens) {
    StepTraffic t;
    if (l.tp > 1) {
      t.all_reduces = 2 * m.layers / l.pp + 1;  // the most any stage does (the first, with the embedding)
      t.all_reduce_bytes = tokens * H * l.activation_bytes;
      t.tp_wire_bytes = static_cast<double>(t.all_reduces) * t.all_reduce_bytes * 2.0 * (l.tp - 1) / l.tp;
      t.logits_gather_bytes = static_cast<double>(l.batch) * V * 4;  // f32 logits of the last positions
    }
    if (l.pp > 1) t.pp_bytes = tokens * H * l.activation_bytes;
    return t;
  };
  p.decode = traffic(static_cast<double>(l.batch));
  p.prefill = traffic(static_cast<double>(l.batch * l.prompt));
  return p;
}

}  // namespace rlx::dist
