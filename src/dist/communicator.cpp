#include "dist/communicator.h"

#include <cstdlib>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::dist {

ReduceOp reduce_op(std::string_view name) {
  if (name == "sum") return ReduceOp::sum;
  if (name == "max") return ReduceOp::max;
  if (name == "min") return ReduceOp::min;
  if (name == "avg") return ReduceOp::avg;
  throw Error(ErrorKind::invalid_argument, cat("unknown reduction '", name, "' (sum, max, min, avg)"));
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::avg: return "avg";
  }
  return "?";
}

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int env_int(const char* name, int fallback) {
  const std::string v = env(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (*end || x < 0 || x > 1 << 20) throw Error(ErrorKind::invalid_argument, cat(name, "=", v, " is not a rank count"));
  return static_cast<int>(x);
}

}  // namespace

Rendezvous Rendezvous::from_env() {
  Rendezvous r;
  r.backend = env("RLX_DIST_BACKEND").empty() ? "gloo" : env("RLX_DIST_BACKEND");
  if (!env("RLX_DIST_JOB").empty()) r.job = env("RLX_DIST_JOB");
  if (!env("RLX_DIST_HOST").empty()) r.host = env("RLX_DIST_HOST");
  if (!env("RLX_DIST_TIMEOUT").empty()) {
    r.timeout_s = std::atof(env("RLX_DIST_TIMEOUT").c_str());
    if (!(r.timeout_s > 0)) throw Error(ErrorKind::invalid_argument, cat("RLX_DIST_TIMEOUT=", env("RLX_DIST_TIMEOUT"), " is not a positive number of seconds"));
  }
  if (r.backend == "mpi") return r;  // MPI knows the rank and size
  if (env("RLX_RANK").empty() || env("RLX_WORLD_SIZE").empty())
    throw Error(ErrorKind::invalid_argument, "this command runs as one rank of a job: start it with `rlx launch -n N -- …` (RLX_RANK and RLX_WORLD_SIZE are not set)");
  r.rank = env_int("RLX_RANK", 0);
  r.size = env_int("RLX_WORLD_SIZE", 1);
  if (r.size < 1 || r.rank >= r.size) throw Error(ErrorKind::invalid_argument, cat("RLX_RANK=", r.rank, " is not a rank of RLX_WORLD_SIZE=", r.size));
  r.store = env("RLX_DIST_STORE");
  if (r.store.empty()) throw Error(ErrorKind::invalid_argument, "RLX_DIST_STORE (the rendezvous directory) is not set; start the ranks with `rlx launch`");
  return r;
}

std::unique_ptr<Communicator> connect(const Rendezvous& r) {
  if (r.backend == "gloo") return detail::connect_gloo(r);
  if (r.backend == "mpi") return detail::connect_mpi(r);
  throw Error(ErrorKind::invalid_argument, cat("unknown communication backend '", r.backend, "' (built: ", join(backends_built()), ")"));
}

namespace detail {

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

}  // namespace detail

}  // namespace rlx::dist
