// The ranks a graph's collective ops (all_reduce, all_gather, reduce_scatter, broadcast_from)
// communicate with. Kernels live in
// backends, communicators in src/dist (a higher layer), so the kernels reach the job's
// communicator through this interface: src/dist installs one (dist::GraphCollectives) for the
// lifetime of a distributed run, and a collective op with none installed is an error that says
// so — never a silent single-rank identity.
#pragma once
#include <string>

#include <functional>

#include "ir/graph.h"
#include "runtime/host_executable.h"
#include "rlx/tensor.h"

namespace rlx::runtime {

enum class CollectiveReduce { sum, max, min, avg };

class CollectiveGroup {
 public:
  virtual ~CollectiveGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place over every rank's t (contiguous host tensors).
  virtual void all_reduce(Tensor& t, CollectiveReduce op) = 0;
  // out [size · t.numel()] ← each rank's t, in rank order.
  virtual void all_gather(const Tensor& t, Tensor& out) = 0;
  // out [t.numel() / size] ← `op` over the ranks of the rank-th slice of t.
  virtual void reduce_scatter(const Tensor& t, Tensor& out, CollectiveReduce op) = 0;
  // Every rank's t ← root's t.
  virtual void broadcast(Tensor& t, int root) = 0;
  // The same on device memory, enqueued on `stream` (a cudaStream_t) in stream order. False
  // where the engine moves host memory only (Gloo, MPI): the device's kernel then stages the
  // bytes through the host.
  virtual bool all_reduce_device(void* /*data*/, int64_t /*count*/, DType, CollectiveReduce, void* /*stream*/) { return false; }
  virtual bool all_gather_device(const void* /*in*/, void* /*out*/, int64_t /*count*/, DType, void* /*stream*/) { return false; }
};

// A job of one rank: all_reduce leaves t as it is, all_gather copies it. What test_backend_ops
// runs collective nodes with (their multi-rank meaning is tested over real communicators).
class SingleRankGroup : public CollectiveGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce(Tensor&, CollectiveReduce) override {}
  void all_gather(const Tensor& t, Tensor& out) override;
  void reduce_scatter(const Tensor& t, Tensor& out, CollectiveReduce) override { all_gather(t, out); }  // its one slice
  void broadcast(Tensor&, int root) override;
};

// Process-wide: every executable of this process runs its collectives over `group` (null
// uninstalls). The caller keeps it alive while graphs run. Returns the one it replaced.
CollectiveGroup* set_collective_group(CollectiveGroup* group);
// The installed group; throws rlx::Error(invalid_argument) naming `op` when there is none.
CollectiveGroup& collective_group(const char* op);

// The kernels of the ops, shared by every host backend (they only move bytes to the engine):
// out ← all_reduce(in) (in and out may be one buffer); out ← in of every rank along `axis`.
CollectiveReduce collective_reduce(const std::string& name);  // "sum" "max" "min" "avg"
void all_reduce_host(const HostView& in, const HostView& out, CollectiveReduce op);
void all_gather_host(const HostView& in, const HostView& out, int64_t axis, int64_t ranks);
// out ← this rank's slice along `axis` of `op` over every rank's in; out ← root's in.
void reduce_scatter_host(const HostView& in, const HostView& out, CollectiveReduce op, int64_t axis, int64_t ranks);
void broadcast_host(const HostView& in, const HostView& out, int64_t root);
// A collective node split for a communication thread: the call reads `in` (copying what it
// needs) and returns the rest, which touches only `out` and may run while later kernels do.
std::function<void()> collective_start(const ir::Node& node, const HostView& in, const HostView& out);

}  // namespace rlx::runtime
