// The NCCL communicator (CUDA GPUs, one per rank): `rlx launch --backend nccl`. libnccl.so.2 is
// opened at connect time (binaries start without it, and say so when a job asks for it); the
// unique id travels through the launcher's store directory. Rank r uses GPU r mod the device
// count. Device tensors are reduced in place; host tensors are staged through device buffers.
// The graphs' collectives reach it through all_reduce_device / all_gather_device, enqueued on
// the executable's stream. NVLink multicast (NVLS) stays off unless the user sets it.
#include "dist/communicator.h"
#include "rlx/error.h"
#include "util/strings.h"

#if defined(RLX_HAVE_NCCL)
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#endif

namespace rlx::dist::detail {

#if defined(RLX_HAVE_NCCL)

namespace {

// The entry points RLX uses, from the library found at run time.
struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) init_rank;
  decltype(&ncclCommDestroy) destroy;
  decltype(&ncclCommAbort) abort;
  decltype(&ncclCommGetAsyncError) async_error;
  decltype(&ncclGetErrorString) error_string;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclSend) send;
  decltype(&ncclRecv) recv;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
};

const Nccl& nccl() {
  static const Nccl n = [] {
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) throw Error(ErrorKind::unsupported, cat("the nccl backend needs libnccl.so.2 (NVIDIA's NCCL) on the library path: ", dlerror()));
    auto sym = [&](const char* name) {
      void* p = dlsym(h, name);
      if (!p) throw Error(ErrorKind::unsupported, cat("libnccl.so.2 has no ", name, " (NCCL 2.19 or newer is needed)"));
      return p;
    };
    Nccl x;
    x.get_unique_id = reinterpret_cast<decltype(x.get_unique_id)>(sym("ncclGetUniqueId"));
    x.init_rank = reinterpret_cast<decltype(x.init_rank)>(sym("ncclCommInitRank"));
    x.destroy = reinterpret_cast<decltype(x.destroy)>(sym("ncclCommDestroy"));
    x.abort = reinterpret_cast<decltype(x.abort)>(sym("ncclCommAbort"));
    x.async_error = reinterpret_cast<decltype(x.async_error)>(sym("ncclCommGetAsyncError"));
    x.error_string = reinterpret_cast<decltype(x.error_string)>(sym("ncclGetErrorString"));
    x.all_reduce = reinterpret_cast<decltype(x.all_reduce)>(sym("ncclAllReduce"));
    x.all_gather = reinterpret_cast<decltype(x.all_gather)>(sym("ncclAllGather"));
    x.reduce_scatter = reinterpret_cast<decltype(x.reduce_scatter)>(sym("ncclReduceScatter"));
    x.broadcast = reinterpret_cast<decltype(x.broadcast)>(sym("ncclBroadcast"));
    x.send = reinterpret_cast<decltype(x.send)>(sym("ncclSend"));
    x.recv = reinterpret_cast<decltype(x.recv)>(sym("ncclRecv"));
    x.group_start = reinterpret_cast<decltype(x.group_start)>(sym("ncclGroupStart"));
    x.group_end = reinterpret_cast<decltype(x.group_end)>(sym("ncclGroupEnd"));
    return x;
  }();
  return n;
}

ncclDataType_t nccl_type(DType d, const char* what, int rank) {
  switch (d) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::i8: return ncclInt8;
    case DType::u8: return ncclUint8;
    default: throw Error(ErrorKind::unsupported, cat("rank ", rank, ": ", what, " of ", dtype_name(d), " over NCCL"));
  }
}

ncclRedOp_t nccl_op(runtime::CollectiveReduce op) {
  switch (op) {
    case runtime::CollectiveReduce::max: return ncclMax;
    case runtime::CollectiveReduce::min: return ncclMin;
    case runtime::CollectiveReduce::avg: return ncclAvg;
    default: return ncclSum;
  }
}

void cuda_check(cudaError_t e, const char* what, int rank) {
  if (e != cudaSuccess) throw Error(ErrorKind::io, cat("nccl: rank ", rank, ": ", what, ": ", cudaGetErrorString(e)));
}

// Rank 0's unique id, handed to the others through the store directory (written whole, then renamed).
ncclUniqueId exchange_id(const Rendezvous& r) {
  ncclUniqueId id{};
  const std::string path = cat(r.store, "/", r.job, ".nccl_id");
  if (r.rank == 0) {
    ncclResult_t e = nccl().get_unique_id(&id);
    if (e != ncclSuccess) throw Error(ErrorKind::io, cat("nccl: rank 0: ncclGetUniqueId: ", nccl().error_string(e)));
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof id.internal);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(ErrorKind::io, cat("nccl: rank 0 could not publish its id in ", r.store));
    return id;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(r.timeout_s);
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    if (f && f.read(id.internal, sizeof id.internal)) return id;
    if (std::chrono::steady_clock::now() > until)
      throw Error(ErrorKind::io, cat("nccl: rank ", r.rank, " of ", r.size, ": rank 0's id did not appear in ", r.store, " within ", r.timeout_s, " s"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(const Rendezvous& r) : rank_(r.rank), size_(r.size), timeout_s_(r.timeout_s) {
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off unless asked for (device notes)
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0)
      throw Error(ErrorKind::unsupported, cat("nccl: rank ", rank_, ": no usable CUDA GPU here (", e != cudaSuccess ? cudaGetErrorString(e) : "none found", ")"));
    device_ = rank_ % devices;
    cuda_check(cudaSetDevice(device_), "selecting its GPU", rank_);
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream", rank_);
    ncclUniqueId id = exchange_id(r);
    check(nccl().init_rank(&comm_, size_, id, rank_), "ncclCommInitRank (one GPU per rank: two ranks on one GPU are refused by NCCL)");
  }
  ~NcclCommunicator() override {
    if (comm_) nccl().destroy(comm_);
    if (staging_) cudaFree(staging_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }

  void all_reduce(Tensor& t, ReduceOp op) override {
    reserve(host_bytes(t), "all_reduce");
    void* p = stage_in(t, 0, "all_reduce");
    all_reduce_device(p, t.numel(), t.dtype(), op, stream_);
    stage_out(t, p, "all_reduce");
  }
  void all_gather(const Tensor& t, Tensor& out) override {
    if (out.numel() != t.numel() * size_ || out.dtype() != t.dtype()) throw Error(ErrorKind::invalid_argument, cat("rank ", rank_, ": all_gather sizes"));
    reserve(host_bytes(t) + host_bytes(out), "all_gather");
    void* in = stage_in(t, 0, "all_gather");
    void* o = place(out, host_bytes(t), "all_gather");
    all_gather_device(in, o, t.numel(), t.dtype(), stream_);
    stage_out(out, o, "all_gather");
  }
  void reduce_scatter(const Tensor& t, Tensor& out, ReduceOp op) override {
    if (t.numel() != out.numel() * size_ || out.dtype() != t.dtype()) throw Error(ErrorKind::invalid_argument, cat("rank ", rank_, ": reduce_scatter sizes"));
    reserve(host_bytes(t) + host_bytes(out), "reduce_scatter");
    void* in = stage_in(t, 0, "reduce_scatter");
    void* o = place(out, host_bytes(t), "reduce_scatter");
    check(nccl().reduce_scatter(in, o, static_cast<size_t>(out.numel()), nccl_type(t.dtype(), "reduce_scatter", rank_), nccl_op(op), comm_, stream_),
          "reduce_scatter");
    stage_out(out, o, "reduce_scatter");
  }
  void broadcast(Tensor& t, int root) override {
    reserve(host_bytes(t), "broadcast");
    void* p = stage_in(t, 0, "broadcast");
    check(nccl().broadcast(p, p, bytes(t), ncclUint8, root, comm_, stream_), "broadcast");
    stage_out(t, p, "broadcast");
  }
  void send(const Tensor& t, int dst) override {
    reserve(host_bytes(t), "send");
    void* p = stage_in(t, 0, "send");
    check(nccl().send(p, bytes(t), ncclUint8, dst, comm_, stream_), "send");
    sync("send");
  }
  void recv(Tensor& t, int src) override {
    reserve(host_bytes(t), "recv");
    void* p = place(t, 0, "recv");
    check(nccl().recv(p, bytes(t), ncclUint8, src, comm_, stream_), "recv");
    stage_out(t, p, "recv");
  }
  void barrier() override {
    Tensor one = Tensor::zeros(DType::f32, {1});
    all_reduce(one, ReduceOp::sum);
  }
  bool all_reduce_device(void* data, int64_t count, DType d, runtime::CollectiveReduce op, void* stream) override {
    check(nccl().all_reduce(data, data, static_cast<size_t>(count), nccl_type(d, "all_reduce", rank_), nccl_op(op), comm_, static_cast<cudaStream_t>(stream)),
          "all_reduce");
    return true;
  }
  bool all_gather_device(const void* in, void* out, int64_t count, DType d, void* stream) override {
    check(nccl().all_gather(in, out, static_cast<size_t>(count), nccl_type(d, "all_gather", rank_), comm_, static_cast<cudaStream_t>(stream)), "all_gather");
    return true;
  }

 private:
  static size_t bytes(const Tensor& t) { return t.nbytes(); }
  void check(ncclResult_t e, const char* what) {
    if (e == ncclSuccess || e == ncclInProgress) return;
    throw Error(ErrorKind::io, cat("nccl: rank ", rank_, " of ", size_, ": ", what, " failed: ", nccl().error_string(e)));
  }
  void sync(const char* what) {
    cudaError_t e = cudaStreamQuery(stream_);
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    while (e == cudaErrorNotReady) {  // poll, so a dead peer is an error after the timeout, not a hang
      ncclResult_t async = ncclSuccess;
      nccl().async_error(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) check(async, what);
      if (std::chrono::steady_clock::now() > until) {
        nccl().abort(comm_);
        comm_ = nullptr;
        throw Error(ErrorKind::io, cat("nccl: rank ", rank_, " of ", size_, ": ", what, " did not finish in ", timeout_s_, " s (a rank died?)"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      e = cudaStreamQuery(stream_);
    }
    cuda_check(e, what, rank_);
  }
  // Device memory for t: its own pointer on the device; for a host tensor, the staging buffer at
  // byte `at` (reserve() first makes room for every tensor of the call, so none moves).
  void reserve(size_t need, const char* what) {
    if (need <= staging_bytes_) return;
    if (staging_) cudaFree(staging_);
    staging_ = nullptr;
    staging_bytes_ = 0;
    cuda_check(cudaMalloc(&staging_, need), what, rank_);
    staging_bytes_ = need;
  }
  static size_t host_bytes(const Tensor& t) { return t.on_host() ? t.nbytes() : 0; }
  void* place(const Tensor& t, size_t at, const char* what) {
    if (!t.is_contiguous()) throw Error(ErrorKind::invalid_argument, cat("rank ", rank_, ": ", what, " needs a contiguous tensor"));
    return t.on_host() ? static_cast<char*>(staging_) + at : t.device_data();
  }
  void* stage_in(const Tensor& t, size_t at, const char* what) {
    void* p = place(t, at, what);
    if (t.on_host()) cuda_check(cudaMemcpyAsync(p, t.data(), t.nbytes(), cudaMemcpyHostToDevice, stream_), what, rank_);
    return p;
  }
  void stage_out(const Tensor& t, void* p, const char* what) {
    if (t.on_host()) cuda_check(cudaMemcpyAsync(t.data(), p, t.nbytes(), cudaMemcpyDeviceToHost, stream_), what, rank_);
    sync(what);
  }

  int rank_, size_, device_ = 0;
  double timeout_s_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> connect_nccl(const Rendezvous& r) { return std::make_unique<NcclCommunicator>(r); }

#else

std::unique_ptr<Communicator> connect_nccl(const Rendezvous&) {
  throw Error(ErrorKind::unsupported, "the nccl backend is not built into this rlx (CMake found no CUDA toolkit with nccl.h)");
}

#endif

}  // namespace rlx::dist::detail
