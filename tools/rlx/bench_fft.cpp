// rlx bench fft: milliseconds per Fourier transform (the cpu device's FFTW path) on seeded random
// data, each result spot-checked against the transform's defining sum at a few outputs before it
// counts. Cases are TRANSFORM:SHAPE — fft, ifft, rfft, irfft along the last axis, fft2 and rfft2
// over the last two; irfft's shape is its real output's. bench/fft_peers.py runs the same cases
// through numpy.fft beside it. On a device with memory of its own (cuda) a second column times
// the transform with its input resident and only one element brought back — the transform
// itself, not the PCIe copies (torch.fft on resident tensors is the peer for that column).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>

#include "bench.h"
#include "json.h"
#include "ops/builder.h"
#include "ops/fft.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/scalar.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

using ir::Op;

const char* kDefaultCases = "fft:1048576,ifft:1048576,fft:64x4096,fft:256x1000,rfft:1048576,irfft:1048576,fft2:1024x1024,rfft2:1024x1024";

struct Case {
  std::string transform;  // fft ifft rfft irfft fft2 rfft2
  std::vector<int64_t> shape;  // the real side's for rfft/irfft
};

Case parse_case(const std::string& text) {
  auto colon = text.find(':');
  Case c;
  if (colon == std::string::npos) throw Error(ErrorKind::invalid_argument, cat("--cases: '", text, "' is not TRANSFORM:SHAPE (fft:1024, rfft2:512x512)"));
  c.transform = text.substr(0, colon);
  for (const std::string& d : split(text.substr(colon + 1), 'x')) c.shape.push_back(std::stoll(d));
  static const std::vector<std::string> known = {"fft", "ifft", "rfft", "irfft", "fft2", "rfft2"};
  if (std::find(known.begin(), known.end(), c.transform) == known.end())
    throw Error(ErrorKind::invalid_argument, cat("--cases: unknown transform '", c.transform, "' (fft ifft rfft irfft fft2 rfft2)"));
  bool two = c.transform.back() == '2';
  if (c.shape.size() < (two ? 2u : 1u)) throw Error(ErrorKind::invalid_argument, cat("--cases: ", text, " needs ", two ? "two" : "one", " or more dims"));
  for (int64_t d : c.shape)
    if (d < 1) throw Error(ErrorKind::invalid_argument, cat("--cases: ", text, " has an empty dim"));
  return c;
}

// Σ over the transformed positions of x·e^(∓2πi·k·t/n), directly, at one output position.
c128 direct_bin(const Tensor& x, const std::vector<int64_t>& xs, const std::vector<int64_t>& out_index, size_t axes, bool inverse) {
  size_t r = xs.size();
  std::vector<int64_t> t(r, 0);
  for (size_t d = 0; d < r - axes; ++d) t[d] = out_index[d];
  std::vector<int64_t> st(r, 1);
  for (size_t d = r - 1; d-- > 0;) st[d] = st[d + 1] * xs[d + 1];
  int64_t count = 1;
  for (size_t d = r - axes; d < r; ++d) count *= xs[d];
  c128 s{};
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = i, off = 0;
    double phase = 0;
    for (size_t d = r; d-- > r - axes;) {
      t[d] = rem % xs[d];
      rem /= xs[d];
      phase += static_cast<double>((out_index[d] * t[d]) % xs[d]) / static_cast<double>(xs[d]);
    }
    for (size_t d = 0; d < r; ++d) off += t[d] * st[d];
    double a = 2 * M_PI * phase * (inverse ? 1 : -1);
    s += load_c128(x.data(), x.dtype(), off) * c128(std::cos(a), std::sin(a));
  }
  return s;
}

// irfft along the last axis at one output: X₀ + Σ 2·Re(X_k e^(2πi·kt/n)) (+ the Nyquist bin), / n.
double direct_irfft(const Tensor& x, const std::vector<int64_t>& xs, const std::vector<int64_t>& out_index, int64_t n) {
  int64_t m = xs.back(), row = 0;
  for (size_t d = 0; d + 1 < xs.size(); ++d) row = row * xs[d] + out_index[d];
  int64_t t = out_index.back();
  double y = load_c128(x.data(), x.dtype(), row * m).real();
  for (int64_t k = 1; k < m; ++k) {
    c128 v = load_c128(x.data(), x.dtype(), row * m + k);
    double a = 2 * M_PI * static_cast<double>((k * t) % n) / static_cast<double>(n);
    y += 2 * k == n ? v.real() * (t % 2 ? -1 : 1) : 2 * (v * c128(std::cos(a), std::sin(a))).real();
  }
  return y / static_cast<double>(n);
}

// The largest |got − direct| / max|direct| over a few random outputs.
double spot_check(const Case& c, const Tensor& in, const Tensor& out, std::mt19937& rng) {
  Tensor x = in.contiguous(), y = out.contiguous();
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ys = y.shape();
  bool two = c.transform.back() == '2', inverse = c.transform == "ifft";
  double worst = 0, scale = 0;
  for (int probe = 0; probe < 6; ++probe) {
    int64_t flat = static_cast<int64_t>(rng() % static_cast<uint64_t>(y.numel()));
    std::vector<int64_t> idx(ys.size());
    for (size_t d = ys.size(); d-- > 0;) {
      idx[d] = flat % ys[d];
      flat /= ys[d];
    }
    int64_t off = 0;
    for (size_t d = 0; d < ys.size(); ++d) off = off * ys[d] + idx[d];
    c128 want = c.transform == "irfft" ? c128(direct_irfft(x, xs, idx, ys.back()), 0)
                                       : direct_bin(x, xs, idx, two ? 2 : 1, inverse) * (inverse ? 1.0 / static_cast<double>(xs.back()) : 1.0);
    worst = std::max(worst, std::abs(load_c128(y.data(), y.dtype(), off) - want));
    scale = std::max(scale, std::abs(want));
  }
  return worst / std::max(scale, 1e-300);
}

}  // namespace

int bench_fft(Args& args) {
  std::vector<std::string> texts = split(args.value_or("cases", kDefaultCases), ',');
  std::string dtype_text = args.value_or("dtype", "c128");
  std::string device = args.value_or("device", "cpu");
  auto threads = args.value("threads");
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  args.finish();
  if (dtype_text != "c128" && dtype_text != "c64") throw Error(ErrorKind::invalid_argument, "--dtype must be c128 or c64 (rfft's input is then f64 or f32)");
  DType cd = dtype_text == "c128" ? DType::c128 : DType::c64, rd = real_part_dtype(cd);
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  std::vector<std::string> rows;
  if (!json)
    std::printf("fft: %s, device %s, %d threads, p50\n\n %-8s %-14s %12s %14s %12s\n", dtype_text.c_str(), device.c_str(), num_threads(), "transform", "shape", "ms",
                "ms resident", "spot error");
  std::mt19937 rng(7);
  for (const std::string& text : texts) {
    Case c = parse_case(text);
    std::vector<int64_t> in_shape = c.shape;
    size_t r = in_shape.size();
    if (c.transform == "irfft") in_shape.back() = ops::rfft_bins(c.shape.back());
    bool real_in = c.transform == "rfft" || c.transform == "rfft2";
    DType in_dtype = real_in ? rd : cd;
    int64_t n = 1;
    for (int64_t d : in_shape) n *= d;
    Tensor x = Tensor::zeros(in_dtype, in_shape);
    std::normal_distribution<double> normal;
    for (int64_t i = 0; i < n; ++i) store_c128(x.data(), in_dtype, i, {normal(rng), real_in ? 0.0 : normal(rng)});
    auto g = std::make_shared<ir::Graph>();
    g->name = c.transform;
    ops::Builder b(*g);
    ir::ValueId v = g->add_input({in_dtype, shape_of(in_shape)}, "x");
    ir::Ints axes = c.transform.back() == '2' ? ir::Ints{static_cast<int64_t>(r) - 2, static_cast<int64_t>(r) - 1} : ir::Ints{static_cast<int64_t>(r) - 1};
    ir::Attrs a{{"axes", axes}};
    Op op = Op::fft;
    if (c.transform == "ifft") a.set("inverse", true);
    if (real_in) op = Op::rfft;
    if (c.transform == "irfft") {
      op = Op::irfft;
      a.set("n", c.shape.back());
    }
    ir::ValueId y = b.emit1(op, {v}, a);
    g->set_outputs({y});
    CompiledModel m = Session(device).compile(Graph(g));
    std::vector<Tensor> out;
    Timing t = time_runs([&] { out = m.run({x}); }, timing);
    // the same transform with x kept in device memory and one element of y brought back
    std::optional<Timing> resident;
    if (device != "cpu") {
      auto g1 = std::make_shared<ir::Graph>(*g);
      ops::Builder b1(*g1);
      Shape zero(r, Dim(0)), one(r, Dim(1));
      g1->set_outputs({b1.slice(y, zero, one, ir::Ints(r, 1))});
      CompiledModel m1 = Session(device).compile(Graph(g1));
      if (m1.keep_on_device(x)) resident = time_runs([&] { m1.run({x}); }, timing);
    }
    double err = spot_check(c, x, out[0], rng);
    double bound = cd == DType::c128 ? 1e-10 : 1e-3;
    if (err > bound) throw Error(ErrorKind::internal, cat("fft ", text, ": the result is off its defining sum by ", err, " (relative)"));
    std::string shape = join(c.shape, "x");
    std::string res = resident ? cat(resident->p50) : std::string("—");
    if (!json) std::printf(" %-8s %-14s %12.3f %14s %12.1e\n", c.transform.c_str(), shape.c_str(), t.p50, res.c_str(), err);
    rows.push_back(cat("{\"case\":\"", text, "\",\"p50_ms\":", t.p50, ",\"min_ms\":", t.min, ",\"runs\":", t.runs(),
                       resident ? cat(",\"resident_p50_ms\":", resident->p50) : std::string(), ",\"spot_error\":", err, "}"));
  }
  if (json) std::printf("{\"workload\":\"fft\",\"device\":%s,\"dtype\":\"%s\",\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(), dtype_text.c_str(), num_threads(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
