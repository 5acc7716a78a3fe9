// Sequences and optionals, resolved at import: a sequence is a list of IR values (its length
// is known; positions must be too), an optional is a value or none. SequenceConstruct/Empty/
// At/Insert/Erase/Length, ConcatFromSequence, SplitToSequence, SequenceMap (the body inlined
// per item), Optional, OptionalHasElement, OptionalGetElement.
#include "frontends/onnx/ops_util.h"
#include "frontends/onnx/proto.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<IValue> one(IValue v) { return {std::move(v)}; }

// A position in [-n, n) (or [-n, n] for inserting), normalized.
int64_t position(NodeCtx& c, size_t i, int64_t n, bool insert, int64_t def) {
  if (!c.has(i)) return def;
  int64_t p = c.int_scalar(i, "position");
  int64_t hi = insert ? n : n - 1;
  if (p < -n || p > hi) c.invalid(cat("position ", p, " is out of range for a sequence of ", n));
  return p < 0 ? p + n : p;
}

std::vector<IValue> construct(NodeCtx& c) {
  std::vector<ValueId> items;
  for (size_t i = 0; i < c.num_inputs(); ++i) items.push_back(c.in(i));
  return one(IValue::sequence(items, items.empty() ? DType::f32 : c.dtype(items[0])));
}

std::vector<IValue> empty(NodeCtx& c) {
  auto d = dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", ::onnx::TensorProto::FLOAT)));
  if (!d) c.fail("an element dtype RLX lacks");
  return one(IValue::sequence({}, *d));
}

std::vector<IValue> at(NodeCtx& c) {
  const IValue& s = c.sequence_in(0);
  int64_t n = static_cast<int64_t>(s.items.size());
  return one(IValue::tensor(s.items[static_cast<size_t>(position(c, 1, n, false, 0))]));
}

std::vector<IValue> insert(NodeCtx& c) {
  IValue s = c.sequence_in(0);
  int64_t n = static_cast<int64_t>(s.items.size());
  int64_t p = position(c, 2, n, true, n);
  s.items.insert(s.items.begin() + p, c.in(1));
  return one(s);
}

std::vector<IValue> erase(NodeCtx& c) {
  IValue s = c.sequence_in(0);
  int64_t n = static_cast<int64_t>(s.items.size());
  if (n == 0) c.invalid("erasing from an empty sequence");
  s.items.erase(s.items.begin() + position(c, 1, n, false, n - 1));
  return one(s);
}

std::vector<IValue> length(NodeCtx& c) {
  return one(IValue::tensor(c.b.scalar(DType::i64, static_cast<double>(c.sequence_in(0).items.size()))));
}

std::vector<IValue> concat_from_sequence(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  const IValue& s = c.sequence_in(0);
  if (s.items.empty()) c.invalid("concatenating an empty sequence");
  bool new_axis = c.attr_i("new_axis", 0) != 0;
  int64_t r = static_cast<int64_t>(b.rank(s.items[0])) + (new_axis ? 1 : 0);
  int64_t axis = c.axis(c.attr_i("axis", 0), r);
  std::vector<ValueId> parts;
  for (ValueId v : s.items) parts.push_back(new_axis ? insert_axes(b, v, {axis}) : v);
  return one(IValue::tensor(b.concat(parts, axis)));
}

std::vector<IValue> split_to_sequence(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  Dim nd = c.shape(x)[static_cast<size_t>(axis)];
  if (!nd.is_static()) c.fail("splitting a symbolic dim");
  int64_t n = nd.value();
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!c.has(1)) {
    sizes.assign(static_cast<size_t>(n), 1);
    squeeze = c.attr_i("keepdims", 1) == 0;
  } else {
    std::vector<int64_t> split = c.ints(1, "split");
    for (int64_t v : split)
      if (v < 0 || (v == 0 && c.rank(c.in(1)) == 0)) c.invalid(cat("split size ", v));
    if (c.rank(c.in(1)) == 0) {
      for (int64_t at = 0; at < n; at += split[0]) sizes.push_back(std::min(split[0], n - at));
    } else {
      sizes = split;
    }
  }
  std::vector<ValueId> items;
  int64_t start = 0;
  for (int64_t s : sizes) {
    ValueId part = b.slice_axis(x, axis, Dim(start), Dim(start + s));
    items.push_back(squeeze ? remove_axes(b, part, {axis}) : part);
    start += s;
  }
  return one(IValue::sequence(items, c.dtype(x)));
}

// The body runs once per item: sequence inputs give their i-th item, tensors pass whole.
std::vector<IValue> sequence_map(NodeCtx& c) {
  const auto& body = c.attr_g("body");
  const IValue& first = c.sequence_in(0);
  size_t n = first.items.size();
  for (const IValue& v : c.values_in())
    if (v.kind == IValue::Kind::sequence && v.items.size() != n) c.invalid("the input sequences have different lengths");
  size_t outs = static_cast<size_t>(body.output_size());
  std::vector<std::vector<ValueId>> results(outs);
  for (size_t i = 0; i < n; ++i) {
    std::vector<IValue> ins;
    for (const IValue& v : c.values_in()) ins.push_back(v.kind == IValue::Kind::sequence ? IValue::tensor(v.items[i]) : v);
    std::vector<IValue> r = c.imp.inline_graph(body, ins, cat(c.label(), " body (item ", i, ")"));
    for (size_t k = 0; k < outs; ++k) {
      if (!r[k].is_tensor()) c.fail("a body output that is not a tensor");
      results[k].push_back(r[k].v);
    }
  }
  std::vector<IValue> out;
  for (size_t k = 0; k < outs; ++k) {
    DType d = results[k].empty() ? DType::f32 : c.dtype(results[k][0]);
    if (results[k].empty() && body.output(static_cast<int>(k)).type().has_tensor_type())
      if (auto t = dtype_from_onnx(body.output(static_cast<int>(k)).type().tensor_type().elem_type())) d = *t;
    out.push_back(IValue::sequence(results[k], d));
  }
  return out;
}

std::vector<IValue> optional(NodeCtx& c) { return one(c.value_in(0)); }

std::vector<IValue> optional_has_element(NodeCtx& c) {
  bool has = c.value_in(0).kind != IValue::Kind::none;
  return one(IValue::tensor(c.b.scalar(DType::boolean, has ? 1 : 0)));
}

std::vector<IValue> optional_get_element(NodeCtx& c) {
  IValue v = c.value_in(0);
  if (v.kind == IValue::Kind::none) c.invalid("the optional is empty");
  return one(v);
}

}  // namespace

void register_sequence(OpTable& t) {
  t.insert(t.end(), {
                        {"", "SequenceConstruct", 11, nullptr, construct},
                        {"", "SequenceEmpty", 11, nullptr, empty},
                        {"", "SequenceAt", 11, nullptr, at},
                        {"", "SequenceInsert", 11, nullptr, insert},
                        {"", "SequenceErase", 11, nullptr, erase},
                        {"", "SequenceLength", 11, nullptr, length},
                        {"", "ConcatFromSequence", 11, nullptr, concat_from_sequence},
                        {"", "SplitToSequence", 11, nullptr, split_to_sequence},
                        {"", "SequenceMap", 17, nullptr, sequence_map},
                        {"", "Optional", 15, nullptr, optional},
                        {"", "OptionalHasElement", 15, nullptr, optional_has_element},
                        {"", "OptionalGetElement", 15, nullptr, optional_get_element},
                    });
}

}  // namespace rlx::frontends::onnx
