#include "runtime/collective.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::runtime {

namespace {
std::atomic<CollectiveGroup*> g_group{nullptr};
}

CollectiveGroup* set_collective_group(CollectiveGroup* group) { return g_group.exchange(group); }

CollectiveGroup& collective_group(const char* op) {
  CollectiveGroup* g = g_group.load();
  if (!g)
    throw Error(ErrorKind::invalid_argument,
                cat(op, ": this process has no communicator — a graph with collectives runs as one rank of `rlx launch -n N -- …` "
                        "(or after dist::GraphCollectives connects one)"));
  return *g;
}

}  // namespace rlx::runtime

namespace rlx::runtime {

namespace {
Tensor view_of(const HostView& v) { return Tensor::wrap(v.dtype, v.shape, v.data, nullptr); }
}  // namespace

void SingleRankGroup::all_gather(const Tensor& t, Tensor& out) {
  if (out.nbytes() != t.nbytes()) throw Error(ErrorKind::internal, "all_gather of one rank: the output is not the input's size");
  std::memcpy(out.data(), t.contiguous().data(), t.nbytes());
}

void SingleRankGroup::broadcast(Tensor&, int root) {
  if (root != 0) throw Error(ErrorKind::invalid_argument, cat("broadcast from rank ", root, " in a job of one rank"));
}

CollectiveReduce collective_reduce(const std::string& name) {
  if (name == "sum") return CollectiveReduce::sum;
  if (name == "max") return CollectiveReduce::max;
  if (name == "min") return CollectiveReduce::min;
  if (name == "avg") return CollectiveReduce::avg;
  throw Error(ErrorKind::invalid_argument, cat("unknown reduction '", name, "' (sum, max, min, avg)"));
}

void all_reduce_host(const HostView& in, const HostView& out, CollectiveReduce op) {
  CollectiveGroup& g = collective_group("all_reduce");
  if (in.data != out.data) std::memcpy(out.data, in.data, static_cast<size_t>(in.numel) * dtype_size(in.dtype));
  Tensor t = view_of(out);
  g.all_reduce(t, op);
}

void all_gather_host(const HostView& in, const HostView& out, int64_t axis, int64_t ranks) {
  CollectiveGroup& g = collective_group("all_gather");
  if (g.size() != ranks)
    throw Error(ErrorKind::invalid_argument, cat("all_gather: the graph gathers over ", ranks, " ranks but the job has ", g.size()));
  // The engine gathers whole blocks [ranks][in]; the op concatenates along `axis`:
  // block r's rows [outer][n·inner] land at columns r·n·inner of each of out's outer rows.
  Tensor blocks = Tensor::zeros(in.dtype, {ranks, in.numel});
  g.all_gather(view_of(in), blocks);
  int64_t outer = 1, row = static_cast<int64_t>(dtype_size(in.dtype));
  for (int64_t d = 0; d < axis; ++d) outer *= in.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis); d < in.shape.size(); ++d) row *= in.shape[d];
  const auto* src = static_cast<const char*>(blocks.data());
  auto* dst = static_cast<char*>(out.data);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (o * ranks + r) * row, src + (r * outer + o) * row, static_cast<size_t>(row));
}

void reduce_scatter_host(const HostView& in, const HostView& out, CollectiveReduce op, int64_t axis, int64_t ranks) {
  CollectiveGroup& g = collective_group("reduce_scatter");
  if (g.size() != ranks)
    throw Error(ErrorKind::invalid_argument, cat("reduce_scatter: the graph scatters over ", ranks, " ranks but the job has ", g.size()));
  // The engine scatters whole blocks of the flat input; the op slices along `axis`: the blocks are
  // in's [outer][ranks][row] regrouped as [ranks][outer][row] (all_gather's interleave, reversed).
  int64_t outer = 1, row = static_cast<int64_t>(dtype_size(in.dtype));
  for (int64_t d = 0; d < axis; ++d) outer *= in.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis); d < in.shape.size(); ++d) row *= in.shape[d];
  row /= ranks;
  Tensor blocks = Tensor::zeros(in.dtype, {in.numel});
  const auto* src = static_cast<const char*>(in.data);
  auto* dst = static_cast<char*>(blocks.data());
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (r * outer + o) * row, src + (o * ranks + r) * row, static_cast<size_t>(row));
  Tensor mine = view_of(out);
  g.reduce_scatter(blocks, mine, op);
}

void broadcast_host(const HostView& in, const HostView& out, int64_t root) {
  CollectiveGroup& g = collective_group("broadcast_from");
  if (root >= g.size()) throw Error(ErrorKind::invalid_argument, cat("broadcast_from rank ", root, " in a job of ", g.size(), " ranks"));
  if (in.data != out.data) std::memcpy(out.data, in.data, static_cast<size_t>(in.numel) * dtype_size(in.dtype));
  Tensor t = view_of(out);
  g.broadcast(t, static_cast<int>(root));
}

std::function<void()> collective_start(const ir::Node& node, const HostView& in, const HostView& out) {
  if (!ir::has_trait(node.op, ir::kCollective)) throw Error(ErrorKind::internal, cat("collective_start: ", ir::op_name(node.op), " is not a collective"));
  const size_t bytes = static_cast<size_t>(in.numel) * dtype_size(in.dtype);
  if (node.op == ir::Op::all_reduce) {
    CollectiveGroup* g = &collective_group("all_reduce");
    CollectiveReduce op = collective_reduce(node.attrs.s("op"));
    if (in.data != out.data) std::memcpy(out.data, in.data, bytes);
    return [g, op, t = view_of(out)]() mutable { g->all_reduce(t, op); };
  }
  // The others read a copy of their input: later kernels may reuse its bytes meanwhile.
  collective_group(ir::op_name(node.op));
  auto copy = std::make_shared<std::vector<char>>(static_cast<const char*>(in.data), static_cast<const char*>(in.data) + bytes);
  HostView mine = in;
  mine.data = copy->data();
  int64_t axis = node.attrs.has("axis") ? node.attrs.i("axis") : 0;
  if (axis < 0) axis += static_cast<int64_t>(in.shape.size());
  if (node.op == ir::Op::all_gather) return [copy, mine, out, axis, ranks = node.attrs.i("ranks")] { all_gather_host(mine, out, axis, ranks); };
  if (node.op == ir::Op::reduce_scatter)
    return [copy, mine, out, axis, op = collective_reduce(node.attrs.s("op")), ranks = node.attrs.i("ranks")] { reduce_scatter_host(mine, out, op, axis, ranks); };
  if (node.op == ir::Op::broadcast_from) return [copy, mine, out, root = node.attrs.i("root")] { broadcast_host(mine, out, root); };
  throw Error(ErrorKind::internal, cat("collective_start: no host path for ", ir::op_name(node.op)));
}

}  // namespace rlx::runtime
