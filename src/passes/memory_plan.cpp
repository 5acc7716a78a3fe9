#include "passes/memory_plan.h"

#include <algorithm>
#include <optional>

#include "passes/rewrite.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

using ir::Placement;

ir::ValueId placement_root(const ir::Graph& lir, ir::ValueId v) {
  while (lir.placement[static_cast<size_t>(v)].kind == Placement::Kind::view) v = lir.placement[static_cast<size_t>(v)].index;
  return v;
}

int64_t placement_offset(const ir::Graph& lir, ir::ValueId v) {
  int64_t off = 0;
  for (const Placement* p = &lir.placement[static_cast<size_t>(v)]; p->kind == Placement::Kind::view; p = &lir.placement[static_cast<size_t>(p->index)])
    off += p->offset;
  return off;
}

const void* constant_bytes(const ir::Graph& lir, ir::ValueId v) {
  const ir::Node* p = lir.producer(placement_root(lir, v));
  if (!p || p->op != Op::constant) return nullptr;
  return static_cast<const uint8_t*>(p->attrs.tensor("value").data()) + placement_offset(lir, v);
}

namespace {

int64_t align(int64_t n, int64_t a = kArenaAlignment) { return (n + a - 1) / a * a; }

// A unit-stride slice whose elements are one run of its input's bytes (every axis before the
// first partial one taken at a single index, every axis after it whole), starting at a multiple
// of the arena alignment so kernels see it as aligned as any buffer: its byte offset.
std::optional<int64_t> contiguous_slice_offset(const ir::Graph& g, const ir::Node& n) {
  const Type& in = g.type(n.inputs[0]);
  const Shape& start = n.attrs.dims("start");
  const Shape& limit = n.attrs.dims("limit");
  const std::vector<int64_t>& stride = n.attrs.ints("stride");
  size_t r = in.shape.size();
  if (start.size() != r || limit.size() != r || stride.size() != r) return std::nullopt;
  for (size_t d = 0; d < r; ++d)
    if (!in.shape[d].is_static() || !start[d].is_static() || !limit[d].is_static() || stride[d] != 1) return std::nullopt;
  int64_t offset = 0, step = static_cast<int64_t>(dtype_bytes(in.dtype, 1));  // step: bytes per index of axis d
  bool partial_seen = false;  // walking from the last axis: an axis cut short, after which only single indices may follow
  for (size_t d = r; d-- > 0;) {
    int64_t n_d = in.shape[d].value(), lo = start[d].value(), len = limit[d].value() - lo;
    if (partial_seen && len != 1) return std::nullopt;
    if (len != n_d) partial_seen = true;
    offset += lo * step;
    step *= n_d;
  }
  if (offset % kArenaAlignment) return std::nullopt;
  return offset;
}

struct Buffer {
  int64_t bytes = 0;
  int first = 0, last = 0;  // node indices of the live range (inclusive)
  int64_t offset = -1;
  std::vector<int> touched;  // keep_branches_apart: the nodes that write or read it
};

// For every node, the nodes it depends on (itself included), one bit each.
class Ancestry {
 public:
  explicit Ancestry(const ir::Graph& g) : words_((static_cast<size_t>(g.num_nodes()) + 63) / 64), bits_(static_cast<size_t>(g.num_nodes()) * words_, 0) {
    for (int i = 0; i < g.num_nodes(); ++i) {
      uint64_t* me = row(i);
      me[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64);
      for (ValueId v : g.node(i).inputs) {
        int p = g.value(v).node;
        if (p < 0) continue;
        const uint64_t* from = row(p);
        for (size_t w = 0; w < words_; ++w) me[w] |= from[w];
      }
    }
  }
  bool depends(int node, int on) const { return (row(node)[static_cast<size_t>(on) / 64] >> (on % 64)) & 1; }
  // Does `node` depend on every node that touches the buffer?
  bool after_all(int node, const std::vector<int>& touched) const {
    for (int t : touched)
      if (t != node && !depends(node, t)) return false;
    return true;
  }

 private:
  uint64_t* row(int i) { return bits_.data() + static_cast<size_t>(i) * words_; }
  const uint64_t* row(int i) const { return bits_.data() + static_cast<size_t>(i) * words_; }
  size_t words_;
  std::vector<uint64_t> bits_;
};

}  // namespace

ir::Graph plan_memory(const ir::Graph& in, const PlanOptions& opts) {
  ir::Graph g = in;
  size_t nv = g.num_values();
  int n_nodes = g.num_nodes();
  g.placement.assign(nv, Placement{});
  std::vector<int> buffer_of(nv, -1);
  std::vector<Buffer> buffers;
  std::vector<int> last_use(nv, -1);
  for (int i = 0; i < n_nodes; ++i)
    for (ValueId v : g.node(i).inputs) last_use[static_cast<size_t>(v)] = i;
  std::vector<bool> is_output(nv, false);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v)] = true;

  for (size_t k = 0; k < g.inputs().size(); ++k) g.placement[static_cast<size_t>(g.inputs()[k])] = {Placement::Kind::input, 0, 0, static_cast<int32_t>(k)};

  auto root_buffer = [&](ValueId v) { return buffer_of[static_cast<size_t>(placement_root(g, v))]; };
  std::optional<Ancestry> ancestry;
  if (opts.keep_branches_apart && n_nodes <= kBranchPlanMaxNodes) ancestry.emplace(g);

  // Donations: the output is written into the donated input's own buffer when its producer
  // can work in place (a scatter over the input, a rope appending to it, or one elementwise op
  // of the same type) and nothing reads the input afterwards. Otherwise the output is copied
  // out as usual.
  std::vector<int32_t> donated_to(nv, -1);
  for (const auto& [o, i] : g.donations) {
    ValueId v = g.outputs()[static_cast<size_t>(o)], in = g.inputs()[static_cast<size_t>(i)];
    int p = g.value(v).node;
    if (p < 0 || is_output[static_cast<size_t>(in)] || last_use[static_cast<size_t>(in)] > p) continue;
    const ir::Node& n = g.node(p);
    bool in_place = (n.op == Op::scatter && n.inputs[0] == in) || (n.op == Op::rope && n.attrs.has("append_axis") && n.inputs.back() == in) ||
                    (ir::has_trait(n.op, ir::kElementwise) && n.outputs.size() == 1 && g.type(in) == g.type(v) &&
                     std::find(n.inputs.begin(), n.inputs.end(), in) != n.inputs.end());
    if (in_place) donated_to[static_cast<size_t>(v)] = i;
  }

  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& n = g.node(i);
    for (ValueId out : n.outputs) {
      const Type& t = g.type(out);
      if (!shape_is_static(t.shape))
        throw Error(ErrorKind::internal, cat("memory planning needs static shapes; value of ", ir::op_keyword(n.op), " is ", ir::type_str(t)));
      int64_t bytes = static_cast<int64_t>(dtype_bytes(t.dtype, shape_numel(t.shape).value()));
      auto& p = g.placement[static_cast<size_t>(out)];
      if (donated_to[static_cast<size_t>(out)] >= 0) {
        p = {Placement::Kind::input, 0, bytes, donated_to[static_cast<size_t>(out)]};
        continue;
      }
      if (n.op == Op::constant) {
        p = {Placement::Kind::constant, 0, bytes, -1};
        continue;
      }
      if (opts.views && ir::has_trait(n.op, ir::kView)) {
        p = {Placement::Kind::view, 0, bytes, n.inputs[0]};
        continue;
      }
      if (opts.views && n.op == Op::slice)
        if (std::optional<int64_t> at = contiguous_slice_offset(g, n)) {
          p = {Placement::Kind::view, *at, bytes, n.inputs[0]};
          continue;
        }
      // In place: an elementwise output may take over an input buffer that dies here.
      if (opts.in_place && ir::has_trait(n.op, ir::kElementwise) && n.outputs.size() == 1) {
        for (ValueId src : n.inputs) {
          ValueId root = placement_root(g, src);
          int b = buffer_of[static_cast<size_t>(root)];
          if (b < 0 || g.type(src) != Type{g.type(src).dtype, t.shape}) continue;
          if (dtype_bytes(g.type(src).dtype, 1) != dtype_bytes(t.dtype, 1) || buffers[b].bytes != bytes) continue;
          if (buffers[b].last > i) continue;  // still read later (or is a graph output)
          bool only_here = true;           // every reader of the buffer is at or before node i
          for (size_t v = 0; v < nv && only_here; ++v)
            if (buffer_of[v] == b || (g.placement[v].kind == Placement::Kind::view && root_buffer(static_cast<ValueId>(v)) == b))
              only_here = last_use[v] <= i && !is_output[v];
          if (!only_here || (ancestry && !ancestry->after_all(i, buffers[b].touched))) continue;
          p = {Placement::Kind::arena, 0, bytes, -1};
          buffer_of[static_cast<size_t>(out)] = b;
          buffers[b].last = std::max(buffers[b].last, i);
          buffers[b].touched.push_back(i);
          break;
        }
        if (buffer_of[static_cast<size_t>(out)] >= 0) continue;
      }
      p = {Placement::Kind::arena, 0, bytes, -1};
      buffer_of[static_cast<size_t>(out)] = static_cast<int>(buffers.size());
      buffers.push_back({bytes, i, i, -1, {i}});
    }
    // Reading a value keeps its root buffer alive through this node.
    for (ValueId v : n.inputs) {
      int b = root_buffer(v);
      if (b < 0) continue;
      buffers[b].last = std::max(buffers[b].last, i);
      if (ancestry) buffers[b].touched.push_back(i);
    }
  }
  for (ValueId v : g.outputs()) {
    int b = root_buffer(v);
    if (b >= 0) buffers[b].last = n_nodes;
  }

  // Offsets: largest buffers first, each at the lowest offset free during its live range.
  std::vector<int> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<int> placed;
  int64_t arena = 0;
  for (int bi : order) {
    Buffer& b = buffers[bi];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int pi : placed) {
      const Buffer& o = buffers[pi];
      bool live_together = o.first <= b.last && b.first <= o.last;
      // apart in order but not in the dataflow: the later writer would wait for the earlier buffer
      bool unordered = ancestry && !live_together &&
                       (o.last < b.first ? !ancestry->after_all(b.first, o.touched) : !ancestry->after_all(o.first, b.touched));
      if (live_together || unordered) busy.push_back({o.offset, o.offset + align(o.bytes, opts.alignment)});
    }
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    for (const auto& [s, e] : busy) {
      if (off + align(b.bytes, opts.alignment) <= s) break;
      off = std::max(off, e);
    }
    b.offset = off;
    arena = std::max(arena, off + align(b.bytes, opts.alignment));
    placed.push_back(bi);
  }
  for (size_t v = 0; v < nv; ++v)
    if (buffer_of[v] >= 0) g.placement[v].offset = buffers[buffer_of[v]].offset;
  g.arena_bytes = arena;
  g.is_lir = true;
  after_pass(g, "plan-memory", opts.verify);
  return g;
}

}  // namespace rlx::passes
