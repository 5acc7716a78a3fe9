#include "backends/cuda/megakernel_plan.h"

#include <algorithm>

#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

bool megakernel_kind_chosen(MegaKind kind, const std::string& list) {
  if (list == "all" || list.empty()) return true;
  const char* name = kind == MegaKind::gemv_half || kind == MegaKind::gemv_blocks ? "gemv"
                     : kind == MegaKind::rope || kind == MegaKind::norm_rope   ? "rope"
                     : kind == MegaKind::scatter                                ? "scatter"
                     : kind == MegaKind::attention                              ? "attention"
                                                                                : "binary";
  bool chosen = false;
  for (const std::string& item : split(list, ',')) {
    if (item != "gemv" && item != "rope" && item != "scatter" && item != "attention" && item != "binary")
      throw Error(ErrorKind::invalid_argument, cat("RLX_CUDA_MEGAKERNEL_OPS: '", item, "' is not one of all, gemv, rope, scatter, attention, binary"));
    chosen = chosen || item == name;
  }
  return chosen;
}

bool megakernel_kind_chosen(MegaKind kind) { return megakernel_kind_chosen(kind, flags().RLX_CUDA_MEGAKERNEL_OPS); }

std::vector<MegaStretch> plan_mega_stretches(std::vector<MegaOp>& ops, const std::vector<bool>& ok, const std::vector<StepAccess>& acc, int grid,
                                             int min_run) {
  std::vector<MegaStretch> out;
  const size_t n = ops.size();
  for (size_t i = 0; i < n;) {
    if (!ok[i]) {
      ++i;
      continue;
    }
    size_t e = i;
    while (e < n && ok[e]) ++e;
    // The dependencies within the whole run of ops, once. A stretch keeps an op's dependencies on
    // its own ops; those on ops before it hold by stream order (the kernel before it finished), and
    // every chain implying a dependency inside the stretch runs through ops inside it.
    const std::vector<std::vector<int>> deps = step_dependencies(std::vector<StepAccess>(acc.begin() + static_cast<std::ptrdiff_t>(i), acc.begin() + static_cast<std::ptrdiff_t>(e)));
    MegaStretch s{i, i, -1, -1};
    auto close = [&](size_t end) {
      s.end = end;
      if (end - s.first >= static_cast<size_t>(min_run)) out.push_back({s.first, end, std::max(s.x, 0), std::max(s.w, 0)});
    };
    for (size_t j = i; j < e; ++j) {
      std::vector<size_t> inside;  // the ops of the stretch j waits for
      for (int d : deps[j - i])
        if (i + static_cast<size_t>(d) >= s.first) inside.push_back(i + static_cast<size_t>(d));
      const MegaNeeds need = megakernel_needs(ops[j]);
      const bool other_variant = (need.x >= 0 && s.x >= 0 && need.x != s.x) || (need.w >= 0 && s.w >= 0 && need.w != s.w);
      if (other_variant || inside.size() > static_cast<size_t>(kMegaDeps)) {  // a new stretch from here
        close(j);
        s = {j, j, -1, -1};
        inside.clear();
      }
      if (need.x >= 0) s.x = need.x;
      if (need.w >= 0) s.w = need.w;
      MegaOp& op = ops[j];
      op.n_deps = static_cast<int>(inside.size());
      for (size_t k = 0; k < inside.size(); ++k) {
        op.deps[k] = static_cast<int>(inside[k] - s.first);
        op.need[k] = static_cast<unsigned>(std::min<int64_t>(ops[inside[k]].tiles, grid));
      }
    }
    close(e);
    i = e;
  }
  for (const MegaStretch& s : out) {
    int64_t first_block = 0;  // each op's tiles start on the block after the last op's
    for (size_t k = s.first; k < s.end; ++k) {
      ops[k].first_block = first_block;
      first_block = (first_block + ops[k].tiles) % grid;
    }
  }
  return out;
}

}  // namespace rlx::backends::cuda
