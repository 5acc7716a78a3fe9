// The StableHLO printer (stablehlo.h). Ops print in MLIR's generic form —
//   %3 = "stablehlo.add"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// — so the text depends on no dialect's custom assembly. Constants are raw little-endian bytes
// (dense<"0x…">), exact for every type.
#include "backends/pjrt/stablehlo.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::pjrt {

namespace {

using ir::Op;
using ir::ValueId;

std::optional<std::string> element_type(DType d) {
  switch (d) {
    case DType::boolean: return "i1";
    case DType::i8: return "i8";
    case DType::i16: return "i16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "ui8";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::c64: return "complex<f32>";
    case DType::c128: return "complex<f64>";
    default: return std::nullopt;
  }
}

std::optional<const char*> unary_name(Op op) {
  switch (op) {
    case Op::neg: return "stablehlo.negate";
    case Op::abs: return "stablehlo.abs";
    case Op::sign: return "stablehlo.sign";
    case Op::exp: return "stablehlo.exponential";
    case Op::expm1: return "stablehlo.exponential_minus_one";
    case Op::log: return "stablehlo.log";
    case Op::log1p: return "stablehlo.log_plus_one";
    case Op::sqrt: return "stablehlo.sqrt";
    case Op::rsqrt: return "stablehlo.rsqrt";
    case Op::sin: return "stablehlo.sine";
    case Op::cos: return "stablehlo.cosine";
    case Op::tanh: return "stablehlo.tanh";
    case Op::sigmoid: return "stablehlo.logistic";
    case Op::erf: return "chlo.erf";
    case Op::floor: return "stablehlo.floor";
    case Op::ceil: return "stablehlo.ceil";
    case Op::round: return "stablehlo.round_nearest_even";
    case Op::logical_not: return "stablehlo.not";
    default: return std::nullopt;
  }
}

std::optional<const char*> binary_name(Op op) {
  switch (op) {
    case Op::add: return "stablehlo.add";
    case Op::sub: return "stablehlo.subtract";
    case Op::mul: return "stablehlo.multiply";
    case Op::div: return "stablehlo.divide";
    case Op::rem: return "stablehlo.remainder";
    case Op::pow: return "stablehlo.power";
    case Op::max: return "stablehlo.maximum";
    case Op::min: return "stablehlo.minimum";
    case Op::logical_and: return "stablehlo.and";
    case Op::logical_or: return "stablehlo.or";
    case Op::logical_xor: return "stablehlo.xor";
    default: return std::nullopt;
  }
}

std::optional<const char*> comparison(Op op) {
  switch (op) {
    case Op::eq: return "EQ";
    case Op::ne: return "NE";
    case Op::lt: return "LT";
    case Op::le: return "LE";
    case Op::gt: return "GT";
    case Op::ge: return "GE";
    default: return std::nullopt;
  }
}

// A stablehlo.compare's attributes: the direction and the compare type its operands' dtype takes.
std::string compare_attrs(const char* direction, DType d) {
  const char* type = is_float(d) ? "FLOAT" : (d == DType::u8 || d == DType::boolean) ? "UNSIGNED" : "SIGNED";
  return cat("comparison_direction = #stablehlo<comparison_direction ", direction, ">, compare_type = #stablehlo<comparison_type ", type, ">");
}

std::string ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += cat(i ? ", " : "", v[i]);
  return s;
}

// A dense literal of raw little-endian bytes: "0x…", exact for every non-boolean type.
std::string hex_bytes(const Tensor& t) {
  static const char* hex = "0123456789ABCDEF";
  Tensor c = t.contiguous();
  const uint8_t* p = static_cast<const uint8_t*>(c.data());
  std::string lit = "\"0x";
  for (size_t i = 0; i < c.nbytes(); ++i) {
    lit += hex[p[i] >> 4];
    lit += hex[p[i] & 15];
  }
  return lit + "\"";
}

std::string i64_array(const std::vector<int64_t>& v) { return v.empty() ? "array<i64>" : cat("array<i64: ", ints(v), ">"); }

class Printer {
 public:
  explicit Printer(const ir::Graph& g) : g_(g) {}

  std::string module() {
    std::ostringstream head;
    head << "module @rlx {\n  func.func public @main(";
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      ValueId v = g_.inputs()[i];
      names_[v] = cat("%arg", i);
      head << (i ? ", " : "") << names_[v] << ": " << type(v);
    }
    head << ") -> (";
    for (size_t i = 0; i < g_.outputs().size(); ++i) head << (i ? ", " : "") << type(g_.outputs()[i]);
    head << ") {\n";
    for (int i = 0; i < g_.num_nodes(); ++i) node(g_.node(i));
    std::string ret = "    \"func.return\"(";
    std::string types;
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      ret += cat(i ? ", " : "", name(g_.outputs()[i]));
      types += cat(i ? ", " : "", type(g_.outputs()[i]));
    }
    body_ << ret << ") : (" << types << ") -> ()\n  }\n}\n";
    return head.str() + body_.str();
  }

 private:
  std::string type(ValueId v) const { return tensor_type(g_.type(v)); }
  const std::string& name(ValueId v) const { return names_.at(v); }
  std::string fresh() { return cat("%t", next_++); }
  std::vector<int64_t> dims(ValueId v) const { return shape_values(g_.type(v).shape); }

  // Emits `op`(args) with `attrs`, of result type `result`; returns its name.
  std::string emit(const std::string& op, const std::vector<std::string>& args, const std::vector<std::string>& arg_types, const std::string& result,
                   const std::string& attrs = "") {
    std::string n = fresh();
    body_ << "    " << n << " = \"" << op << "\"(" << join(args, ", ") << ")" << (attrs.empty() ? "" : cat(" {", attrs, "}")) << " : ("
          << join(arg_types, ", ") << ") -> " << result << "\n";
    return n;
  }

  // v broadcast (numpy rules) to `to` dims with v's element type.
  std::string broadcast_to(ValueId v, const std::vector<int64_t>& to) {
    std::vector<int64_t> from = dims(v);
    if (from == to) return name(v);
    std::vector<int64_t> map;
    for (size_t i = 0; i < from.size(); ++i) map.push_back(static_cast<int64_t>(to.size() - from.size() + i));
    ir::Type t{g_.type(v).dtype, {}};
    for (int64_t d : to) t.shape.push_back(Dim(d));
    return emit("stablehlo.broadcast_in_dim", {name(v)}, {type(v)}, tensor_type(t), cat("broadcast_dimensions = ", i64_array(map)));
  }

  void bind(const ir::Node& n, const std::string& s) { names_[n.outputs[0]] = s; }

  void node(const ir::Node& n) {
    const std::string out = type(n.outputs[0]);
    std::vector<int64_t> od = dims(n.outputs[0]);
    if (n.op == Op::constant) return bind(n, constant(n));
    if (auto u = unary_name(n.op)) return bind(n, emit(*u, {name(n.inputs[0])}, {type(n.inputs[0])}, out));
    if (n.op == Op::reciprocal) {
      std::string one = splat(g_.type(n.outputs[0]), "1");
      return bind(n, emit("stablehlo.divide", {one, name(n.inputs[0])}, {out, out}, out));
    }
    if (auto b = binary_name(n.op)) {
      std::string x = broadcast_to(n.inputs[0], od), y = broadcast_to(n.inputs[1], od);
      return bind(n, emit(*b, {x, y}, {out, out}, out));
    }
    if (auto c = comparison(n.op)) {
      ir::Type it = g_.type(n.inputs[0]);
      it.shape = g_.type(n.outputs[0]).shape;
      std::string t = tensor_type(it);
      std::string x = broadcast_to(n.inputs[0], od), y = broadcast_to(n.inputs[1], od);
      return bind(n, emit("stablehlo.compare", {x, y}, {t, t}, out, compare_attrs(*c, it.dtype)));
    }
    switch (n.op) {
      case Op::select: {
        ir::Type pt{DType::boolean, g_.type(n.outputs[0]).shape};
        std::string p = broadcast_to(n.inputs[0], od), x = broadcast_to(n.inputs[1], od), y = broadcast_to(n.inputs[2], od);
        return bind(n, emit("stablehlo.select", {p, x, y}, {tensor_type(pt), out, out}, out));
      }
      case Op::cast: return bind(n, emit("stablehlo.convert", {name(n.inputs[0])}, {type(n.inputs[0])}, out));
      case Op::reshape: return bind(n, emit("stablehlo.reshape", {name(n.inputs[0])}, {type(n.inputs[0])}, out));
      case Op::broadcast: return bind(n, broadcast_to(n.inputs[0], od));
      case Op::transpose:
        return bind(n, emit("stablehlo.transpose", {name(n.inputs[0])}, {type(n.inputs[0])}, out, cat("permutation = ", i64_array(n.attrs.ints("perm")))));
      case Op::iota:
        return bind(n, emit("stablehlo.iota", {}, {}, out, cat("iota_dimension = ", codegen::normalize_axis(n.attrs.i("axis"), od.size()), " : i64")));
      case Op::slice: {
        std::vector<int64_t> start = shape_values(n.attrs.dims("start")), limit = shape_values(n.attrs.dims("limit"));
        return bind(n, emit("stablehlo.slice", {name(n.inputs[0])}, {type(n.inputs[0])}, out,
                            cat("start_indices = ", i64_array(start), ", limit_indices = ", i64_array(limit), ", strides = ",
                                i64_array(n.attrs.ints("stride")))));
      }
      case Op::concat: {
        std::vector<std::string> args, types;
        for (ValueId v : n.inputs) {
          args.push_back(name(v));
          types.push_back(type(v));
        }
        return bind(n, emit("stablehlo.concatenate", args, types, out, cat("dimension = ", codegen::normalize_axis(n.attrs.i("axis"), od.size()), " : i64")));
      }
      case Op::dot_general: {
        ir::Intss batch = n.attrs.intss("batch"), contract = n.attrs.intss("contract");
        auto norm = [](std::vector<int64_t> v, size_t r) {
          for (auto& d : v) d = codegen::normalize_axis(d, r);
          return v;
        };
        size_t lr = dims(n.inputs[0]).size(), rr = dims(n.inputs[1]).size();
        // Integer operands are widened to the result's type first: XLA's GPU int8 GEMM (s8·s8 →
        // s32) returned twice the product on an H100 (2026-12-07), and i32 dots are exact anyway.
        std::string lhs = name(n.inputs[0]), rhs = name(n.inputs[1]), lt = type(n.inputs[0]), rt = type(n.inputs[1]);
        const DType od_t = g_.type(n.outputs[0]).dtype;
        if (!is_float(od_t) && !is_complex(od_t) && g_.type(n.inputs[0]).dtype != od_t) {
          ir::Type wl{od_t, g_.type(n.inputs[0]).shape}, wr{od_t, g_.type(n.inputs[1]).shape};
          lhs = emit("stablehlo.convert", {lhs}, {lt}, tensor_type(wl)), lt = tensor_type(wl);
          rhs = emit("stablehlo.convert", {rhs}, {rt}, tensor_type(wr)), rt = tensor_type(wr);
        }
        // f32/f64/c64/c128 products at full precision: XLA's default lets the GPU multiply f32 in
        // TF32 (10-bit mantissas), which is not the op's definition.
        const DType id_t = g_.type(n.inputs[0]).dtype;
        const bool full = id_t == DType::f32 || id_t == DType::f64 || id_t == DType::c64 || id_t == DType::c128;
        return bind(n, emit("stablehlo.dot_general", {lhs, rhs}, {lt, rt}, out,
                            cat("dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [", ints(norm(batch[0], lr)),
                                "], rhs_batching_dimensions = [", ints(norm(batch[1], rr)), "], lhs_contracting_dimensions = [",
                                ints(norm(contract[0], lr)), "], rhs_contracting_dimensions = [", ints(norm(contract[1], rr)), "]>",
                                full ? ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]" : "")));
      }
      case Op::reduce: return bind(n, reduce(n));
      case Op::gather: return bind(n, gather(n));
      case Op::pad: {
        ir::Type vt{g_.type(n.inputs[0]).dtype, {}};
        std::string value = splat(vt, hex_bytes(Tensor::scalar(vt.dtype, n.attrs.f("value"))));
        std::vector<int64_t> interior = n.attrs.has("interior") ? n.attrs.ints("interior") : std::vector<int64_t>(od.size(), 0);
        return bind(n, emit("stablehlo.pad", {name(n.inputs[0]), value}, {type(n.inputs[0]), tensor_type(vt)}, out,
                            cat("edge_padding_low = ", i64_array(n.attrs.ints("lo")), ", edge_padding_high = ", i64_array(n.attrs.ints("hi")),
                                ", interior_padding = ", i64_array(interior))));
      }
      default: break;
    }
    throw Error(ErrorKind::unsupported, cat("tpu: no StableHLO spelling for ", ir::op_keyword(n.op), " (", n.name, ")"));
  }

  // A tensor of `t` filled with the literal `value`.
  std::string splat(const ir::Type& t, const std::string& value) {
    return emit("stablehlo.constant", {}, {}, tensor_type(t), cat("value = dense<", value, "> : ", tensor_type(t)));
  }

  std::string constant(const ir::Node& n) {
    const Tensor& v = n.attrs.tensor("value");
    ir::Type t = g_.type(n.outputs[0]);
    Tensor c = v.contiguous();
    std::string lit;
    if (t.dtype == DType::boolean) {
      // i1 elements are not bytes in MLIR's hex form: true/false literals
      std::vector<std::string> parts;
      const uint8_t* p = static_cast<const uint8_t*>(c.data());
      for (int64_t i = 0; i < c.numel(); ++i) parts.push_back(p[i] ? "true" : "false");
      lit = c.shape().empty() ? parts[0] : cat("[", join(parts, ", "), "]");
      if (!c.shape().empty() && c.shape().size() > 1) {
        // nested form is not needed: a flat list is accepted only for rank 1, so splat or reshape
        ir::Type flat{t.dtype, {Dim(c.numel())}};
        std::string f = emit("stablehlo.constant", {}, {}, tensor_type(flat), cat("value = dense<", lit, "> : ", tensor_type(flat)));
        return emit("stablehlo.reshape", {f}, {tensor_type(flat)}, tensor_type(t));
      }
    } else {
      lit = hex_bytes(c);
    }
    return emit("stablehlo.constant", {}, {}, tensor_type(t), cat("value = dense<", lit, "> : ", tensor_type(t)));
  }

  // x gathered along `axis` at idx (negative indices count from the end): out = x.shape[:axis] +
  // idx.shape + x.shape[axis+1:], one slice of x per index.
  std::string gather(const ir::Node& n) {
    std::vector<int64_t> xs = dims(n.inputs[0]), is = dims(n.inputs[1]);
    int64_t axis = codegen::normalize_axis(n.attrs.i("axis"), xs.size());
    ir::Type it = g_.type(n.inputs[1]);
    // wrap negative indices: idx < 0 ? idx + n : idx
    ir::Type bt{DType::boolean, it.shape};
    std::string zero = splat(it, "0"), len = splat(it, cat(xs[static_cast<size_t>(axis)]));
    std::string neg = emit("stablehlo.compare", {name(n.inputs[1]), zero}, {tensor_type(it), tensor_type(it)}, tensor_type(bt),
                           compare_attrs("LT", it.dtype));
    std::string shifted = emit("stablehlo.add", {name(n.inputs[1]), len}, {tensor_type(it), tensor_type(it)}, tensor_type(it));
    std::string idx = emit("stablehlo.select", {neg, shifted, name(n.inputs[1])}, {tensor_type(bt), tensor_type(it), tensor_type(it)}, tensor_type(it));
    std::vector<int64_t> offset, sizes = xs;
    for (size_t d = 0; d < xs.size(); ++d)
      if (static_cast<int64_t>(d) != axis) offset.push_back(static_cast<int64_t>(d) < axis ? static_cast<int64_t>(d) : static_cast<int64_t>(d) - 1 + static_cast<int64_t>(is.size()));
    sizes[static_cast<size_t>(axis)] = 1;
    return emit("stablehlo.gather", {name(n.inputs[0]), idx}, {type(n.inputs[0]), tensor_type(it)}, type(n.outputs[0]),
                cat("dimension_numbers = #stablehlo.gather<offset_dims = [", ints(offset), "], collapsed_slice_dims = [", axis, "], start_index_map = [", axis,
                    "], index_vector_dim = ", is.size(), ">, slice_sizes = ", i64_array(sizes), ", indices_are_sorted = false"));
  }

  // The value a reduction of `kind` starts from: 0, 1, or the type's lowest (max) / highest (min).
  std::string reduce_init(const std::string& kind, DType d) {
    ir::Type scalar{d, {}};
    const bool f = is_float(d);
    if (kind == "sum" || kind == "prod") return splat(scalar, cat(kind == "sum" ? "0" : "1", f ? ".0" : ""));
    const bool max = kind == "max";
    if (d == DType::boolean) return splat(scalar, max ? "false" : "true");
    if (f) {
      if (d == DType::f64) return splat(scalar, max ? "0xFFF0000000000000" : "0x7FF0000000000000");
      if (d == DType::bf16) return splat(scalar, max ? "0xFF80" : "0x7F80");
      if (d == DType::f16) return splat(scalar, max ? "0xFC00" : "0x7C00");
      return splat(scalar, max ? "0xFF800000" : "0x7F800000");
    }
    int bits = static_cast<int>(dtype_size(d) * 8);
    bool is_unsigned = d == DType::u8;
    long double lo = is_unsigned ? 0 : -std::ldexp(1.0L, bits - 1), hi = is_unsigned ? std::ldexp(1.0L, bits) - 1 : std::ldexp(1.0L, bits - 1) - 1;
    return splat(scalar, cat(static_cast<long long>(max ? lo : hi)));
  }

  std::string reduce(const ir::Node& n) {
    std::string kind = n.attrs.s("kind");
    ir::Type in = g_.type(n.inputs[0]);
    std::vector<int64_t> xs = dims(n.inputs[0]);
    std::vector<int64_t> axes;
    for (int64_t a : n.attrs.ints("axes")) axes.push_back(codegen::normalize_axis(a, xs.size()));
    std::sort(axes.begin(), axes.end());
    if (kind == "argmax" || kind == "argmin") return arg_reduce(n, kind == "argmax", axes[0]);
    ir::Type scalar{in.dtype, {}};
    std::string st = tensor_type(scalar);
    std::string init = reduce_init(kind, in.dtype);
    const char* combine = kind == "sum" ? "stablehlo.add" : kind == "prod" ? "stablehlo.multiply" : kind == "max" ? "stablehlo.maximum" : "stablehlo.minimum";
    std::vector<int64_t> kept;
    ir::Type rt{in.dtype, {}};
    for (size_t d = 0; d < xs.size(); ++d)
      if (!std::count(axes.begin(), axes.end(), static_cast<int64_t>(d))) rt.shape.push_back(Dim(xs[d]));
    std::string r = fresh();
    body_ << "    " << r << " = \"stablehlo.reduce\"(" << name(n.inputs[0]) << ", " << init << ") ({\n"
          << "    ^bb0(%a" << r.substr(1) << ": " << st << ", %b" << r.substr(1) << ": " << st << "):\n"
          << "      %c" << r.substr(1) << " = \"" << combine << "\"(%a" << r.substr(1) << ", %b" << r.substr(1) << ") : (" << st << ", " << st << ") -> "
          << st << "\n"
          << "      \"stablehlo.return\"(%c" << r.substr(1) << ") : (" << st << ") -> ()\n"
          << "    }) {dimensions = " << i64_array(axes) << "} : (" << tensor_type(in) << ", " << st << ") -> " << tensor_type(rt) << "\n";
    std::string out = type(n.outputs[0]);
    if (tensor_type(rt) == out) return r;
    return emit("stablehlo.reshape", {r}, {tensor_type(rt)}, out);  // keepdims
  }

  // argmax / argmin along one axis as a reduce of (value, index) pairs. The region picks, of two
  // pairs, the one the reference would keep whatever order XLA combines them in: a NaN over a
  // number, then the larger (smaller) value, and on a tie — equal values or two NaNs — the lower
  // index. That makes it associative and commutative, as a reduce region must be, and gives
  // numpy's answer: the first NaN, else the first extreme.
  std::string arg_reduce(const ir::Node& n, bool is_max, int64_t axis) {
    ir::Type in = g_.type(n.inputs[0]);
    ir::Type idx_t{DType::i64, in.shape};
    std::string index = emit("stablehlo.iota", {}, {}, tensor_type(idx_t), cat("iota_dimension = ", axis, " : i64"));
    std::string vinit = reduce_init(is_max ? "max" : "min", in.dtype);
    std::string iinit = splat({DType::i64, {}}, cat(std::numeric_limits<int64_t>::max()));
    const std::string vt = tensor_type({in.dtype, {}}), it = tensor_type({DType::i64, {}}), bt = tensor_type({DType::boolean, {}});
    std::string r = fresh(), p = "%" + r.substr(1) + "_";
    int k = 0;
    std::ostringstream region;
    auto op = [&](const std::string& name, const std::vector<std::string>& args, const std::string& arg_type, const std::string& result,
                  const std::string& attrs = "") {
      std::string v = cat(p, k++);
      std::vector<std::string> types(args.size(), arg_type);
      region << "      " << v << " = \"" << name << "\"(" << join(args, ", ") << ")" << (attrs.empty() ? "" : cat(" {", attrs, "}")) << " : ("
             << join(types, ", ") << ") -> " << result << "\n";
      return v;
    };
    auto compare = [&](const std::string& a, const std::string& b, const char* dir, DType d) {
      return op("stablehlo.compare", {a, b}, tensor_type({d, {}}), bt, compare_attrs(dir, d));
    };
    const std::string av = p + "av", ai = p + "ai", bv = p + "bv", bi = p + "bi";
    std::string a_nan = compare(av, av, "NE", in.dtype), b_nan = compare(bv, bv, "NE", in.dtype);
    std::string better = compare(av, bv, is_max ? "GT" : "LT", in.dtype);
    std::string equal = compare(av, bv, "EQ", in.dtype);
    std::string lower = compare(ai, bi, "LT", DType::i64);
    std::string only_a_nan = op("stablehlo.and", {a_nan, op("stablehlo.not", {b_nan}, bt, bt)}, bt, bt);
    std::string tie = op("stablehlo.or", {equal, op("stablehlo.and", {a_nan, b_nan}, bt, bt)}, bt, bt);
    std::string take_a = op("stablehlo.or", {op("stablehlo.or", {only_a_nan, better}, bt, bt), op("stablehlo.and", {tie, lower}, bt, bt)}, bt, bt);
    std::string v = cat(p, k++), i = cat(p, k++);
    region << "      " << v << " = \"stablehlo.select\"(" << take_a << ", " << av << ", " << bv << ") : (" << bt << ", " << vt << ", " << vt << ") -> " << vt << "\n"
           << "      " << i << " = \"stablehlo.select\"(" << take_a << ", " << ai << ", " << bi << ") : (" << bt << ", " << it << ", " << it << ") -> " << it << "\n"
           << "      \"stablehlo.return\"(" << v << ", " << i << ") : (" << vt << ", " << it << ") -> ()\n";
    ir::Type rv{in.dtype, {}}, ri{DType::i64, {}};
    for (size_t d = 0; d < in.shape.size(); ++d)
      if (static_cast<int64_t>(d) != axis) rv.shape.push_back(in.shape[d]), ri.shape.push_back(in.shape[d]);
    body_ << "    " << r << ":2 = \"stablehlo.reduce\"(" << name(n.inputs[0]) << ", " << index << ", " << vinit << ", " << iinit << ") ({\n"
          << "    ^bb0(" << av << ": " << vt << ", " << ai << ": " << it << ", " << bv << ": " << vt << ", " << bi << ": " << it << "):\n"
          << region.str() << "    }) {dimensions = " << i64_array({axis}) << "} : (" << tensor_type(in) << ", " << tensor_type(idx_t) << ", " << vt << ", "
          << it << ") -> (" << tensor_type(rv) << ", " << tensor_type(ri) << ")\n";
    std::string result = r + "#1", out = type(n.outputs[0]);
    if (tensor_type(ri) == out) return result;
    return emit("stablehlo.reshape", {result}, {tensor_type(ri)}, out);  // keepdims
  }

  const ir::Graph& g_;
  std::map<ValueId, std::string> names_;
  std::ostringstream body_;
  int next_ = 0;
};

}  // namespace

std::string tensor_type(const ir::Type& t) {
  auto e = element_type(t.dtype);
  if (!e) throw Error(ErrorKind::unsupported, cat("tpu: no StableHLO element type for ", dtype_name(t.dtype)));
  std::string s = "tensor<";
  for (const Dim& d : t.shape) {
    if (!d.is_static()) throw Error(ErrorKind::unsupported, cat("tpu: StableHLO needs static shapes; ", shape_str(t.shape), " is symbolic"));
    s += cat(d.value(), "x");
  }
  return s + *e + ">";
}

bool stablehlo_prints(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  for (const ir::Type& t : in)
    if (!element_type(t.dtype)) return false;
  for (const ir::Type& t : out)
    if (!element_type(t.dtype)) return false;
  if (unary_name(op) || binary_name(op) || comparison(op)) return true;
  switch (op) {
    case Op::constant:
    case Op::reciprocal:
    case Op::select:
    case Op::cast:
    case Op::reshape:
    case Op::broadcast:
    case Op::transpose:
    case Op::iota:
    case Op::concat: return true;
    case Op::slice:
      if (!attrs.has("stride")) return true;
      for (int64_t s : attrs.ints("stride"))
        if (s <= 0) return false;
      return true;
    case Op::dot_general: return !attrs.has("compute");  // rounding the operands first is not spelled
    case Op::gather: return in[1].dtype == DType::i32 || in[1].dtype == DType::i64;
    case Op::pad: return !attrs.has("mode") || attrs.s("mode") == "constant";
    case Op::reduce: {
      if (!attrs.has("kind")) return true;
      const std::string& k = attrs.s("kind");
      return k == "sum" || k == "prod" || k == "max" || k == "min" || k == "argmax" || k == "argmin";
    }
    default: return false;
  }
}

std::string to_stablehlo(const ir::Graph& g) { return Printer(g).module(); }

}  // namespace rlx::backends::pjrt
