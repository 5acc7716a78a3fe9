// rlx bench poisson: the 2D Poisson equation −Δu = f on an N×N grid (5-point stencil, Dirichlet
// boundary: N² unknowns, ~5N² entries) solved directly by mir.csr_solve on a device, or iteratively
// by src/science's Krylov solvers (--method cg|bicgstab|gmres [--preconditioner jacobi|ichol]);
// the residual ‖A u − f‖/‖f‖ is checked before the time counts. bench/sparse_peers.py runs SciPy's
// spsolve and cg on the same matrix beside it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "science/sparse/iterative.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

}  // namespace

int bench_poisson(Args& args) {
  std::vector<int64_t> grids = parse_int_list("grid", args.value_or("grid", "300,1000"));
  std::string method = args.value_or("method", "cholesky");
  science::IterativeOptions iterative;
  bool is_iterative = method == "cg" || method == "bicgstab" || method == "gmres";
  if (is_iterative) iterative.method = science::parse_krylov(method);
  else if (method != "cholesky" && method != "lu" && method != "auto")
    throw Error(ErrorKind::invalid_argument, cat("--method: '", method, "' is not a solver (cholesky, lu, auto: csr_solve; cg, bicgstab, gmres: Krylov)"));
  iterative.preconditioner = science::parse_preconditioner(args.value_or("preconditioner", "none"));
  iterative.rtol = args.float_or("rtol", 1e-10);
  std::string device = args.value_or("device", "cpu");
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  if (!args.value("warmup")) timing.warmup = 1;
  if (!args.value("min-runs")) timing.min_runs = 3;
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  std::vector<std::string> rows;
  std::string solver = is_iterative ? cat(method, " (", science::preconditioner_name(iterative.preconditioner), ", rtol ", iterative.rtol, ", host)")
                                    : cat("csr_solve method=", method, ", device ", device);
  if (!json) std::printf("poisson: −Δu = f on an N×N grid (5-point stencil), %s, %d threads, p50\n\n %6s %10s %10s %12s %12s %10s\n", solver.c_str(), num_threads(), "N",
                         "unknowns", "nnz", "ms", "residual", "iterations");
  for (int64_t n : grids) {
    science::Csr a = science::poisson_2d(n);
    int64_t unknowns = n * n, nnz = static_cast<int64_t>(a.values.size());
    std::vector<double> f(static_cast<size_t>(unknowns));
    for (int64_t i = 0; i < unknowns; ++i) f[static_cast<size_t>(i)] = std::sin(0.001 * static_cast<double>(i)) + 1;
    std::vector<double> u_iter;
    int64_t iterations = 0;
    Timing t;
    std::vector<Tensor> out;
    if (is_iterative) {
      t = time_runs(
          [&] {
            science::IterativeResult r = science::solve_iterative(a.view(), f, iterative);
            if (!r.converged) throw Error(ErrorKind::runtime, cat("poisson N=", n, ": ", method, " did not converge in ", r.iterations, " iterations (residual ", r.residual, ")"));
            iterations = r.iterations;
            u_iter = std::move(r.x);
          },
          timing);
    } else {
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
      t = time_runs([&] { out = m.run(in); }, timing);
    }
    const double* u = is_iterative ? u_iter.data() : out[0].data_as<double>();
    std::vector<double> au(static_cast<size_t>(unknowns));
    science::spmv(a.view(), u, au.data());
    double num = 0, den = 0;
    for (size_t i = 0; i < au.size(); ++i) {
      num += (au[i] - f[i]) * (au[i] - f[i]);
      den += f[i] * f[i];
    }
    double res = std::sqrt(num / den);
    if (!(res < std::max(1e-8, 10 * iterative.rtol))) throw Error(ErrorKind::internal, cat("poisson N=", n, ": residual ", res, " is too large"));
    if (!json)
      std::printf(" %6lld %10lld %10lld %12.1f %12.2e %10s\n", static_cast<long long>(n), static_cast<long long>(unknowns), static_cast<long long>(nnz), t.p50, res,
                  is_iterative ? cat(iterations).c_str() : "-");
    rows.push_back(cat("{\"grid\":", n, ",\"unknowns\":", unknowns, ",\"nnz\":", nnz, ",\"p50_ms\":", t.p50, ",\"min_ms\":", t.min, ",\"runs\":", t.runs(), ",\"residual\":", res,
                       ",\"iterations\":", iterations, "}"));
  }
  if (json)
    std::printf("{\"workload\":\"poisson\",\"device\":%s,\"method\":%s,\"preconditioner\":\"%s\",\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(), json_quote(method).c_str(),
                is_iterative ? science::preconditioner_name(iterative.preconditioner) : "-", num_threads(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
