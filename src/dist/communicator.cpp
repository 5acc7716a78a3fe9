#include "dist/communicator.h"

#include <algorithm>
#include <cstring>


#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::dist {

ReduceOp reduce_op(std::string_view name) { return runtime::collective_reduce(std::string(name)); }

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::avg: return "avg";
  }
  return "?";
}

Rendezvous Rendezvous::from_env() {
  const Flags& f = flags();
  Rendezvous r;
  r.backend = f.RLX_DIST_BACKEND;
  r.job = f.RLX_DIST_JOB;
  r.host = f.RLX_DIST_HOST;
  r.transport = f.RLX_DIST_TRANSPORT;
  r.ib_device = f.RLX_DIST_IB_DEVICE;
  if (f.RLX_DIST_TIMEOUT <= 0) throw Error(ErrorKind::invalid_argument, cat("RLX_DIST_TIMEOUT=", f.RLX_DIST_TIMEOUT, " is not a positive number of seconds"));
  r.timeout_s = static_cast<double>(f.RLX_DIST_TIMEOUT);
  if (r.backend == "mpi") return r;  // MPI knows the rank and size
  if (f.RLX_RANK < 0 || f.RLX_WORLD_SIZE <= 0)
    throw Error(ErrorKind::invalid_argument, "this command runs as one rank of a job: start it with `rlx launch -n N -- …` (RLX_RANK and RLX_WORLD_SIZE are not set)");
  if (f.RLX_RANK >= f.RLX_WORLD_SIZE || f.RLX_WORLD_SIZE > 4096)
    throw Error(ErrorKind::invalid_argument, cat("RLX_RANK=", f.RLX_RANK, " is not a rank of RLX_WORLD_SIZE=", f.RLX_WORLD_SIZE));
  r.rank = static_cast<int>(f.RLX_RANK);
  r.size = static_cast<int>(f.RLX_WORLD_SIZE);
  r.store = f.RLX_DIST_STORE;
  if (r.store.empty()) throw Error(ErrorKind::invalid_argument, "RLX_DIST_STORE (the rendezvous directory) is not set; start the ranks with `rlx launch`");
  return r;
}

namespace {
struct SentAlready : Communicator::PendingSend {
  void wait() override {}
};
}  // namespace

std::unique_ptr<Communicator::PendingSend> Communicator::send_async(const Tensor& t, int dst) {
  send(t, dst);
  return std::make_unique<SentAlready>();
}

std::unique_ptr<Communicator> Communicator::split(int, int) {
  throw Error(ErrorKind::unsupported, cat("the ", backend(), " backend cannot split a job into groups (gloo and mpi can)"));
}

std::unique_ptr<Communicator> connect(const Rendezvous& r) {
  if (r.backend == "gloo") return detail::connect_gloo(r);
  if (r.backend == "mpi") return detail::connect_mpi(r);
  if (r.backend == "nccl") return detail::connect_nccl(r);
  throw Error(ErrorKind::invalid_argument, cat("unknown communication backend '", r.backend, "' (built: ", join(backends_built()), ")"));
}

std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text) {
  Tensor mine = Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(text.size())}, {1});
  Tensor sizes = Tensor::zeros(DType::i64, {comm.size()});
  comm.all_gather(mine, sizes);
  int64_t most = 1;
  for (int r = 0; r < comm.size(); ++r) most = std::max(most, sizes.data_as<int64_t>()[r]);
  Tensor padded = Tensor::zeros(DType::u8, {most});
  std::memcpy(padded.data(), text.data(), text.size());
  Tensor all = Tensor::zeros(DType::u8, {comm.size() * most});
  comm.all_gather(padded, all);
  std::vector<std::string> out;
  for (int r = 0; r < comm.size(); ++r)
    out.emplace_back(static_cast<const char*>(all.data()) + r * most, static_cast<size_t>(sizes.data_as<int64_t>()[r]));
  return out;
}

void require_same_config(Communicator& comm, const std::string& what, const std::string& config) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : config) h = (h ^ c) * 1099511628211ull;
  Tensor mine = Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(h)}, {1});
  Tensor all = Tensor::zeros(DType::i64, {comm.size()});
  comm.all_gather(mine, all);
  const int64_t* hs = all.data_as<int64_t>();
  int differs = -1;
  for (int r = 1; r < comm.size() && differs < 0; ++r)
    if (hs[r] != hs[0]) differs = r;
  if (differs < 0) return;
  const std::vector<std::string> texts = all_gather_text(comm, config);
  auto of = [&](int r) { return texts[static_cast<size_t>(r)].substr(0, 400); };  // enough of each to see the difference
  throw Error(ErrorKind::invalid_argument, cat("rank ", differs, " of ", comm.size(), " was started with another ", what, " than rank 0 — rank 0: ", of(0),
                                               "; rank ", differs, ": ", of(differs)));
}


namespace detail {

SplitPlace split_place(Communicator& comm, int color, int key) {
  Tensor mine = Tensor::from_vector(std::vector<int64_t>{color, key}, {2});
  Tensor all = Tensor::zeros(DType::i64, {2 * comm.size()});
  comm.all_gather(mine, all);
  const int64_t* v = all.data_as<int64_t>();
  SplitPlace p;
  for (int r = 0; r < comm.size(); ++r) {
    if (v[2 * r] != color) continue;
    ++p.size;
    if (v[2 * r + 1] < key || (v[2 * r + 1] == key && r < comm.rank())) ++p.rank;
  }
  return p;
}

void check_tensor(const Tensor& t, const char* what, int rank) {
  if (!t.on_host()) throw Error(ErrorKind::unsupported, cat("rank ", rank, ": ", what, " of a tensor on ", t.device(), " (these engines move host memory)"));
  if (!t.is_contiguous()) throw Error(ErrorKind::invalid_argument, cat("rank ", rank, ": ", what, " needs a contiguous tensor"));
  if (t.dtype() == DType::i4) throw Error(ErrorKind::unsupported, cat("rank ", rank, ": ", what, " of packed i4"));
}

void check_reducible(const Tensor& t, ReduceOp op, const char* what, int rank) {
  check_tensor(t, what, rank);
  const DType d = t.dtype();
  const bool ok = d == DType::f32 || d == DType::f64 || d == DType::i32 || d == DType::i64 || d == DType::i8 || d == DType::u8;
  if (!ok) throw Error(ErrorKind::unsupported, cat("rank ", rank, ": ", what, " ", reduce_op_name(op), " of ", dtype_name(d), " (f32, f64, i32, i64, i8, u8)"));
  if (op == ReduceOp::avg && d != DType::f32 && d != DType::f64)
    throw Error(ErrorKind::unsupported, cat("rank ", rank, ": ", what, " avg of ", dtype_name(d), " (floats only: an integer mean would round)"));
}

void check_gathered(const Tensor& part, const Tensor& whole, int size, const char* what, int rank) {
  check_tensor(part, what, rank);
  check_tensor(whole, what, rank);
  if (whole.dtype() != part.dtype() || whole.numel() != part.numel() * size)
    throw Error(ErrorKind::invalid_argument, cat("rank ", rank, ": ", what, " over ", size, " ranks pairs ", part.numel(), " elements with ", part.numel() * size, " ",
                                                 dtype_name(part.dtype()), ", got ", whole.numel(), " ", dtype_name(whole.dtype())));
}

void divide(Tensor& t, int ranks) {
  if (t.dtype() == DType::f32)
    for (float* p = t.data_as<float>(), *e = p + t.numel(); p < e; ++p) *p /= static_cast<float>(ranks);
  else
    for (double* p = t.data_as<double>(), *e = p + t.numel(); p < e; ++p) *p /= static_cast<double>(ranks);
}

}  // namespace detail

}  // namespace rlx::dist
