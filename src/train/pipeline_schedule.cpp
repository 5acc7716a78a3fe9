#include "train/pipeline_schedule.h"

#include <algorithm>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

PipelineScheduleKind pipeline_schedule_kind(std::string_view name) {
  if (name == "gpipe") return PipelineScheduleKind::gpipe;
  if (name == "1f1b") return PipelineScheduleKind::one_f_one_b;
  throw Error(ErrorKind::invalid_argument, cat("unknown pipeline schedule '", name, "' (gpipe, 1f1b)"));
}

const char* pipeline_schedule_name(PipelineScheduleKind k) { return k == PipelineScheduleKind::gpipe ? "gpipe" : "1f1b"; }

std::vector<PipelineAction> pipeline_schedule(PipelineScheduleKind kind, int stage, int stages, int micro) {
  if (stages < 1 || stage < 0 || stage >= stages || micro < 1)
    throw Error(ErrorKind::invalid_argument, cat("pipeline schedule: stage ", stage, " of ", stages, " with ", micro, " micro-batches"));
  std::vector<PipelineAction> out;
  if (kind == PipelineScheduleKind::gpipe) {
    for (int m = 0; m < micro; ++m) out.push_back({true, m});
    for (int m = 0; m < micro; ++m) out.push_back({false, m});
    return out;
  }
  const int warmup = std::min(stages - 1 - stage, micro);
  for (int m = 0; m < warmup; ++m) out.push_back({true, m});
  for (int m = 0; m < micro - warmup; ++m) {
    out.push_back({true, warmup + m});
    out.push_back({false, m});
  }
  for (int m = micro - warmup; m < micro; ++m) out.push_back({false, m});
  return out;
}

int simulate_pipeline(PipelineScheduleKind kind, int stages, int micro, std::vector<int>* peak_in_flight) {
  std::vector<std::vector<PipelineAction>> plan;
  for (int s = 0; s < stages; ++s) plan.push_back(pipeline_schedule(kind, s, stages, micro));
  // done_f[s][m] / done_b[s][m]: the time step after which stage s finished that pass
  const int never = -1;
  std::vector<std::vector<int>> done_f(static_cast<size_t>(stages), std::vector<int>(static_cast<size_t>(micro), never)), done_b = done_f;
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  std::vector<int> in_flight(static_cast<size_t>(stages), 0), peak(static_cast<size_t>(stages), 0);
  int t = 0;
  for (;; ++t) {
    bool all_done = true, moved = false;
    for (int s = 0; s < stages; ++s) {
      const auto su = static_cast<size_t>(s);
      if (next[su] >= plan[su].size()) continue;
      all_done = false;
      const PipelineAction a = plan[su][next[su]];
      const auto mu = static_cast<size_t>(a.micro);
      auto ready = [&](const std::vector<std::vector<int>>& done, int from) { return done[static_cast<size_t>(from)][mu] != never && done[static_cast<size_t>(from)][mu] < t; };
      bool ok = a.forward ? (s == 0 || ready(done_f, s - 1)) : (ready(done_f, s) && (s == stages - 1 || ready(done_b, s + 1)));
      if (!ok) continue;
      (a.forward ? done_f : done_b)[su][mu] = t;
      in_flight[su] += a.forward ? 1 : -1;
      peak[su] = std::max(peak[su], in_flight[su]);
      ++next[su];
      moved = true;
    }
    if (all_done) break;
    if (!moved) {
      std::string stuck;
      for (int s = 0; s < stages; ++s)
        if (next[static_cast<size_t>(s)] < plan[static_cast<size_t>(s)].size()) {
          const PipelineAction a = plan[static_cast<size_t>(s)][next[static_cast<size_t>(s)]];
          stuck += cat(stuck.empty() ? "" : ", ", "stage ", s, " waits at ", a.forward ? "F" : "B", a.micro);
        }
      throw Error(ErrorKind::internal, cat("the ", pipeline_schedule_name(kind), " schedule of ", stages, " stages and ", micro, " micro-batches deadlocks: ", stuck));
    }
  }
  if (peak_in_flight) *peak_in_flight = peak;
  return t;
}

}  // namespace rlx::train
