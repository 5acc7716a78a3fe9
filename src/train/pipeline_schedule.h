// Pipeline-parallel training, part two: the order in which one stage runs the forward and
// backward passes of a step's micro-batches.
//   GPipe — every forward, then every backward (in the same order): simple; a stage keeps the
//   inputs of all M micro-batches until their backward.
//   1F1B (PipeDream-flush) — stage s runs min(S−1−s, M) forwards to fill the pipe, then
//   alternates one forward and one backward, then drains: the same bubble as GPipe but at most
//   S−s micro-batches in flight, so memory no longer grows with M.
// Sends never wait for the receiver (Communicator::send_async) and each pair of ranks matches
// messages in order, so a schedule is deadlock-free when each stage's receives come in the order
// its neighbour sends — simulate() checks exactly that.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace rlx::train {

enum class PipelineScheduleKind { gpipe, one_f_one_b };
PipelineScheduleKind pipeline_schedule_kind(std::string_view name);  // "gpipe" | "1f1b"; throws listing them
const char* pipeline_schedule_name(PipelineScheduleKind k);

struct PipelineAction {
  bool forward = true;
  int micro = 0;
};

// What stage `stage` of `stages` runs for `micro` micro-batches, in order: every micro-batch's
// forward once and its backward once, each backward after its forward.
std::vector<PipelineAction> pipeline_schedule(PipelineScheduleKind kind, int stage, int stages, int micro);

// Runs every stage's schedule against the others as the ranks would — a forward waits for the
// previous stage's forward of that micro-batch, a backward for the next stage's backward —
// in time steps of one action each. Returns the steps the whole step takes, or throws
// rlx::Error(internal) naming the stuck stages if the schedules deadlock. `peak_in_flight`
// (optional) gets, per stage, the most micro-batches forwarded and not yet backwarded at once.
int simulate_pipeline(PipelineScheduleKind kind, int stages, int micro, std::vector<int>* peak_in_flight = nullptr);

}  // namespace rlx::train
