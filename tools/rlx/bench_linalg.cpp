// rlx bench linalg: milliseconds per dense linear algebra op on one n×n matrix (the cpu device's
// LAPACK path), each result checked by its residual (‖L Lᵀ − A‖, ‖Q R − A‖, ‖A X − B‖ …) before
// it counts. bench/linalg_peers.py runs the same ops and sizes through NumPy/SciPy beside it.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"
#include "util/scalar.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

using ir::Op;

const char* kDefaultOps = "cholesky,lu,qr,eigh,eig,svd,solve,triangular_solve,inv,slogdet,matrix_exp";

// A dense row-major f64 copy of a tensor's matrix.
struct Dense {
  int64_t rows, cols;
  std::vector<double> v;
  double at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

Dense dense(const Tensor& t) {
  Tensor c = t.contiguous();
  int64_t r = t.shape().size() >= 2 ? t.shape()[t.shape().size() - 2] : 1, k = t.shape().back();
  Dense d{r, k, std::vector<double>(static_cast<size_t>(r * k))};
  for (int64_t i = 0; i < r * k; ++i) d.v[static_cast<size_t>(i)] = c.at_f64(i);
  return d;
}

Dense product(const Dense& a, const Dense& b) {
  Dense c{a.rows, b.cols, std::vector<double>(static_cast<size_t>(a.rows * b.cols))};
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(a.rows), static_cast<int>(b.cols), static_cast<int>(a.cols), 1.0, a.v.data(),
              static_cast<int>(a.cols), b.v.data(), static_cast<int>(b.cols), 0.0, c.v.data(), static_cast<int>(c.cols));
  return c;
}

Dense transposed(const Dense& a) {
  Dense t{a.cols, a.rows, std::vector<double>(a.v.size())};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t.v[static_cast<size_t>(j * a.rows + i)] = a.at(i, j);
  return t;
}

// ‖x − y‖_F / ‖y‖_F.
double relative(const Dense& x, const Dense& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.v.size(); ++i) {
    num += (x.v[i] - y.v[i]) * (x.v[i] - y.v[i]);
    den += y.v[i] * y.v[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

Dense symmetric_from_lower(Dense a) {
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = i + 1; j < a.cols; ++j) a.v[static_cast<size_t>(i * a.cols + j)] = a.at(j, i);
  return a;
}

Dense with_diagonal(const Dense& v) {  // diag(v) for a vector [1, n]
  int64_t n = v.cols;
  Dense d{n, n, std::vector<double>(static_cast<size_t>(n * n))};
  for (int64_t i = 0; i < n; ++i) d.v[static_cast<size_t>(i * n + i)] = v.v[static_cast<size_t>(i)];
  return d;
}

// ‖A V − V diag(w)‖_F / (‖A‖_F ‖V‖_F) for eig's complex w and V.
double eig_residual(const Tensor& a_t, const Tensor& w_t, const Tensor& v_t) {
  Tensor a = a_t.contiguous(), w = w_t.contiguous(), v = v_t.contiguous();
  int64_t n = a.shape().back();
  double num = 0, an = 0, vn = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      c128 s{};
      for (int64_t j = 0; j < n; ++j) s += load_c128(a.data(), a.dtype(), i * n + j) * load_c128(v.data(), v.dtype(), j * n + k);
      num += std::norm(s - load_c128(v.data(), v.dtype(), i * n + k) * load_c128(w.data(), w.dtype(), k));
      an += std::norm(load_c128(a.data(), a.dtype(), i * n + k));
      vn += std::norm(load_c128(v.data(), v.dtype(), i * n + k));
    }
  return std::sqrt(num / std::max(an * vn, 1e-300));
}

// The op's residual on its inputs and outputs (−1 where the bench has no residual for it).
double residual(Op op, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  if (op == Op::eig) return eig_residual(in[0], out[0], out[1]);
  Dense a = dense(in[0]);
  switch (op) {
    case Op::cholesky: {
      Dense l = dense(out[0]);
      return relative(product(l, transposed(l)), symmetric_from_lower(a));
    }
    case Op::qr: return relative(product(dense(out[0]), dense(out[1])), a);
    case Op::eigh: {
      Dense s = symmetric_from_lower(a), v = dense(out[1]);
      return relative(product(s, v), product(v, with_diagonal(dense(out[0]))));
    }
    case Op::svd: return relative(product(product(dense(out[0]), with_diagonal(dense(out[1]))), dense(out[2])), a);
    case Op::solve: return relative(product(a, dense(out[0])), dense(in[1]));
    case Op::inv: {
      Dense eye = with_diagonal(Dense{1, a.rows, std::vector<double>(static_cast<size_t>(a.rows), 1.0)});
      return relative(product(a, dense(out[0])), eye);
    }
    case Op::triangular_solve: {  // lower=true, the default the bench runs
      Dense t = a;
      for (int64_t i = 0; i < t.rows; ++i)
        for (int64_t j = 0; j < t.cols; ++j)
          if (j > i) t.v[static_cast<size_t>(i * t.cols + j)] = 0;
      return relative(product(t, dense(out[0])), dense(in[1]));
    }
    case Op::lu: {
      Dense f = dense(out[0]), l = f, u = f, pa = a;
      int64_t n = f.rows;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          l.v[static_cast<size_t>(i * n + j)] = j < i ? f.at(i, j) : j == i ? 1.0 : 0.0;
          u.v[static_cast<size_t>(i * n + j)] = j >= i ? f.at(i, j) : 0.0;
          pa.v[static_cast<size_t>(i * n + j)] = a.at(static_cast<int64_t>(out[2].at_f64(i)), j);
        }
      return relative(product(l, u), pa);
    }
    default: return -1;
  }
}

// Random operands shaped for each op: symmetric positive definite for cholesky, n added to the
// diagonal where a solve needs it well away from singular, entries of size 1/√n for matrix_exp.
std::vector<Tensor> operands(Op op, int64_t n, DType d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  auto matrix = [&](int64_t r, int64_t c, double scale, double diagonal) {
    std::vector<double> v(static_cast<size_t>(r * c));
    for (auto& x : v) x = normal(rng) * scale;
    for (int64_t i = 0; i < std::min(r, c); ++i) v[static_cast<size_t>(i * c + i)] += diagonal;
    return v;
  };
  if (op == Op::cholesky) {
    Dense g{n, n, matrix(n, n, 1.0 / std::sqrt(static_cast<double>(n)), 0)};
    Dense s = product(g, transposed(g));
    for (int64_t i = 0; i < n; ++i) s.v[static_cast<size_t>(i * n + i)] += 1;
    return {Tensor::from_f64(d, {n, n}, s.v)};
  }
  bool conditioned = op == Op::lu || op == Op::solve || op == Op::triangular_solve || op == Op::inv || op == Op::slogdet;
  double scale = op == Op::matrix_exp ? 1.0 / std::sqrt(static_cast<double>(n)) : 1.0;
  std::vector<Tensor> in = {Tensor::from_f64(d, {n, n}, matrix(n, n, scale, conditioned ? std::sqrt(static_cast<double>(n)) * 4 : 0))};
  if (op == Op::solve) in.push_back(Tensor::from_f64(d, {n, 1}, matrix(n, 1, 1, 0)));
  if (op == Op::triangular_solve) in.push_back(Tensor::from_f64(d, {n, n}, matrix(n, n, 1, 0)));
  return in;
}

Op op_named(const std::string& name) {
  if (std::optional<Op> op = ir::op_from_name(name)) return *op;
  throw Error(ErrorKind::invalid_argument, cat("--ops: '", name, "' is not an op (the linear algebra ops: ", kDefaultOps, ")"));
}

}  // namespace

int bench_linalg(Args& args) {
  std::vector<std::string> names = split(args.value_or("ops", kDefaultOps), ',');
  std::vector<int64_t> sizes = parse_int_list("sizes", args.value_or("sizes", "256,1024"));
  std::string dtype_text = args.value_or("dtype", "f64");
  std::string device = args.value_or("device", "cpu");
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  args.finish();
  if (dtype_text != "f64" && dtype_text != "f32") throw Error(ErrorKind::invalid_argument, "--dtype must be f64 or f32");
  DType d = dtype_text == "f64" ? DType::f64 : DType::f32;
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  std::vector<std::string> rows;
  if (!json) std::printf("linalg: one n×n matrix, %s, device %s, %d threads, p50\n\n %-18s %6s %12s %12s\n", dtype_text.c_str(), device.c_str(), num_threads(), "op", "n", "ms", "residual");
  for (const std::string& name : names) {
    Op op = op_named(name);
    for (int64_t n : sizes) {
      std::vector<Tensor> in = operands(op, n, d, static_cast<uint32_t>(n));
      auto g = std::make_shared<ir::Graph>();
      g->name = name;
      ops::Builder b(*g);
      std::vector<ir::ValueId> args_v;
      for (size_t i = 0; i < in.size(); ++i) args_v.push_back(g->add_input({d, shape_of(in[i].shape())}, cat("in", i)));
      g->set_outputs(b.emit(op, args_v));
      CompiledModel m = Session(device).compile(Graph(g));
      std::vector<Tensor> out;
      Timing t = time_runs([&] { out = m.run(in); }, timing);
      double res = residual(op, in, out);
      double bound = d == DType::f64 ? 1e-10 : 1e-3;
      if (res > bound * static_cast<double>(n)) throw Error(ErrorKind::internal, cat("linalg ", name, " n=", n, ": residual ", res, " is too large"));
      if (!json) std::printf(" %-18s %6lld %12.3f %12s\n", name.c_str(), static_cast<long long>(n), t.p50, res < 0 ? "-" : cat(res).c_str());
      rows.push_back(cat("{\"op\":\"", name, "\",\"n\":", n, ",\"p50_ms\":", t.p50, ",\"min_ms\":", t.min, ",\"runs\":", t.runs(), ",\"residual\":", res, "}"));
    }
  }
  if (json) std::printf("{\"workload\":\"linalg\",\"device\":%s,\"dtype\":\"%s\",\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(), dtype_text.c_str(), num_threads(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
