// Fourier transforms through cuFFT, loaded on first use (dlopen of libcufft.so.12: every process
// would otherwise map its ~290 MB at start). cuFFT's batched plans take the transformed axes as
// the trailing ones of a contiguous tensor: other axes are moved there by strided copies
// (make_fft). Each node is planned once when the model compiles, its work area and copies in the
// run's scratch.
#include <cufft.h>

#include <algorithm>
#include <mutex>

#include "backends/cuda/device.h"
#include "backends/cuda/dynlib.h"
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
  static const Cufft api = load_api<Cufft>("libcufft.so.12", [](Cufft& c, auto sym) {
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
  });
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

// A copy of a tensor with its dims reordered: dim d of the result is dim perm[d] of the source.
struct Permute {
  bool identity = true;
  int bytes = 0;
  Space sp;
  Strides ss, ds;
  std::vector<int64_t> shape;  // the result's
};
Permute plan_permute(const std::vector<int64_t>& src, const std::vector<size_t>& perm, int bytes) {
  Permute p;
  p.bytes = bytes;
  std::vector<int64_t> cs = contiguous_strides(src), ss(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    p.shape.push_back(src[perm[d]]);
    ss[d] = cs[perm[d]];
    p.identity = p.identity && perm[d] == d;
  }
  std::vector<int64_t> shape = p.shape, ds = contiguous_strides(shape);
  collapse(shape, {&ss, &ds}, "a Fourier transform's transpose");
  p.sp = make_space(shape);
  p.ss = make_strides(ss);
  p.ds = make_strides(ds);
  return p;
}
void run_permute(const Permute& p, const void* src, void* dst, cudaStream_t s) { launch_strided_copy(p.bytes, src, 0, p.ss, dst, 0, p.ds, p.sp, s); }
std::vector<size_t> inverse_of(const std::vector<size_t>& perm) {
  std::vector<size_t> inv(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inv[perm[d]] = d;
  return inv;
}

// One cuFFT execution over the trailing `rank` dims of a contiguous buffer.
struct Transform {
  std::shared_ptr<Plan> plan;
  cufftType type = CUFFT_C2C;
  int dir = CUFFT_FORWARD;
  void operator()(void* in, void* out, void* work, cudaStream_t s) const {
    const Cufft& f = cufft();
    check_fft(f.set_stream(plan->handle, s), "setting the stream");
    check_fft(f.set_work_area(plan->handle, work), "setting the work area");
    switch (type) {
      case CUFFT_C2C: check_fft(f.exec_c2c(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), dir), "running C2C"); break;
      case CUFFT_Z2Z: check_fft(f.exec_z2z(plan->handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), dir), "running Z2Z"); break;
      case CUFFT_R2C: check_fft(f.exec_r2c(plan->handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)), "running R2C"); break;
      case CUFFT_D2Z: check_fft(f.exec_d2z(plan->handle, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out)), "running D2Z"); break;
      case CUFFT_C2R: check_fft(f.exec_c2r(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)), "running C2R"); break;
      default: check_fft(f.exec_z2d(plan->handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out)), "running Z2D"); break;
    }
  }
};
// A plan over the last `rank` dims of `in_shape` (the complex side halved for r2c/c2r: `n` are
// the transform's logical lengths).
Transform plan_transform(cufftType type, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape, std::vector<long long> n, int dir) {
  size_t r = in_shape.size(), k = n.size();
  long long batch = product(in_shape, 0, r - k), in_dist = product(in_shape, r - k, r), out_dist = product(out_shape, r - k, r);
  return {std::make_shared<Plan>(type, std::move(n), batch, in_dist, out_dist), type, dir};
}

// Each transform runs on the transformed axes moved to the end (the last listed one innermost:
// it is r2c's halved axis), by strided copies into scratch where they are not there already:
//   fft:   x → [permute] → C2C in place → [permute back] → y
//   rfft:  x → [permute] → R2C → [permute back] → y
//   irfft: x → [permute: the last listed axis before the others] → C2C⁻¹ over the others (k > 1)
//          → [permute: the last listed axis innermost] → C2R along it → [permute back] → y
// numpy's irfft order: the inverse over the other axes first, then the Hermitian inverse along
// the last (C2R overwrites its input, which is always a scratch copy here).
Kernel make_fft(const ir::Node& node, const ir::Graph& lir) {
  std::vector<int64_t> xs = static_shape(lir, node.inputs[0]), ys = static_shape(lir, node.outputs[0]);
  size_t r = xs.size();
  std::vector<size_t> axes;
  for (int64_t a : node.attrs.ints("axes")) axes.push_back(static_cast<size_t>(norm_axis(a, r)));
  size_t k = axes.size();
  Op op = node.op;
  DType xd = lir.type(node.inputs[0]).dtype;
  bool wide = xd == DType::c128 || xd == DType::f64;
  int cbytes = wide ? 16 : 8, rbytes = wide ? 8 : 4;
  bool inverse = op == Op::irfft || (op == Op::fft && node.attrs.b("inverse"));
  const std::vector<int64_t>& real_side = op == Op::irfft ? ys : xs;
  double transformed = 1;
  for (size_t a : axes) transformed *= static_cast<double>(real_side[a]);
  double scale = ops::fft_scale(node.attrs.s("norm"), inverse, transformed);
  int64_t out_reals = product(ys, 0, r) * (op == Op::irfft ? 1 : 2);
  // the axes not transformed in order, then the listed ones as listed
  std::vector<size_t> perm;
  for (size_t d = 0; d < r; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  perm.insert(perm.end(), axes.begin(), axes.end());
  auto lengths = [&](const std::vector<int64_t>& shape, size_t from, size_t count) {
    std::vector<long long> n;
    for (size_t i = from; i < from + count; ++i) n.push_back(shape[i]);
    return n;
  };
  size_t work = 0;
  auto note = [&](const Transform& t) { work = std::max(work, t.plan->work); };
  auto bytes_of = [](const std::vector<int64_t>& shape, int es) { return (static_cast<size_t>(product(shape, 0, shape.size())) * es + 255) / 256 * 256; };

  if (op != Op::irfft) {
    bool real_in = op == Op::rfft;
    Permute in = plan_permute(xs, perm, real_in ? rbytes : cbytes);
    std::vector<int64_t> ps = in.shape, qs = ps;
    if (real_in) qs.back() = qs.back() / 2 + 1;
    Permute back = plan_permute(qs, inverse_of(perm), cbytes);
    cufftType type = real_in ? (wide ? CUFFT_D2Z : CUFFT_R2C) : (wide ? CUFFT_Z2Z : CUFFT_C2C);
    Transform t = plan_transform(type, ps, qs, lengths(ps, r - k, k), inverse ? CUFFT_INVERSE : CUFFT_FORWARD);
    note(t);
    // scratch: [permuted input][transformed, when it is not written in place or straight to y][work]
    size_t p_bytes = in.identity ? 0 : bytes_of(ps, in.bytes);
    size_t q_bytes = back.identity || !real_in ? 0 : bytes_of(qs, cbytes);
    return Kernel(
        [=](const LaunchArgs& a) {
          char* s = static_cast<char*>(a.scratch);
          void* p = in.identity ? a.in[0].data : s;
          if (!in.identity) run_permute(in, a.in[0].data, p, a.stream);
          // C2C runs in place on a permuted copy, else from x into y (or Q)
          void* q = back.identity ? a.out[0].data : (real_in ? s + p_bytes : p);
          t(p, q, s + p_bytes + q_bytes, a.stream);
          if (!back.identity) run_permute(back, q, a.out[0].data, a.stream);
          if (scale != 1.0) launch_scale(wide, a.out[0].data, out_reals, scale, a.stream);
        },
        p_bytes + q_bytes + work, "cuFFT");
  }

  // irfft
  std::vector<size_t> first = perm;  // the last listed axis ahead of the other listed ones
  if (k > 1) std::rotate(first.end() - static_cast<long>(k), first.end() - 1, first.end());
  Permute in = plan_permute(xs, first, cbytes);
  std::vector<int64_t> ps = in.shape;
  bool c2c = k > 1;
  Transform t1;
  if (c2c) {
    t1 = plan_transform(wide ? CUFFT_Z2Z : CUFFT_C2C, ps, ps, lengths(ps, r - k + 1, k - 1), CUFFT_INVERSE);
    note(t1);
  }
  // from `first` order to `perm` order: the last listed axis innermost
  std::vector<size_t> to_last(r);
  for (size_t d = 0; d < r; ++d) to_last[d] = static_cast<size_t>(std::find(first.begin(), first.end(), perm[d]) - first.begin());
  Permute mid = plan_permute(ps, to_last, cbytes);
  std::vector<int64_t> qs = mid.shape, rs = qs;
  rs.back() = ys[axes.back()];
  Transform t2 = plan_transform(wide ? CUFFT_Z2D : CUFFT_C2R, qs, rs, {static_cast<long long>(rs.back())}, CUFFT_INVERSE);
  note(t2);
  Permute back = plan_permute(rs, inverse_of(perm), rbytes);
  size_t p_bytes = bytes_of(ps, cbytes), q_bytes = mid.identity ? 0 : bytes_of(qs, cbytes), r_bytes = back.identity ? 0 : bytes_of(rs, rbytes);
  return Kernel(
      [=](const LaunchArgs& a) {
        char* s = static_cast<char*>(a.scratch);
        void* p = s;  // always a copy: C2R overwrites its input
        if (in.identity) check(cudaMemcpyAsync(p, a.in[0].data, static_cast<size_t>(a.in[0].numel) * cbytes, cudaMemcpyDeviceToDevice, a.stream), "copying irfft's input");
        else run_permute(in, a.in[0].data, p, a.stream);
        void* w = s + p_bytes + q_bytes + r_bytes;
        if (c2c) t1(p, p, w, a.stream);
        void* q = p;
        if (!mid.identity) {
          q = s + p_bytes;
          run_permute(mid, p, q, a.stream);
        }
        void* out = back.identity ? a.out[0].data : s + p_bytes + q_bytes;
        t2(q, out, w, a.stream);
        if (!back.identity) run_permute(back, out, a.out[0].data, a.stream);
        if (scale != 1.0) launch_scale(wide, a.out[0].data, out_reals, scale, a.stream);
      },
      p_bytes + q_bytes + r_bytes + work, "cuFFT");
}

// Up to three distinct axes (cuFFT's ranks), any order; irfft's other axes are at most three
// too. Ranks up to kMaxRank after the transposes' dims merge.
bool claims_fft(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!cufft().error.empty() || !shape_is_static(in[0].shape) || !shape_is_static(out[0].shape)) return false;
  if (!is_one_of(in[0].dtype, {DType::c64, DType::c128, DType::f32, DType::f64})) return false;
  const ir::Ints& axes = attrs.ints("axes");
  size_t r = in[0].shape.size();
  if (axes.empty() || axes.size() > 3 || r > static_cast<size_t>(kMaxRank)) return false;
  std::vector<int64_t> seen;
  for (int64_t a : axes) {
    int64_t d = norm_axis(a, r);
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) return false;
    seen.push_back(d);
  }
  return true;
}

}  // namespace

void register_fft(KernelTable& t) {
  for (Op op : {Op::fft, Op::rfft, Op::irfft}) t[static_cast<size_t>(op)] = {claims_fft, make_fft};
}

}  // namespace rlx::backends::cuda
