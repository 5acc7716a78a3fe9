// Discrete Fourier transforms through FFTW (fftw3 for c128, fftw3f for c64). Each node's
// transform is one guru-interface plan over the tensor's own strides — the listed axes as the
// transform dims, the rest as the batch — planned once per shape, axes and alignment (FFTW's
// planner is not thread-safe, its execute-with-new-arrays calls are) and scaled afterwards
// (ops/fft.h). irfft runs as the inverse over the other axes in a scratch copy, then one c2r along
// the last axis: the order numpy defines it in, and c2r plans may overwrite their input.
#include <fftw3.h>

#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cpu/kernels.h"
#include "ops/fft.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// One C API per precision, behind the same names.
template <class R>
struct Fftw;
template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  using Dim = fftw_iodim64;
  static Plan c2c(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, int sign, unsigned how) {
    return fftw_plan_guru64_dft(r, d, hr, h, static_cast<Cpx*>(in), static_cast<Cpx*>(out), sign, how);
  }
  static Plan r2c(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, unsigned how) {
    return fftw_plan_guru64_dft_r2c(r, d, hr, h, static_cast<double*>(in), static_cast<Cpx*>(out), how);
  }
  static Plan c2r(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, unsigned how) {
    return fftw_plan_guru64_dft_c2r(r, d, hr, h, static_cast<Cpx*>(in), static_cast<double*>(out), how | FFTW_DESTROY_INPUT);
  }
  static void run_c2c(Plan p, void* in, void* out) { fftw_execute_dft(p, static_cast<Cpx*>(in), static_cast<Cpx*>(out)); }
  static void run_r2c(Plan p, void* in, void* out) { fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<Cpx*>(out)); }
  static void run_c2r(Plan p, void* in, void* out) { fftw_execute_dft_c2r(p, static_cast<Cpx*>(in), static_cast<double*>(out)); }
  static int alignment(const void* p) { return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  using Dim = fftwf_iodim64;
  static Plan c2c(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, int sign, unsigned how) {
    return fftwf_plan_guru64_dft(r, d, hr, h, static_cast<Cpx*>(in), static_cast<Cpx*>(out), sign, how);
  }
  static Plan r2c(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, unsigned how) {
    return fftwf_plan_guru64_dft_r2c(r, d, hr, h, static_cast<float*>(in), static_cast<Cpx*>(out), how);
  }
  static Plan c2r(int r, const Dim* d, int hr, const Dim* h, void* in, void* out, unsigned how) {
    return fftwf_plan_guru64_dft_c2r(r, d, hr, h, static_cast<Cpx*>(in), static_cast<float*>(out), how | FFTW_DESTROY_INPUT);
  }
  static void run_c2c(Plan p, void* in, void* out) { fftwf_execute_dft(p, static_cast<Cpx*>(in), static_cast<Cpx*>(out)); }
  static void run_r2c(Plan p, void* in, void* out) { fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<Cpx*>(out)); }
  static void run_c2r(Plan p, void* in, void* out) { fftwf_execute_dft_c2r(p, static_cast<Cpx*>(in), static_cast<float*>(out)); }
  static int alignment(const void* p) { return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

enum class Kind { c2c_forward, c2c_inverse, r2c, c2r };

// The transform dims and batch dims of one plan: `axes` of shapes in_shape/out_shape (row-major).
struct Layout {
  std::vector<int64_t> in_shape, out_shape, axes;
};

std::string plan_key(Kind k, const Layout& l, bool in_place, int ain, int aout) {
  return cat(static_cast<int>(k), "|", join(l.in_shape), "|", join(l.out_shape), "|", join(l.axes), "|", in_place, ain, aout);
}

// FFTW's buffers: SIMD-aligned (alignment class 0), freed with fftw_free.
struct FftwBuffer {
  void* p = nullptr;
  explicit FftwBuffer(size_t bytes) : p(fftw_malloc(std::max<size_t>(bytes, 16))) {
    if (!p) throw Error(ErrorKind::out_of_memory, cat("cpu fft: no memory for a ", bytes, "-byte FFTW buffer"));
  }
  ~FftwBuffer() { fftw_free(p); }
  FftwBuffer(const FftwBuffer&) = delete;
  FftwBuffer& operator=(const FftwBuffer&) = delete;
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Element bytes of each side of a transform kind.
size_t in_bytes_per(Kind k, size_t real) { return k == Kind::r2c ? real : 2 * real; }
size_t out_bytes_per(Kind k, size_t real) { return k == Kind::c2r ? real : 2 * real; }

// The plan for these arrays (null ones: for any SIMD-aligned arrays, planned ahead). Under RLX_FFT_PLANNER=measure, plans for SIMD-aligned arrays are
// timed on scratch buffers (FFTW_MEASURE overwrites what it plans on), so they serve every
// aligned array of the layout; arrays of other alignments get a heuristic plan made on them.
// Plans live as long as the process (planning costs far more than running), and are destroyed
// with it rather than dropped, so that leak checkers see every FFTW allocation returned.
template <class R>
struct PlanCache {
  std::mutex mu;
  std::map<std::string, typename Fftw<R>::Plan> plans;
  ~PlanCache() {
    for (auto& [key, p] : plans)
      if (p) Fftw<R>::destroy(p);
  }
};

template <class R>
typename Fftw<R>::Plan get_plan(Kind k, const Layout& l, void* in, void* out, bool in_place) {
  using F = Fftw<R>;
  static PlanCache<R> plans;
  std::mutex& mu = plans.mu;
  auto& cache = plans.plans;
  int ain = in ? F::alignment(in) : 0, aout = out ? F::alignment(out) : 0;
  std::string key = plan_key(k, l, in_place, ain, aout);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::vector<int64_t> ist = contiguous_strides(l.in_shape), ost = contiguous_strides(l.out_shape);
  std::vector<typename F::Dim> dims, batch;
  std::vector<bool> transformed(l.in_shape.size(), false);
  for (int64_t ax : l.axes) {
    size_t a = static_cast<size_t>(ax);
    transformed[a] = true;
    // the logical length: the real side's for r2c and c2r
    int64_t n = k == Kind::c2r ? l.out_shape[a] : l.in_shape[a];
    dims.push_back({n, ist[a], ost[a]});
  }
  for (size_t a = 0; a < l.in_shape.size(); ++a)
    if (!transformed[a]) batch.push_back({l.in_shape[a], ist[a], ost[a]});
  bool measure = flags().RLX_FFT_PLANNER == "measure" && ain == 0 && aout == 0;
  unsigned how = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  std::unique_ptr<FftwBuffer> scratch_in, scratch_out;
  void *pin = in, *pout = out;
  if (measure || !in || !out) {
    scratch_in = std::make_unique<FftwBuffer>(static_cast<size_t>(numel(l.in_shape)) * in_bytes_per(k, sizeof(R)));
    pin = pout = scratch_in->p;
    if (!in_place) {
      scratch_out = std::make_unique<FftwBuffer>(static_cast<size_t>(numel(l.out_shape)) * out_bytes_per(k, sizeof(R)));
      pout = scratch_out->p;
    }
  }
  int r = static_cast<int>(dims.size()), hr = static_cast<int>(batch.size());
  typename F::Plan p = nullptr;
  switch (k) {
    case Kind::c2c_forward: p = F::c2c(r, dims.data(), hr, batch.data(), pin, pout, FFTW_FORWARD, how); break;
    case Kind::c2c_inverse: p = F::c2c(r, dims.data(), hr, batch.data(), pin, pout, FFTW_BACKWARD, how); break;
    case Kind::r2c: p = F::r2c(r, dims.data(), hr, batch.data(), pin, pout, how); break;
    case Kind::c2r: p = F::c2r(r, dims.data(), hr, batch.data(), pin, pout, how); break;
  }
  if (!p) throw Error(ErrorKind::internal, cat("cpu fft: FFTW could not plan a transform of ", join(l.in_shape), " over axes ", join(l.axes)));
  cache.emplace(key, p);
  return p;
}

template <class T>
void scale(T* y, int64_t n, double s) {
  if (s == 1.0) return;
  using R = std::conditional_t<std::is_same_v<T, std::complex<float>> || std::is_same_v<T, float>, float, double>;
  R f = static_cast<R>(s);
  rlx::parallel_for(n, 16384, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] *= f;
  });
}

std::vector<int64_t> axes_of(const ir::Node& n, size_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a : n.attrs.ints("axes")) axes.push_back(normalize_axis(a, rank));
  return axes;
}

bool is_empty(const KernelArgs& a) { return a.in[0].numel == 0 || a.out[0].numel == 0; }

template <class R>
void run_fft(const KernelArgs& a, const std::vector<int64_t>& axes, bool inverse, const std::string& norm) {
  using C = std::complex<R>;
  Layout l{a.in[0].shape, a.out[0].shape, axes};
  void* in = a.in[0].data;  // FFTW's out-of-place c2c leaves its input as it was
  typename Fftw<R>::Plan p = get_plan<R>(inverse ? Kind::c2c_inverse : Kind::c2c_forward, l, in, a.out[0].data, false);
  Fftw<R>::run_c2c(p, in, a.out[0].data);
  scale(a.out[0].as<C>(), a.out[0].numel, ops::fft_scale(norm, inverse, ops::fft_points(l.in_shape, axes)));
}

template <class R>
void run_rfft(const KernelArgs& a, const std::vector<int64_t>& axes, const std::string& norm) {
  using C = std::complex<R>;
  Layout l{a.in[0].shape, a.out[0].shape, axes};
  typename Fftw<R>::Plan p = get_plan<R>(Kind::r2c, l, a.in[0].data, a.out[0].data, false);
  Fftw<R>::run_r2c(p, a.in[0].data, a.out[0].data);
  scale(a.out[0].as<C>(), a.out[0].numel, ops::fft_scale(norm, false, ops::fft_points(l.in_shape, axes)));
}

template <class R>
void run_irfft(const KernelArgs& a, const std::vector<int64_t>& axes, const std::string& norm) {
  using C = std::complex<R>;
  // scratch, SIMD-aligned for the measured plans: c2r overwrites its input, which is the graph's
  FftwBuffer buffer(static_cast<size_t>(a.in[0].numel) * sizeof(C));
  C* work = static_cast<C*>(buffer.p);
  std::memcpy(work, a.in[0].data, static_cast<size_t>(a.in[0].numel) * sizeof(C));
  if (axes.size() > 1) {
    Layout lead{a.in[0].shape, a.in[0].shape, std::vector<int64_t>(axes.begin(), axes.end() - 1)};
    typename Fftw<R>::Plan p = get_plan<R>(Kind::c2c_inverse, lead, work, work, true);
    Fftw<R>::run_c2c(p, work, work);
  }
  Layout last{a.in[0].shape, a.out[0].shape, {axes.back()}};
  typename Fftw<R>::Plan p = get_plan<R>(Kind::c2r, last, work, a.out[0].data, false);
  Fftw<R>::run_c2r(p, work, a.out[0].data);
  scale(a.out[0].as<R>(), a.out[0].numel, ops::fft_scale(norm, true, ops::fft_points(a.out[0].shape, axes)));
}

// Makes the plans a node will use on aligned arrays while the model compiles, so measuring
// (RLX_FFT_PLANNER=measure) costs compile time rather than the first run's.
template <class R>
void plan_ahead(Op op, bool inverse, const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::vector<int64_t>& axes) {
  if (numel(in) == 0 || numel(out) == 0) return;
  if (op == Op::fft) get_plan<R>(inverse ? Kind::c2c_inverse : Kind::c2c_forward, {in, out, axes}, nullptr, nullptr, false);
  if (op == Op::rfft) get_plan<R>(Kind::r2c, {in, out, axes}, nullptr, nullptr, false);
  if (op == Op::irfft) {
    if (axes.size() > 1) get_plan<R>(Kind::c2c_inverse, {in, in, std::vector<int64_t>(axes.begin(), axes.end() - 1)}, nullptr, nullptr, true);
    get_plan<R>(Kind::c2r, {in, out, {axes.back()}}, nullptr, nullptr, false);
  }
}

HostKernel make_fft(const ir::Node& n, const ir::Graph& g) {
  const ir::Type &tin = g.type(n.inputs[0]), &tout = g.type(n.outputs[0]);
  std::vector<int64_t> axes = axes_of(n, tin.shape.size());
  std::string norm = n.attrs.s("norm");
  Op op = n.op;
  bool inverse = op == Op::fft && n.attrs.b("inverse");
  if (shape_is_static(tin.shape) && shape_is_static(tout.shape)) {
    bool wide = tin.dtype == DType::c128 || tin.dtype == DType::f64;
    std::vector<int64_t> si = shape_values(tin.shape), so = shape_values(tout.shape);
    wide ? plan_ahead<double>(op, inverse, si, so, axes) : plan_ahead<float>(op, inverse, si, so, axes);
  }
  return [=](const KernelArgs& a) {
    if (is_empty(a)) return;
    bool wide = a.in[0].dtype == DType::c128 || a.in[0].dtype == DType::f64;
    if (op == Op::fft) wide ? run_fft<double>(a, axes, inverse, norm) : run_fft<float>(a, axes, inverse, norm);
    else if (op == Op::rfft) wide ? run_rfft<double>(a, axes, norm) : run_rfft<float>(a, axes, norm);
    else wide ? run_irfft<double>(a, axes, norm) : run_irfft<float>(a, axes, norm);
  };
}

bool claims_fft(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::c64, DType::c128, DType::f32, DType::f64});
}

}  // namespace

void register_fft(KernelTable& t) {
  for (Op op : {Op::fft, Op::rfft, Op::irfft}) t[static_cast<size_t>(op)] = {claims_fft, make_fft};
}

}  // namespace rlx::backends::cpu
