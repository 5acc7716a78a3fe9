#include "passes/precision.h"

#include "ops/builder.h"
#include "passes/rewrite.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

Precision precision_from_name(const std::string& name) {
  if (name == "f32" || name.empty()) return Precision::f32;
  if (name == "bf16") return Precision::bf16;
  if (name == "f16") return Precision::f16;
  if (name == "amp") return Precision::amp;
  throw Error(ErrorKind::invalid_argument, cat("unknown precision '", name, "' (choose f32, bf16, f16 or amp)"));
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::f32: return "f32";
    case Precision::bf16: return "bf16";
    case Precision::f16: return "f16";
    case Precision::amp: return "amp";
  }
  return "?";
}

ir::Graph apply_precision(const ir::Graph& g, Precision p) {
  if (p == Precision::f32) return g;
  // amp keeps f32 master weights and reductions; its matmuls run like bf16's
  const DType low = p == Precision::f16 ? DType::f16 : DType::bf16;
  Rule rule{p == Precision::f16 ? "f16-matmul" : "bf16-matmul", [low](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (op == Op::attention && b.dtype(in[0]) == DType::f32 && !attrs.has("compute")) {
      Attrs a = attrs;
      a.set("compute", low);
      return b.emit_plain(op, in, a, ir::Path::native);
    }
    if (op != Op::dot_general || b.dtype(in[0]) != DType::f32 || attrs.has("out") || attrs.has("compute")) return std::nullopt;
    // Explicit casts rather than compute=bf16: a cast of an activation fuses into the region
    // that produces it and is shared by every matmul reading it (q, k and v), and casts of
    // weights fold at compile time.
    Attrs a = attrs;
    a.set("out", DType::f32);
    return b.emit_plain(op, {b.cast(in[0], low), b.cast(in[1], low)}, a, ir::Path::native);
  }};
  return rewrite(g, {rule}, "precision");
}

}  // namespace rlx::passes
