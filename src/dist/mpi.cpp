// The MPI communicator (Open MPI): started by `rlx launch --backend mpi` through mpirun, which
// gives the rank and size and stops the whole job when one rank dies.
#include "dist/communicator.h"
#include "rlx/error.h"
#include "util/strings.h"

#if defined(RLX_HAVE_MPI)
#define OMPI_SKIP_MPICXX 1  // the C API only (Open MPI's deprecated C++ bindings need their own library)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstring>
#endif

namespace rlx::dist::detail {

#if defined(RLX_HAVE_MPI)

namespace {

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::i8: return MPI_INT8_T;
    default: return MPI_UINT8_T;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
    default: return MPI_SUM;
  }
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      owner_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  // A group split off the job (its own communicator; the job's owner finalizes MPI).
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_WORLD && !finalized) MPI_Comm_free(&comm_);
    if (owner_ && !finalized) MPI_Finalize();
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    check(MPI_Comm_split(comm_, color, key, &sub), "split");
    return std::make_unique<MpiCommunicator>(sub);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  void all_reduce(Tensor& t, ReduceOp op) override {
    check_reducible(t, op, "all_reduce", rank_);
    check(MPI_Allreduce(MPI_IN_PLACE, t.data(), count(t), mpi_type(t.dtype()), mpi_op(op), comm_), "all_reduce");
    if (op == ReduceOp::avg) divide(t, size_);
  }
  void all_gather(const Tensor& t, Tensor& out) override {
    check_gathered(t, out, size_, "all_gather", rank_);
    check(MPI_Allgather(t.data(), bytes(t), MPI_BYTE, out.data(), bytes(t), MPI_BYTE, comm_), "all_gather");
  }
  void reduce_scatter(const Tensor& t, Tensor& out, ReduceOp op) override {
    check_reducible(t, op, "reduce_scatter", rank_);
    check_gathered(out, t, size_, "reduce_scatter", rank_);
    check(MPI_Reduce_scatter_block(t.data(), out.data(), count(out), mpi_type(t.dtype()), mpi_op(op), comm_), "reduce_scatter");
    if (op == ReduceOp::avg) divide(out, size_);
  }
  void broadcast(Tensor& t, int root) override {
    check_tensor(t, "broadcast", rank_);
    check_rank(root, "broadcast from");
    check(MPI_Bcast(t.data(), bytes(t), MPI_BYTE, root, comm_), "broadcast");
  }
  void send(const Tensor& t, int dst) override {
    check_tensor(t, "send", rank_);
    check_rank(dst, "send to");
    check(MPI_Send(t.data(), bytes(t), MPI_BYTE, dst, 0, comm_), "send");
  }
  std::unique_ptr<PendingSend> send_async(const Tensor& t, int dst) override {
    check_tensor(t, "send", rank_);
    check_rank(dst, "send to");
    auto pending = std::make_unique<MpiSend>(this, t);
    check(MPI_Isend(pending->tensor.data(), bytes(t), MPI_BYTE, dst, 0, comm_, &pending->request), "send");
    return pending;
  }
  void recv(Tensor& t, int src) override {
    check_tensor(t, "recv", rank_);
    check_rank(src, "recv from");
    check(MPI_Recv(t.data(), bytes(t), MPI_BYTE, src, 0, comm_, MPI_STATUS_IGNORE), "recv");
  }
  void barrier() override { check(MPI_Barrier(comm_), "barrier"); }

 private:
  struct MpiSend : PendingSend {
    MpiSend(MpiCommunicator* c, Tensor t) : comm(c), tensor(std::move(t)) {}
    void wait() override {
      if (request == MPI_REQUEST_NULL) return;
      comm->check(MPI_Wait(&request, MPI_STATUS_IGNORE), "send");
    }
    ~MpiSend() override {
      try {
        wait();
      } catch (...) {
      }
    }
    MpiCommunicator* comm;
    Tensor tensor;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  int count(const Tensor& t) const {
    if (t.numel() > INT32_MAX) throw Error(ErrorKind::unsupported, cat("rank ", rank_, ": MPI counts are int: ", t.numel(), " elements in one call"));
    return static_cast<int>(t.numel());
  }
  int bytes(const Tensor& t) const {
    if (t.nbytes() > static_cast<size_t>(INT32_MAX)) throw Error(ErrorKind::unsupported, cat("rank ", rank_, ": MPI counts are int: ", t.nbytes(), " bytes in one call"));
    return static_cast<int>(t.nbytes());
  }
  void check_rank(int r, const char* what) const {
    if (r < 0 || r >= size_) throw Error(ErrorKind::invalid_argument, cat("rank ", rank_, ": ", what, " rank ", r, " of a job of ", size_));
  }
  void check(int rc, const char* what) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, msg, &n);
    throw Error(ErrorKind::io, cat("mpi: rank ", rank_, " of ", size_, ": ", what, " failed: ", std::string(msg, static_cast<size_t>(n))));
  }
  MPI_Comm comm_ = MPI_COMM_WORLD;
  int rank_ = 0, size_ = 1;
  bool owner_ = false;
};

}  // namespace

std::unique_ptr<Communicator> connect_mpi(const Rendezvous&) { return std::make_unique<MpiCommunicator>(); }

#else

std::unique_ptr<Communicator> connect_mpi(const Rendezvous&) {
  throw Error(ErrorKind::unsupported, "this rlx was built without MPI (apt-get install libopenmpi-dev openmpi-bin, then rebuild)");
}

#endif

}  // namespace rlx::dist::detail

namespace rlx::dist {

std::vector<std::string> backends_built() {
  std::vector<std::string> b;
#if defined(RLX_HAVE_GLOO)
  b.push_back("gloo");
#endif
#if defined(RLX_HAVE_MPI)
  b.push_back("mpi");
#endif
#if defined(RLX_HAVE_NCCL)
  b.push_back("nccl");
#endif
  return b;
}

}  // namespace rlx::dist
