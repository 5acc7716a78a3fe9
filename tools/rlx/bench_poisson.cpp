// rlx bench poisson: the 2D Poisson equation −Δu = f on an N×N grid (5-point stencil, Dirichlet
// boundary: N² unknowns, ~5N² entries) solved by mir.csr_solve on a device, the residual
// ‖A u − f‖/‖f‖ checked before the time counts. bench/sparse_peers.py runs scipy.sparse.linalg.spsolve
// on the same matrix beside it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

struct Csr {
  std::vector<int64_t> row_ptr, col_idx;
  std::vector<double> values;
};

// Row idx = i·N + j couples to its four neighbours inside the grid, in ascending column order.
Csr poisson_2d(int64_t n) {
  Csr a;
  a.row_ptr.reserve(static_cast<size_t>(n * n + 1));
  a.col_idx.reserve(static_cast<size_t>(5 * n * n));
  a.values.reserve(static_cast<size_t>(5 * n * n));
  a.row_ptr.push_back(0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = i * n + j;
      auto put = [&](int64_t c, double v) {
        a.col_idx.push_back(c);
        a.values.push_back(v);
      };
      if (i > 0) put(idx - n, -1);
      if (j > 0) put(idx - 1, -1);
      put(idx, 4);
      if (j + 1 < n) put(idx + 1, -1);
      if (i + 1 < n) put(idx + n, -1);
      a.row_ptr.push_back(static_cast<int64_t>(a.col_idx.size()));
    }
  return a;
}

}  // namespace

int bench_poisson(Args& args) {
  std::vector<int64_t> grids = parse_int_list("grid", args.value_or("grid", "300,1000"));
  std::string method = args.value_or("method", "cholesky");
  std::string device = args.value_or("device", "cpu");
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  if (!args.value("warmup")) timing.warmup = 1;
  if (!args.value("min-runs")) timing.min_runs = 3;
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  std::vector<std::string> rows;
  if (!json) std::printf("poisson: −Δu = f on an N×N grid (5-point stencil), csr_solve method=%s, device %s, %d threads, p50\n\n %6s %10s %10s %12s %12s\n", method.c_str(),
                         device.c_str(), num_threads(), "N", "unknowns", "nnz", "ms", "residual");
  for (int64_t n : grids) {
    Csr a = poisson_2d(n);
    int64_t unknowns = n * n, nnz = static_cast<int64_t>(a.values.size());
    std::vector<double> f(static_cast<size_t>(unknowns));
    for (int64_t i = 0; i < unknowns; ++i) f[static_cast<size_t>(i)] = std::sin(0.001 * static_cast<double>(i)) + 1;
    auto g = std::make_shared<ir::Graph>();
    g->name = "poisson";
    ops::Builder b(*g);
    ir::ValueId ptr = g->add_input({DType::i64, {Dim(unknowns + 1)}}, "row_ptr");
    ir::ValueId cols = g->add_input({DType::i64, {Dim(nnz)}}, "col_idx");
    ir::ValueId vals = g->add_input({DType::f64, {Dim(nnz)}}, "values");
    ir::ValueId rhs = g->add_input({DType::f64, {Dim(unknowns), Dim(1)}}, "f");
    g->set_outputs({b.emit1(ir::Op::csr_solve, {ptr, cols, vals, rhs}, ir::Attrs{{"method", method}})});
    CompiledModel m = Session(device).compile(Graph(g));
    std::vector<Tensor> in = {Tensor::from_vector(a.row_ptr, {unknowns + 1}), Tensor::from_vector(a.col_idx, {nnz}), Tensor::from_vector(a.values, {nnz}),
                              Tensor::from_vector(f, {unknowns, 1})};
    std::vector<Tensor> out;
    Timing t = time_runs([&] { out = m.run(in); }, timing);
    const double* u = out[0].data_as<double>();
    double num = 0, den = 0;
    for (int64_t i = 0; i < unknowns; ++i) {
      double s = 0;
      for (int64_t p = a.row_ptr[static_cast<size_t>(i)]; p < a.row_ptr[static_cast<size_t>(i) + 1]; ++p) s += a.values[static_cast<size_t>(p)] * u[a.col_idx[static_cast<size_t>(p)]];
      num += (s - f[static_cast<size_t>(i)]) * (s - f[static_cast<size_t>(i)]);
      den += f[static_cast<size_t>(i)] * f[static_cast<size_t>(i)];
    }
    double res = std::sqrt(num / den);
    if (!(res < 1e-8)) throw Error(ErrorKind::internal, cat("poisson N=", n, ": residual ", res, " is too large"));
    if (!json) std::printf(" %6lld %10lld %10lld %12.1f %12.2e\n", static_cast<long long>(n), static_cast<long long>(unknowns), static_cast<long long>(nnz), t.p50, res);
    rows.push_back(cat("{\"grid\":", n, ",\"unknowns\":", unknowns, ",\"nnz\":", nnz, ",\"p50_ms\":", t.p50, ",\"min_ms\":", t.min, ",\"runs\":", t.runs(), ",\"residual\":", res, "}"));
  }
  if (json) std::printf("{\"workload\":\"poisson\",\"device\":%s,\"method\":%s,\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(), json_quote(method).c_str(), num_threads(),
                        json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
