// The Gloo communicator: TCP pairs between every two ranks, rendezvous through a file store in
// the directory `rlx launch` made (keys prefixed by the job id), each collective with the
// rendezvous timeout — so a dead peer is an error naming the rank and the operation, not a hang.
#include "dist/communicator.h"
#include "rlx/error.h"
#include "util/strings.h"

#if defined(RLX_HAVE_GLOO)
#include <gloo/config.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#if GLOO_HAVE_TRANSPORT_IBVERBS
#include <gloo/transport/ibverbs/device.h>
#endif

#include <chrono>
#include <cstring>
#endif

namespace rlx::dist::detail {

#if defined(RLX_HAVE_GLOO)

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <class T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::max: return &gloo::max<T>;
    case ReduceOp::min: return &gloo::min<T>;
    default: return &gloo::sum<T>;  // avg: sum, then divided
  }
}

ReduceFn reduce_fn(DType d, ReduceOp op) {
  switch (d) {
    case DType::f32: return reduce_fn<float>(op);
    case DType::f64: return reduce_fn<double>(op);
    case DType::i32: return reduce_fn<int32_t>(op);
    case DType::i64: return reduce_fn<int64_t>(op);
    case DType::i8: return reduce_fn<int8_t>(op);
    default: return reduce_fn<uint8_t>(op);
  }
}

// The transport: TCP (RLX_DIST_TRANSPORT unset or "tcp"), or InfiniBand/RoCE verbs ("ibverbs",
// compiled in where libgloo has it; the first device unless RLX_DIST_IB_DEVICE names one).
std::shared_ptr<gloo::transport::Device> make_device(const Rendezvous& r) {
  if (r.transport == "tcp") {
    gloo::transport::tcp::attr attr;
    attr.hostname = r.host;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  if (r.transport == "ibverbs") {
#if GLOO_HAVE_TRANSPORT_IBVERBS
    const std::vector<std::string> names = gloo::transport::ibverbs::getDeviceNames();
    if (names.empty()) throw Error(ErrorKind::unsupported, "RLX_DIST_TRANSPORT=ibverbs: this machine has no InfiniBand/RoCE device (ibv_get_device_list is empty)");
    gloo::transport::ibverbs::attr attr;
    attr.name = r.ib_device.empty() ? names[0] : r.ib_device;
    attr.port = 1;
    attr.index = 0;
    return gloo::transport::ibverbs::CreateDevice(attr);
#else
    throw Error(ErrorKind::unsupported, "RLX_DIST_TRANSPORT=ibverbs: this libgloo was built without its ibverbs transport");
#endif
  }
  throw Error(ErrorKind::invalid_argument, cat("RLX_DIST_TRANSPORT=", r.transport, " (tcp, ibverbs)"));
}

class GlooCommunicator : public Communicator {
 public:
  explicit GlooCommunicator(const Rendezvous& r) : rendezvous_(r), rank_(r.rank), size_(r.size), timeout_(static_cast<int64_t>(r.timeout_s * 1000)) {
    guard("rendezvous", [&] {
      auto device = make_device(r);
      gloo::rendezvous::FileStore files(r.store);
      gloo::rendezvous::PrefixStore store(r.job, files);
      ctx_ = std::make_shared<gloo::rendezvous::Context>(r.rank, r.size);
      ctx_->setTimeout(timeout_);
      ctx_->connectFullMesh(store, device);
    });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }

  void all_reduce(Tensor& t, ReduceOp op) override {
    check_reducible(t, op, "all_reduce", rank_);
    if (t.numel() == 0) return;
    if (size_ == 2 && t.nbytes() <= kExchangeBytes) {
      exchange_reduce(t, op);
      if (op == ReduceOp::avg) divide(t, size_);
      return;
    }
    guard("all_reduce", [&] {
      gloo::AllreduceOptions o(ctx_);
      set_output(o, t);
      o.setReduceFunction(reduce_fn(t.dtype(), op));
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::allreduce(o);
    });
    if (op == ReduceOp::avg) divide(t, size_);
  }

  void all_gather(const Tensor& t, Tensor& out) override {
    check_gathered(t, out, size_, "all_gather", rank_);
    guard("all_gather", [&] {
      gloo::AllgatherOptions o(ctx_);
      o.setInput(static_cast<uint8_t*>(t.data()), t.nbytes());
      o.setOutput(static_cast<uint8_t*>(out.data()), out.nbytes());
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  // Gloo's new-style API has no reduce-scatter: an all-reduce of the whole tensor, then this
  // rank's slice (twice the traffic of a ring reduce-scatter; correct for every op).
  void reduce_scatter(const Tensor& t, Tensor& out, ReduceOp op) override {
    check_reducible(t, op, "reduce_scatter", rank_);
    check_gathered(out, t, size_, "reduce_scatter", rank_);
    Tensor whole = t.clone();
    all_reduce(whole, op);
    std::memcpy(out.data(), static_cast<const uint8_t*>(whole.data()) + out.nbytes() * static_cast<size_t>(rank_), out.nbytes());
  }

  void broadcast(Tensor& t, int root) override {
    check_tensor(t, "broadcast", rank_);
    check_rank(root, "broadcast from");
    guard("broadcast", [&] {
      gloo::BroadcastOptions o(ctx_);
      o.setOutput(static_cast<uint8_t*>(t.data()), t.nbytes());
      o.setRoot(root);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::broadcast(o);
    });
  }

  void send(const Tensor& t, int dst) override {
    check_tensor(t, "send", rank_);
    check_rank(dst, "send to");
    guard(cat("send to rank ", dst).c_str(), [&] {
      auto buf = ctx_->createUnboundBuffer(t.data(), t.nbytes());
      buf->send(dst, slot(rank_, dst));
      if (!buf->waitSend(timeout_)) throw Error(ErrorKind::io, "timed out");
    });
  }

  // The buffer is posted now; Gloo's transport thread writes it once the peer has posted the
  // matching receive.
  std::unique_ptr<PendingSend> send_async(const Tensor& t, int dst) override {
    check_tensor(t, "send", rank_);
    check_rank(dst, "send to");
    auto pending = std::make_unique<GlooSend>(this, t, dst);
    guard(cat("send to rank ", dst).c_str(), [&] {
      pending->buf = ctx_->createUnboundBuffer(pending->tensor.data(), pending->tensor.nbytes());
      pending->buf->send(dst, slot(rank_, dst));
    });
    return pending;
  }

  void recv(Tensor& t, int src) override {
    check_tensor(t, "recv", rank_);
    check_rank(src, "recv from");
    guard(cat("recv from rank ", src).c_str(), [&] {
      auto buf = ctx_->createUnboundBuffer(t.data(), t.nbytes());
      buf->recv(src, slot(src, rank_));
      if (!buf->waitRecv(timeout_)) throw Error(ErrorKind::io, "timed out");
    });
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    SplitPlace place = split_place(*this, color, key);
    Rendezvous sub = rendezvous_;
    sub.rank = place.rank;
    sub.size = place.size;
    sub.job = cat(rendezvous_.job, ".split", splits_++, ".", color);  // every rank counts its splits alike
    return std::make_unique<GlooCommunicator>(sub);
  }

  void barrier() override {
    guard("barrier", [&] {
      gloo::BarrierOptions o(ctx_);
      o.setTag(next_tag());
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

 private:
  Rendezvous rendezvous_;  // how this job met: a split meets the same way, under a sub-job
  int splits_ = 0;
  struct GlooSend : PendingSend {
    GlooSend(GlooCommunicator* c, Tensor t, int d) : comm(c), tensor(std::move(t)), dst(d) {}
    void wait() override {
      if (!buf) return;
      comm->guard(cat("send to rank ", dst).c_str(), [&] {
        if (!buf->waitSend(comm->timeout_)) throw Error(ErrorKind::io, "timed out");
      });
      buf.reset();
    }
    ~GlooSend() override {  // an unwaited send (an error unwinding) must not outlive its buffer silently
      try {
        wait();
      } catch (...) {
      }
    }
    GlooCommunicator* comm;
    Tensor tensor;
    int dst;
    std::unique_ptr<gloo::transport::UnboundBuffer> buf;
  };
  template <class Options>
  void set_output(Options& o, Tensor& t) {
    switch (t.dtype()) {
      case DType::f32: o.setOutput(t.data_as<float>(), static_cast<size_t>(t.numel())); break;
      case DType::f64: o.setOutput(t.data_as<double>(), static_cast<size_t>(t.numel())); break;
      case DType::i32: o.setOutput(t.data_as<int32_t>(), static_cast<size_t>(t.numel())); break;
      case DType::i64: o.setOutput(t.data_as<int64_t>(), static_cast<size_t>(t.numel())); break;
      case DType::i8: o.setOutput(t.data_as<int8_t>(), static_cast<size_t>(t.numel())); break;
      default: o.setOutput(t.data_as<uint8_t>(), static_cast<size_t>(t.numel())); break;
    }
  }
  void check_rank(int r, const char* what) const {
    if (r < 0 || r >= size_) throw Error(ErrorKind::invalid_argument, cat("rank ", rank_, ": ", what, " rank ", r, " of a job of ", size_));
  }
  uint32_t next_tag() { return tag_++; }

  // Two ranks, a small message: each sends its whole buffer and reduces the other's into its
  // own — one latency-bound exchange where the ring takes two (reduce-scatter, all-gather) and
  // its per-step overhead dominates below a few hundred KB. a + b is b + a (and max, min), so
  // both ranks end with the same bits.
  static constexpr size_t kExchangeBytes = size_t{256} << 10;
  void exchange_reduce(Tensor& t, ReduceOp op) {
    const int peer = 1 - rank_;
    const uint64_t at = (uint64_t{2} << 40) + next_tag();  // the same on both ranks: collectives run in one order
    Tensor other = Tensor::zeros(t.dtype(), t.shape());
    guard("all_reduce", [&] {
      auto in = ctx_->createUnboundBuffer(other.data(), other.nbytes());
      auto out = ctx_->createUnboundBuffer(t.data(), t.nbytes());
      in->recv(peer, at);
      out->send(peer, at);
      if (!in->waitRecv(timeout_) || !out->waitSend(timeout_)) throw Error(ErrorKind::io, "timed out");
    });
    reduce_fn(t.dtype(), op)(t.data(), t.data(), other.data(), static_cast<size_t>(t.numel()));
  }
  // one slot per ordered pair: messages between two ranks match in order
  uint64_t slot(int from, int to) const { return (uint64_t{1} << 40) + static_cast<uint64_t>(from) * static_cast<uint64_t>(size_) + static_cast<uint64_t>(to); }
  template <class F>
  void guard(const char* what, F&& f) {
    try {
      f();
    } catch (const Error& e) {
      throw Error(ErrorKind::io, cat("gloo: rank ", rank_, " of ", size_, ": ", what, " failed: ", e.what()));
    } catch (const std::exception& e) {
      throw Error(ErrorKind::io, cat("gloo: rank ", rank_, " of ", size_, ": ", what, " failed (a rank died, or did not answer in ", timeout_.count() / 1000.0, " s): ", e.what()));
    }
  }

  int rank_, size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::rendezvous::Context> ctx_;
  uint32_t tag_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> connect_gloo(const Rendezvous& r) { return std::make_unique<GlooCommunicator>(r); }

#else

std::unique_ptr<Communicator> connect_gloo(const Rendezvous&) {
  throw Error(ErrorKind::unsupported, "this rlx was built without Gloo (apt-get install libgloo-dev, then rebuild)");
}

#endif

}  // namespace rlx::dist::detail
