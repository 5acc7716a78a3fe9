// Collective communication between the ranks of one job: the interface RLX's distributed passes
// and collective ops use, over an existing engine — Gloo (TCP on loopback or a network; its
// ibverbs transport is built where libgloo has it) and MPI (Open MPI) — never a home-made
// transport. Tensors are contiguous host tensors. Reductions are exact for integer dtypes and
// follow the engine's summation order for floats; every call fails with an rlx::Error naming
// the rank and the operation (a dead peer, a timeout) instead of hanging.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlx/tensor.h"
#include "runtime/collective.h"

namespace rlx::dist {

using ReduceOp = runtime::CollectiveReduce;  // the graphs' collectives and the engines share one
ReduceOp reduce_op(std::string_view name);  // "sum" "max" "min" "avg"; throws listing them
const char* reduce_op_name(ReduceOp op);

// Where a rank finds the others: what `rlx launch` puts in the environment (RLX_RANK,
// RLX_WORLD_SIZE, RLX_DIST_BACKEND, RLX_DIST_STORE, RLX_DIST_JOB, RLX_DIST_TIMEOUT) — under
// mpirun the rank and size come from MPI itself.
struct Rendezvous {
  int rank = 0, size = 1;
  std::string backend = "gloo";  // gloo | mpi | nccl
  std::string store;             // gloo: the directory of its file store
  std::string job = "rlx";       // a prefix of every key, so another job's stale files never match
  std::string host = "127.0.0.1";  // gloo: the address this rank listens on (RLX_DIST_HOST)
  std::string transport = "tcp";   // gloo: tcp | ibverbs (RLX_DIST_TRANSPORT)
  std::string ib_device;           // gloo ibverbs: the device (RLX_DIST_IB_DEVICE; default the first)
  double timeout_s = 60;         // a peer that does not answer in this long is an error
  static Rendezvous from_env();  // throws naming the variable that is missing or malformed
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;
  // In place: every rank ends with `op` over all ranks' t (avg: floats only).
  virtual void all_reduce(Tensor& t, ReduceOp op) = 0;
  // out [size·n elements] ← each rank's t [n], in rank order.
  virtual void all_gather(const Tensor& t, Tensor& out) = 0;
  // out [n] ← `op` over the ranks of the rank-th n-element slice of t [size·n].
  virtual void reduce_scatter(const Tensor& t, Tensor& out, ReduceOp op) = 0;
  // Every rank's t ← root's t.
  virtual void broadcast(Tensor& t, int root) = 0;
  // Point to point, matched in order between each pair of ranks.
  virtual void send(const Tensor& t, int dst) = 0;
  virtual void recv(Tensor& t, int src) = 0;
  // A send that returns at once, so the caller computes (or receives) while the message goes out
  // — pipeline stages exchange activations and gradients both ways without waiting on each other.
  // wait() returns once t may change (it throws as send does); the handle keeps t alive.
  // Matched in order with the pair's blocking sends. Engines without one send before returning.
  class PendingSend {
   public:
    virtual ~PendingSend() = default;
    virtual void wait() = 0;
  };
  virtual std::unique_ptr<PendingSend> send_async(const Tensor& t, int dst);
  virtual void barrier() = 0;
  // Every rank calls it: the ranks that pass the same `color` form a communicator of their own,
  // ranked by `key` (ties: by rank here) — a pipeline stage's tensor-parallel group, say. Gloo: a
  // sub-job of the same file store; MPI: MPI_Comm_split. Engines without one throw (unsupported).
  virtual std::unique_ptr<Communicator> split(int color, int key);
  // Device memory on a CUDA stream, for engines that reduce it (NCCL); false: host memory only.
  virtual bool all_reduce_device(void* /*data*/, int64_t /*count*/, DType, runtime::CollectiveReduce, void* /*stream*/) { return false; }
  virtual bool all_gather_device(const void* /*in*/, void* /*out*/, int64_t /*count*/, DType, void* /*stream*/) { return false; }
};

// Connects this rank to the job (blocks until every rank has arrived, or the timeout).
std::unique_ptr<Communicator> connect(const Rendezvous& r);
// Every rank states its configuration (the model, layout, prompt, batch — whatever must agree;
// `what` names it: "training configuration");
// returns when all are the same, else throws rlx::Error(invalid_argument) on every rank naming
// the first rank whose differs and both texts — before a mismatch could reach a collective as
// a size mismatch (an engine abort) or as silently wrong numbers.
void require_same_config(Communicator& comm, const std::string& what, const std::string& config);
// Every rank's text, in rank order, on every rank (a report each rank wrote of itself).
std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text);
// The engines this build has ("gloo", "mpi", "nccl").
std::vector<std::string> backends_built();

namespace detail {
// Checks shared by the engines: contiguous host tensors, dtypes a reduction takes, matching sizes.
void check_tensor(const Tensor& t, const char* what, int rank);
void check_reducible(const Tensor& t, ReduceOp op, const char* what, int rank);
// all_gather's output holds size × t; reduce_scatter's t holds size × out — same dtype.
void check_gathered(const Tensor& part, const Tensor& whole, int size, const char* what, int rank);
// avg = sum / ranks, in place (f32 or f64: check_reducible refuses avg of anything else).
void divide(Tensor& t, int ranks);
// This rank's place in its split group: the ranks of its color, ordered by (key, rank).
struct SplitPlace {
  int rank = 0, size = 0;
};
SplitPlace split_place(Communicator& comm, int color, int key);
std::unique_ptr<Communicator> connect_gloo(const Rendezvous& r);
std::unique_ptr<Communicator> connect_mpi(const Rendezvous& r);
std::unique_ptr<Communicator> connect_nccl(const Rendezvous& r);
}  // namespace detail

}  // namespace rlx::dist
