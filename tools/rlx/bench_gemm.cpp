// rlx bench gemm: GFLOP/s of RLX's cpu matmul (dot_general) for f32 and bf16 against a direct
// OpenBLAS sgemm call on the same machine in the same run — the ratio is the figure of merit.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"
#include "util/half.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

Tensor random_matrix(int64_t r, int64_t c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(r * c));
  for (auto& x : v) x = u(rng);
  return Tensor::from_f64(DType::f32, {r, c}, v);
}

// C = A·B with B a constant of the program (weights: packed once at compile time), A of
// dtype `a_dtype` (bf16 measures the AMX kernel itself: activations arrive in bf16 when the
// producing op writes them so), C in f32.
CompiledModel compile_gemm(const Tensor& b, int64_t m, int64_t k, const std::string& device, DType a_dtype) {
  auto g = std::make_shared<ir::Graph>();
  g->name = "gemm";
  ops::Builder bl(*g);
  ir::ValueId a = g->add_input({a_dtype, {Dim(m), Dim(k)}}, "a");
  ir::ValueId w = bl.cast(bl.constant(b), a_dtype);  // folds at compile time
  g->set_outputs({bl.emit1(ir::Op::dot_general, {a, w}, ir::Attrs{{"contract", ir::Intss{{1}, {0}}}, {"out", DType::f32}})});
  return Session(device).compile(Graph(g));
}

}  // namespace

int bench_gemm(Args& args) {
  std::vector<int64_t> sizes = parse_int_list("size", args.value_or("size", "1024"));
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  int nt = num_threads();
  std::vector<std::string> rows;
  if (!json) std::printf("gemm: C[n,n] = A[n,n]·B[n,n] (B constant; bf16 column: A and B in bf16, C in f32), device %s, %d threads, p50\n\n %6s %14s %14s %14s %10s %10s\n", device.c_str(), nt,
                         "n", "openblas GF/s", "rlx f32 GF/s", "rlx bf16 GF/s", "f32/blas", "bf16/f32");
  for (int64_t n : sizes) {
    Tensor a = random_matrix(n, n, 1), b = random_matrix(n, n, 2);
    double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    // OpenBLAS on its own threads, as a user calling it directly would.
    Tensor c = Tensor::zeros(DType::f32, {n, n});
    openblas_set_num_threads(nt);
    Timing blas = time_runs([&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n), 1.0f,
                                              a.data_as<float>(), static_cast<int>(n), b.data_as<float>(), static_cast<int>(n), 0.0f,
                                              c.data_as<float>(), static_cast<int>(n)); },
                            timing);
    openblas_set_num_threads(1);  // back to how the cpu device uses it
    // Both RLX results are checked against OpenBLAS's before they count.
    CompiledModel f32 = compile_gemm(b, n, n, device, DType::f32), bf16 = compile_gemm(b, n, n, device, DType::bf16);
    Tensor a16 = Tensor::zeros(DType::bf16, {n, n});
    for (int64_t i = 0; i < n * n; ++i) a16.data_as<uint16_t>()[i] = f32_to_bf16(a.data_as<float>()[i]);
    std::vector<Tensor> out;
    Timing t32 = time_runs([&] { f32.run_into({a}, out); }, timing);
    double err32 = 0, err16 = 0, scale = 0;
    for (int64_t i = 0; i < n * n; i += 97) {
      err32 = std::max<double>(err32, std::fabs(out[0].data_as<float>()[i] - c.data_as<float>()[i]));
      scale = std::max(scale, std::fabs(static_cast<double>(c.data_as<float>()[i])));
    }
    std::vector<Tensor> out16;
    Timing t16 = time_runs([&] { bf16.run_into({a16}, out16); }, timing);
    for (int64_t i = 0; i < n * n; i += 97) err16 = std::max<double>(err16, std::fabs(out16[0].data_as<float>()[i] - c.data_as<float>()[i]));
    if (err32 > 1e-3 * scale || err16 > 3e-2 * scale)
      throw Error(ErrorKind::internal, cat("gemm n=", n, ": RLX disagrees with OpenBLAS (max error f32 ", err32, ", bf16 ", err16, ", scale ", scale, ")"));
    double gb = flops / blas.p50 / 1e6, g32 = flops / t32.p50 / 1e6, g16 = flops / t16.p50 / 1e6;
    if (!json) std::printf(" %6lld %14.1f %14.1f %14.1f %10.2f %10.2f\n", static_cast<long long>(n), gb, g32, g16, g32 / gb, g16 / g32);
    rows.push_back(cat("{\"n\":", n, ",\"openblas_gflops\":", gb, ",\"rlx_f32_gflops\":", g32, ",\"rlx_bf16_gflops\":", g16, ",\"f32_vs_openblas\":", g32 / gb,
                       ",\"bf16_vs_f32\":", g16 / g32, ",\"runs\":", t32.runs(), ",\"max_abs_error_f32\":", err32, ",\"max_abs_error_bf16\":", err16, "}"));
  }
  if (json) std::printf("{\"workload\":\"gemm\",\"device\":%s,\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(), nt, json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
