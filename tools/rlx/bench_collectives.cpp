// rlx bench collectives: run as every rank of a job (rlx launch -n N -- rlx bench collectives).
//   --check   every collective × dtype × size class against values each rank can predict
//             exactly (small integers, so float sums are exact too), then the collective graph
//             ops compiled for reference and cpu; a mismatch fails the job
//   (default) all-reduce sum of f32 from 4 KB to 64 MB: time per call and bus bandwidth
//             (2(n−1)/n · bytes / time, the figure nccl-tests reports), printed by rank 0
//   --kill-rank R  rank R dies (SIGKILL) after the first collective: the fault test
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#include "bench.h"
#include "dist/communicator.h"
#include "dist/graph_collectives.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/host_memory.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

using dist::Communicator;
using dist::ReduceOp;

// t[i] = f(i) in t's dtype
template <class F>
Tensor filled(DType d, int64_t n, F f) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = f(i);
  return Tensor::from_f64(d, {n}, v);
}

int64_t mismatches(const Tensor& got, const Tensor& want) {
  std::vector<double> a = got.to_f64(), b = want.to_f64();
  int64_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) bad += a[i] != b[i];
  return bad;
}

struct Checker {
  Communicator& c;
  int failures = 0, checks = 0;
  void expect(const std::string& what, const Tensor& got, const Tensor& want) {
    ++checks;
    const int64_t bad = mismatches(got, want);
    if (bad) {
      ++failures;
      std::fprintf(stderr, "rank %d: %s: %lld of %lld values wrong (first: got %s, want %s)\n", c.rank(), what.c_str(), static_cast<long long>(bad),
                   static_cast<long long>(want.numel()), got.str(4).c_str(), want.str(4).c_str());
    }
  }
};

void check_all(Communicator& c, Checker& k) {
  const int r = c.rank(), n = c.size();
  const std::vector<DType> dtypes = {DType::f32, DType::f64, DType::i32, DType::i64, DType::i8};
  const std::vector<int64_t> sizes = {1, 7, 4099, 1 << 20};  // one element, odd, past a page, 4 MB of f32
  for (DType d : dtypes)
    for (int64_t len : sizes) {
      const std::string tag = cat(dtype_name(d), "[", len, "]");
      const bool byte = d == DType::i8;  // i8 sums must stay in range: values mod 5
      const int mod = byte ? 5 : 13;
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::avg}) {
        if (op == ReduceOp::avg && d != DType::f32 && d != DType::f64) continue;
        Tensor t = filled(d, len, [&](int64_t i) { return static_cast<double>(i % mod + r); });
        c.all_reduce(t, op);
        Tensor want = filled(d, len, [&](int64_t i) {
          const double base = static_cast<double>(i % mod);
          switch (op) {
            case ReduceOp::sum: return n * base + n * (n - 1) / 2.0;
            case ReduceOp::max: return base + n - 1;
            case ReduceOp::min: return base;
            default: return base + (n - 1) / 2.0;
          }
        });
        k.expect(cat("all_reduce ", dist::reduce_op_name(op), " ", tag), t, want);
      }
      Tensor mine = filled(d, len, [&](int64_t i) { return static_cast<double>((i + 3 * r) % mod); });
      Tensor all = Tensor::zeros(d, {len * n});
      c.all_gather(mine, all);
      k.expect(cat("all_gather ", tag), all, filled(d, len * n, [&](int64_t j) { return static_cast<double>((j % len + 3 * (j / len)) % mod); }));
      Tensor whole = filled(d, len * n, [&](int64_t j) { return static_cast<double>(j % mod + r); });
      Tensor part = Tensor::zeros(d, {len});
      c.reduce_scatter(whole, part, ReduceOp::sum);
      k.expect(cat("reduce_scatter sum ", tag), part, filled(d, len, [&](int64_t i) { return n * static_cast<double>((r * len + i) % mod) + n * (n - 1) / 2.0; }));
      for (int root : {0, n - 1}) {
        Tensor b = r == root ? filled(d, len, [&](int64_t i) { return static_cast<double>((i + root) % mod); }) : Tensor::zeros(d, {len});
        c.broadcast(b, root);
        k.expect(cat("broadcast from ", root, " ", tag), b, filled(d, len, [&](int64_t i) { return static_cast<double>((i + root) % mod); }));
      }
      if (n > 1) {  // a ring: even ranks send first, odd ones receive first
        const int next = (r + 1) % n, prev = (r + n - 1) % n;
        Tensor out = filled(d, len, [&](int64_t i) { return static_cast<double>((i + r) % mod); }), in = Tensor::zeros(d, {len});
        if (r % 2 == 0) {
          c.send(out, next);
          c.recv(in, prev);
        } else {
          c.recv(in, prev);
          c.send(out, next);
        }
        k.expect(cat("send/recv ", tag), in, filled(d, len, [&](int64_t i) { return static_cast<double>((i + prev) % mod); }));
      }
    }
  c.barrier();
}

// The graph ops — mir.all_reduce, all_gather, reduce_scatter, broadcast_from — compiled for the
// reference and cpu devices and run over the job's communicator (lent to the graphs), along
// either axis of a 2-D value: x[i, j] = (7i + j) mod 13 + rank.
void check_graphs(Communicator& c, Checker& k) {
  dist::GraphCollectives lent(c);
  const int r = c.rank(), n = c.size();
  auto base = [](int64_t i, int64_t j) { return static_cast<double>((7 * i + j) % 13); };
  auto grid = [](DType d, int64_t rows, int64_t cols, const std::function<double(int64_t, int64_t)>& f) {
    std::vector<double> v;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) v.push_back(f(i, j));
    return Tensor::from_f64(d, {rows, cols}, v);
  };
  auto run = [](const std::string& device, ir::Op op, const ir::Attrs& attrs, const Tensor& x) {
    ir::Graph g;
    ir::ValueId in = g.add_input({x.dtype(), shape_of(x.shape())}, "x");
    ops::Builder b(g);
    g.set_outputs({b.emit1(op, {in}, attrs)});
    return Session(device).compile(Graph(std::make_shared<ir::Graph>(g))).run({x})[0];
  };
  const double tri = n * (n - 1) / 2.0;
  for (const char* device : {"reference", "cpu"})
    for (DType d : {DType::f32, DType::i32})
      for (int64_t axis : {0, 1}) {
        const std::string tag = cat(device, " ", dtype_name(d), " axis ", axis);
        Tensor whole = grid(d, 2 * n, 3 * n, [&](int64_t i, int64_t j) { return base(i, j) + r; });
        k.expect(cat("graph all_reduce sum ", tag), run(device, ir::Op::all_reduce, ir::Attrs{{"op", std::string("sum")}}, whole),
                 grid(d, 2 * n, 3 * n, [&](int64_t i, int64_t j) { return n * base(i, j) + tri; }));
        Tensor part = grid(d, 2, 3, [&](int64_t i, int64_t j) { return base(i, j) + r; });
        k.expect(cat("graph all_gather ", tag), run(device, ir::Op::all_gather, ir::Attrs{{"axis", axis}, {"ranks", int64_t{n}}}, part),
                 axis == 0 ? grid(d, 2 * n, 3, [&](int64_t i, int64_t j) { return base(i % 2, j) + static_cast<double>(i / 2); })
                           : grid(d, 2, 3 * n, [&](int64_t i, int64_t j) { return base(i, j % 3) + static_cast<double>(j / 3); }));
        k.expect(cat("graph reduce_scatter sum ", tag),
                 run(device, ir::Op::reduce_scatter, ir::Attrs{{"op", std::string("sum")}, {"axis", axis}, {"ranks", int64_t{n}}}, whole),
                 axis == 0 ? grid(d, 2, 3 * n, [&](int64_t i, int64_t j) { return n * base(2 * r + i, j) + tri; })
                           : grid(d, 2 * n, 3, [&](int64_t i, int64_t j) { return n * base(i, 3 * r + j) + tri; }));
        k.expect(cat("graph broadcast_from ", n - 1, " ", tag), run(device, ir::Op::broadcast_from, ir::Attrs{{"root", int64_t{n - 1}}}, whole),
                 grid(d, 2 * n, 3 * n, [&](int64_t i, int64_t j) { return base(i, j) + n - 1; }));
      }
}

}  // namespace

int bench_collectives(Args& args) {
  const bool check = args.flag("check");
  const bool json = args.flag("json");
  const int64_t kill_rank = args.int_or("kill-rank", -1);
  const int64_t runs = args.int_or("runs", 0);
  const std::string sizes_text = args.value_or("sizes", "4K,64K,1M,16M,64M");
  args.finish();
  std::vector<int64_t> sizes;
  for (const std::string& s : split(sizes_text, ',')) {
    auto v = static_cast<int64_t>(parse_byte_size(s, "--sizes"));
    if (v < 4 || v % 4) throw Error(ErrorKind::invalid_argument, cat("--sizes: '", s, "' is not a byte count that is a multiple of 4 (4K, 1M, …)"));
    sizes.push_back(v);
  }
  std::unique_ptr<Communicator> c = dist::connect(dist::Rendezvous::from_env());
  const int r = c->rank(), n = c->size();
  if (kill_rank >= 0) {
    Tensor t = filled(DType::f32, 16, [](int64_t) { return 1.0; });
    c->all_reduce(t, ReduceOp::sum);
    if (r == kill_rank) raise(SIGKILL);
    for (int i = 0; i < 1000; ++i) c->all_reduce(t, ReduceOp::sum);  // the others wait on the dead rank
    return 0;
  }
  if (check) {
    Checker k{*c};
    check_all(*c, k);
    check_graphs(*c, k);
    Tensor f = filled(DType::i32, 1, [&](int64_t) { return static_cast<double>(k.failures); });
    c->all_reduce(f, ReduceOp::sum);
    const int64_t total = static_cast<int64_t>(f.at_f64(0));
    if (r == 0) {
      if (json)
        std::printf("{\"ranks\":%d,\"backend\":\"%s\",\"checks\":%d,\"failures\":%lld}\n", n, c->backend().c_str(), k.checks, static_cast<long long>(total));
      else
        std::printf("%s, %d ranks: %d checks per rank (all-reduce sum/max/min/avg, all-gather, reduce-scatter, broadcast, send/recv × f32 f64 i32 i64 i8 × 1, 7, 4099, 1M elements; the four graph ops on reference and cpu): %s\n",
                    c->backend().c_str(), n, k.checks, total == 0 ? "all exact" : cat(total, " FAILED").c_str());
    }
    return total == 0 ? 0 : 1;
  }
  // bandwidth of all-reduce sum over f32
  if (r == 0 && !json) std::printf("%-10s %12s %12s %12s\n", "bytes", "time (us)", "algo GB/s", "bus GB/s");
  std::vector<std::string> rows;
  for (int64_t bytes : sizes) {
    Tensor t = filled(DType::f32, bytes / 4, [](int64_t i) { return static_cast<double>(i % 7); });
    const int iters = runs > 0 ? static_cast<int>(runs) : static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / bytes, 5, 2000));
    for (int i = 0; i < 3; ++i) c->all_reduce(t, ReduceOp::sum);
    c->barrier();
    const auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) c->all_reduce(t, ReduceOp::sum);
    c->barrier();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() / iters;
    const double algo = static_cast<double>(bytes) / s / 1e9, bus = algo * 2.0 * (n - 1) / n;
    if (r == 0) {
      if (json) rows.push_back(cat("{\"bytes\":", bytes, ",\"us\":", s * 1e6, ",\"algo_gbps\":", algo, ",\"bus_gbps\":", bus, "}"));
      else std::printf("%-10lld %12.1f %12.3f %12.3f\n", static_cast<long long>(bytes), s * 1e6, algo, bus);
    }
  }
  if (r == 0 && json) std::printf("{\"ranks\":%d,\"backend\":\"%s\",\"all_reduce\":[%s]}\n", n, c->backend().c_str(), join(rows, ",").c_str());
  return 0;
}

}  // namespace rlx::cli
