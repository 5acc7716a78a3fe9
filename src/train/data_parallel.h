// Data-parallel training as one graph: the forward with its parameters wrapped in `replicated`
// buckets, whose gradient rule averages each bucket over the ranks (one all_reduce). Autodiff
// then emits a bucket's all-reduce as soon as the backward has finished its gradients — the
// last layers' first, as torch's DDP orders them — and the executor sends it while the backward
// goes on (the communication thread of runtime/host_executable). The optimizer, clipping and
// loss scaling that follow see the averaged gradients, identical on every rank.
#pragma once
#include <cstdint>

#include "ir/graph.h"

namespace rlx::train {

// forward: inputs = [params…, data…]. Each parameter is replaced, at the node that first uses it,
// by its output of a replicated(…) node; parameters are bucketed in reverse order of first use,
// up to `bucket_bytes` of gradient (f32) per bucket (a larger parameter gets a bucket of its own).
ir::Graph replicate_parameters(const ir::Graph& forward, size_t num_params, int64_t bucket_bytes);

}  // namespace rlx::train
