#include "train/data_parallel.h"

#include <algorithm>
#include <map>

#include "passes/rewrite.h"
#include "util/strings.h"

namespace rlx::train {

ir::Graph replicate_parameters(const ir::Graph& forward, size_t num_params, int64_t bucket_bytes) {
  // Where each parameter is first used (node index; unused ones stay out of every bucket).
  std::vector<int> first_use(num_params, -1);
  for (int i = 0; i < forward.num_nodes(); ++i)
    for (ir::ValueId v : forward.node(i).inputs)
      for (size_t p = 0; p < num_params; ++p)
        if (forward.inputs()[p] == v && first_use[p] < 0) first_use[p] = i;
  std::vector<size_t> order;
  for (size_t p = 0; p < num_params; ++p)
    if (first_use[p] >= 0) order.push_back(p);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first_use[a] > first_use[b]; });
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  for (size_t p : order) {
    const int64_t bytes = 4 * shape_numel(forward.type(forward.inputs()[p]).shape).value();
    if (buckets.empty() || filled + bytes > bucket_bytes) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(p);
    filled += bytes;
  }
  std::vector<int> bucket_of(num_params, -1);
  for (size_t k = 0; k < buckets.size(); ++k)
    for (size_t p : buckets[k]) bucket_of[p] = static_cast<int>(k);

  // Copy the graph; the first node reading a parameter of a bucket not yet emitted emits it.
  std::vector<std::vector<ir::ValueId>> emitted(buckets.size());
  passes::Rule wrap{"replicate-parameters", [&](passes::RewriteBuilder& b, ir::Op op, const std::vector<ir::ValueId>& in,
                                                const ir::Attrs& attrs) -> std::optional<std::vector<ir::ValueId>> {
    const std::vector<ir::ValueId>& params = b.graph().inputs();
    std::vector<ir::ValueId> args = in;
    bool changed = false;
    for (ir::ValueId& v : args)
      for (size_t p = 0; p < num_params; ++p) {
        if (params[p] != v || bucket_of[p] < 0) continue;
        auto k = static_cast<size_t>(bucket_of[p]);
        if (emitted[k].empty()) {
          std::vector<ir::ValueId> members;
          for (size_t q : buckets[k]) members.push_back(params[q]);
          emitted[k] = b.emit_plain(ir::Op::replicated, members, {});
        }
        v = emitted[k][static_cast<size_t>(std::find(buckets[k].begin(), buckets[k].end(), p) - buckets[k].begin())];
        changed = true;
        break;
      }
    if (!changed) return std::nullopt;
    return b.emit_plain(op, args, attrs, b.inherited_path());
  }};
  return passes::rewrite(forward, {wrap}, "replicate-parameters");
}

}  // namespace rlx::train
