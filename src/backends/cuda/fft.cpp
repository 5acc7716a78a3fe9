// Fourier transforms through cuFFT, loaded on first use (dlopen of libcufft.so.12: every process
// would otherwise map its ~290 MB at start). cuFFT's batched plans take the transformed axes as
// the trailing ones of a contiguous tensor, so the cuda device claims transforms over the last
// 1–3 axes in order — the rest fail to compile, naming the op — and plans each node once when
// the model compiles, its work area in the run's scratch. irfft (one axis) copies its input first:
// c2r overwrites it.
#include <cufft.h>
#include <dlfcn.h>

#include <mutex>

#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "ops/fft.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

// The cuFFT entry points RLX uses.
struct Cufft {
  cufftResult (*create)(cufftHandle*);
  cufftResult (*set_auto_allocation)(cufftHandle, int);
  cufftResult (*make_plan_many64)(cufftHandle, int, long long*, long long*, long long, long long, long long*, long long, long long, cufftType,
                                  long long, size_t*);
  cufftResult (*set_stream)(cufftHandle, cudaStream_t);
  cufftResult (*set_work_area)(cufftHandle, void*);
  cufftResult (*exec_c2c)(cufftHandle, cufftComplex*, cufftComplex*, int);
  cufftResult (*exec_z2z)(cufftHandle, cufftDoubleComplex*, cufftDoubleComplex*, int);
  cufftResult (*exec_r2c)(cufftHandle, cufftReal*, cufftComplex*);
  cufftResult (*exec_d2z)(cufftHandle, cufftDoubleReal*, cufftDoubleComplex*);
  cufftResult (*exec_c2r)(cufftHandle, cufftComplex*, cufftReal*);
  cufftResult (*exec_z2d)(cufftHandle, cufftDoubleComplex*, cufftDoubleReal*);
  std::string error;  // why it could not be loaded
};

const Cufft& cufft() {
  static const Cufft api = [] {
    Cufft c{};
    void* h = dlopen("libcufft.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      c.error = cat("libcufft.so.12 could not be loaded (", dlerror(), ")");
      return c;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && c.error.empty()) c.error = cat("libcufft.so.12 has no ", name);
    };
    sym(c.create, "cufftCreate");
    sym(c.set_auto_allocation, "cufftSetAutoAllocation");
    sym(c.make_plan_many64, "cufftMakePlanMany64");
    sym(c.set_stream, "cufftSetStream");
    sym(c.set_work_area, "cufftSetWorkArea");
    sym(c.exec_c2c, "cufftExecC2C");
    sym(c.exec_z2z, "cufftExecZ2Z");
    sym(c.exec_r2c, "cufftExecR2C");
    sym(c.exec_d2z, "cufftExecD2Z");
    sym(c.exec_c2r, "cufftExecC2R");
    sym(c.exec_z2d, "cufftExecZ2D");
    return c;
  }();
  return api;
}

void check_fft(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw Error(ErrorKind::internal, cat("cuda fft: cuFFT failed ", what, " (cufftResult ", static_cast<int>(r), ")"));
}

// A plan of `rank` trailing dims `n` (the real side's lengths for r2c/c2r) over `batch` items.
struct Plan {
  cufftHandle handle = 0;
  size_t work = 0;
  Plan(cufftType type, std::vector<long long> n, long long batch, long long in_dist, long long out_dist) {
    const Cufft& f = cufft();
    check_fft(f.create(&handle), "creating a plan");
    check_fft(f.set_auto_allocation(handle, 0), "setting the work area to RLX's scratch");
    check_fft(f.make_plan_many64(handle, static_cast<int>(n.size()), n.data(), nullptr, 1, in_dist, nullptr, 1, out_dist, type, batch, &work),
              "planning");
  }
};

int64_t product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

Kernel make_fft(const ir::Node& node, const ir::Graph& lir) {
  std::vector<int64_t> xs = static_shape(lir, node.inputs[0]), ys = static_shape(lir, node.outputs[0]);
  size_t r = xs.size(), k = node.attrs.ints("axes").size();
  Op op = node.op;
  DType xd = lir.type(node.inputs[0]).dtype;
  bool wide = xd == DType::c128 || xd == DType::f64;
  bool inverse = op == Op::irfft || (op == Op::fft && node.attrs.b("inverse"));
  const std::vector<int64_t>& real_side = op == Op::irfft ? ys : xs;
  std::vector<long long> n(real_side.begin() + static_cast<long>(r - k), real_side.end());
  long long batch = product(xs, 0, r - k), in_dist = product(xs, r - k, r), out_dist = product(ys, r - k, r);
  double scale = ops::fft_scale(node.attrs.s("norm"), inverse, static_cast<double>(product(real_side, r - k, r)));
  int64_t out_reals = product(ys, 0, r) * (op == Op::irfft ? 1 : 2);
  auto finish = [=](const LaunchArgs& a) {
    if (scale != 1.0) launch_scale(wide, a.out[0].data, out_reals, scale, a.stream);
  };
  if (op == Op::fft) {
    auto plan = std::make_shared<Plan>(wide ? CUFFT_Z2Z : CUFFT_C2C, n, batch, in_dist, out_dist);
    int dir = inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
    return Kernel(
        [=](const LaunchArgs& a) {
          const Cufft& f = cufft();
          check_fft(f.set_stream(plan->handle, a.stream), "setting the stream");
          check_fft(f.set_work_area(plan->handle, a.scratch), "setting the work area");
          if (wide) check_fft(f.exec_z2z(plan->handle, static_cast<cufftDoubleComplex*>(a.in[0].data), static_cast<cufftDoubleComplex*>(a.out[0].data), dir), "running Z2Z");
          else check_fft(f.exec_c2c(plan->handle, static_cast<cufftComplex*>(a.in[0].data), static_cast<cufftComplex*>(a.out[0].data), dir), "running C2C");
          finish(a);
        },
        plan->work, "cuFFT");
  }
  if (op == Op::rfft) {
    auto plan = std::make_shared<Plan>(wide ? CUFFT_D2Z : CUFFT_R2C, n, batch, in_dist, out_dist);
    return Kernel(
        [=](const LaunchArgs& a) {
          const Cufft& f = cufft();
          check_fft(f.set_stream(plan->handle, a.stream), "setting the stream");
          check_fft(f.set_work_area(plan->handle, a.scratch), "setting the work area");
          if (wide) check_fft(f.exec_d2z(plan->handle, static_cast<cufftDoubleReal*>(a.in[0].data), static_cast<cufftDoubleComplex*>(a.out[0].data)), "running D2Z");
          else check_fft(f.exec_r2c(plan->handle, static_cast<cufftReal*>(a.in[0].data), static_cast<cufftComplex*>(a.out[0].data)), "running R2C");
          finish(a);
        },
        plan->work, "cuFFT");
  }
  // irfft (one axis): scratch = [a copy of the input][the plan's work area]
  size_t copy_bytes = static_cast<size_t>(product(xs, 0, r)) * (wide ? 16 : 8);
  size_t copy_padded = (copy_bytes + 255) / 256 * 256;
  auto c2r = std::make_shared<Plan>(wide ? CUFFT_Z2D : CUFFT_C2R, n, batch, in_dist, out_dist);
  size_t work = c2r->work;
  return Kernel(
      [=](const LaunchArgs& a) {
        const Cufft& f = cufft();
        void* copy = a.scratch;
        void* area = static_cast<char*>(a.scratch) + copy_padded;
        check(cudaMemcpyAsync(copy, a.in[0].data, copy_bytes, cudaMemcpyDeviceToDevice, a.stream), "copying irfft's input");
        check_fft(f.set_stream(c2r->handle, a.stream), "setting the stream");
        check_fft(f.set_work_area(c2r->handle, area), "setting the work area");
        if (wide) check_fft(f.exec_z2d(c2r->handle, static_cast<cufftDoubleComplex*>(copy), static_cast<cufftDoubleReal*>(a.out[0].data)), "running Z2D");
        else check_fft(f.exec_c2r(c2r->handle, static_cast<cufftComplex*>(copy), static_cast<cufftReal*>(a.out[0].data)), "running C2R");
        finish(a);
      },
      copy_padded + work, "cuFFT");
}

// The transformed axes must be the trailing ones in order (at most 3: cuFFT's ranks); irfft over one axis.
bool claims_fft(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!cufft().error.empty() || !shape_is_static(in[0].shape) || !shape_is_static(out[0].shape)) return false;
  if (!is_one_of(in[0].dtype, {DType::c64, DType::c128, DType::f32, DType::f64})) return false;
  const ir::Ints& axes = attrs.ints("axes");
  size_t r = in[0].shape.size();
  if (axes.empty() || axes.size() > 3 || (op == Op::irfft && axes.size() != 1)) return false;
  for (size_t i = 0; i < axes.size(); ++i)
    if (norm_axis(axes[i], r) != static_cast<int64_t>(r - axes.size() + i)) return false;
  return true;
}

}  // namespace

void register_fft(KernelTable& t) {
  for (Op op : {Op::fft, Op::rfft, Op::irfft}) t[static_cast<size_t>(op)] = {claims_fft, make_fft};
}

}  // namespace rlx::backends::cuda
