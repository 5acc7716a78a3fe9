#include "backends/cuda/gemm.h"

#include <algorithm>
#include <mutex>
#include <optional>

#include "backends/cuda/device.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

constexpr size_t kWorkspace = size_t{32} << 20;  // cuBLASLt's recommendation for Hopper
constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The stride of a group of dims read as one flattened index, when they collapse to one.
std::optional<int64_t> group_stride(const std::vector<int64_t>& shape, const std::vector<int64_t>& st, const std::vector<int64_t>& dims) {
  std::vector<int64_t> d;
  for (int64_t x : dims)
    if (shape[static_cast<size_t>(x)] != 1) d.push_back(x);
  if (d.empty()) return 0;
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (st[static_cast<size_t>(d[i])] != st[static_cast<size_t>(d[i + 1])] * shape[static_cast<size_t>(d[i + 1])]) return std::nullopt;
  return st[static_cast<size_t>(d.back())];
}

int64_t prod(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape[static_cast<size_t>(d)];
  return p;
}

std::vector<int64_t> norm_all(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(norm_axis(a, rank));
  return out;
}

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f64: return CUDA_R_64F;
    case DType::c64: return CUDA_C_32F;
    case DType::c128: return CUDA_C_64F;
    case DType::i8: return CUDA_R_8I;
    case DType::i32: return CUDA_R_32I;
    default: return CUDA_R_32F;
  }
}

}  // namespace

// How the GEMM reads one operand as [batch, rows, K]: in place, or from a scratch copy.
struct GemmPlan::Operand {
  int64_t sb = 0, sr = 1, sk = 1;
  bool k_unit = true;  // K is the unit-stride dim (rows sr apart), else the rows are (K sk apart)
  bool copy = false;
  int bytes = 4;
  Space sp;
  Strides ss, ds;
  size_t offset = 0;  // of the copy in scratch
};

struct GemmPlan::Lt {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;  // what the chosen algorithm needs (most small products need none)
  bool f64 = false, bias = false;  // f64: double scalars (f64 or c128)
  bool i32 = false;  // i8 · i8 summed in i32 (IMMA tensor cores): integer alpha and beta
  std::mutex mu;  // the bias pointer is set on the shared descriptor right before each call
  ~Lt() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// alpha or beta in the descriptor's scale type (i32 for IMMA, f64, complex (re, 0), else f32)
struct ScaleValue {
  float f[2];
  double d[2];
  int32_t i;
  explicit ScaleValue(int v) : f{static_cast<float>(v), 0.f}, d{static_cast<double>(v), 0.0}, i(v) {}
  // a complex scale reads the (re, 0) pair from the same address
  const void* of(bool i32, bool f64) const { return i32 ? static_cast<const void*>(&i) : f64 ? static_cast<const void*>(d) : f; }
};

GemmPlan::~GemmPlan() = default;

GemmPlan::GemmPlan(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const ir::Intss& batch, const ir::Intss& contract, DType in,
                   DType out, const GemmEpilogue& ep)
    : in_(in), out_(out), residual_(ep.residual) {
  std::vector<int64_t> lb = norm_all(batch[0], x.size()), rb = norm_all(batch[1], w.size());
  std::vector<int64_t> lc = norm_all(contract[0], x.size()), rc = norm_all(contract[1], w.size()), lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d)
    if (std::find(lb.begin(), lb.end(), d) == lb.end() && std::find(lc.begin(), lc.end(), d) == lc.end()) lf.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(w.size()); ++d)
    if (std::find(rb.begin(), rb.end(), d) == rb.end() && std::find(rc.begin(), rc.end(), d) == rc.end()) rf.push_back(d);
  B_ = prod(x, lb);
  M_ = prod(x, lf);
  N_ = prod(w, rf);
  K_ = prod(x, lc);
  int eb = static_cast<int>(dtype_size(in));
  size_t at = 0;  // scratch: the operand copies, then cuBLASLt's workspace
  auto plan = [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& bd, const std::vector<int64_t>& fd,
                  const std::vector<int64_t>& kd, int64_t R) {
    auto o = std::make_unique<Operand>();
    std::vector<int64_t> cs = contiguous_strides(shape);
    auto sb = group_stride(shape, cs, bd), sr = group_stride(shape, cs, fd), sk = group_stride(shape, cs, kd);
    bool direct = sb && sr && sk;
    if (direct) {
      o->sb = *sb;
      o->sr = R == 1 ? 1 : *sr;
      o->sk = K_ == 1 ? 1 : *sk;
      if (R == 1 && K_ == 1) o->sr = o->sk = 1;
      // a matrix cuBLASLt can address: one of the two strides is 1 and the other spans the row
      o->k_unit = o->sk == 1 && o->sr >= K_;
      direct = o->k_unit || (o->sr == 1 && o->sk >= R);
    }
    if (!direct) {
      std::vector<int64_t> perm = bd;
      perm.insert(perm.end(), fd.begin(), fd.end());
      perm.insert(perm.end(), kd.begin(), kd.end());
      std::vector<int64_t> pshape, pst;
      for (int64_t d : perm) {
        pshape.push_back(shape[static_cast<size_t>(d)]);
        pst.push_back(cs[static_cast<size_t>(d)]);
      }
      std::vector<int64_t> dst = contiguous_strides(pshape);
      collapse(pshape, {&pst, &dst}, "mir.dot_general");
      o->copy = true;
      o->bytes = eb;
      o->sp = make_space(pshape);
      o->ss = make_strides(pst);
      o->ds = make_strides(dst);
      o->offset = at;
      at += align_up(static_cast<size_t>(B_ * R * K_) * static_cast<size_t>(eb));
      o->sb = R * K_;
      o->sr = K_;
      o->sk = 1;
      o->k_unit = true;
    }
    return o;
  };
  a_ = plan(x, lb, lf, lc, M_);
  b_ = plan(w, rb, rf, rc, N_);
  scratch_ = workspace_at_ = at;

  const bool imma = in == DType::i8 && out == DType::i32 && ep.kind == GemmEpilogue::Kind::none && !ep.residual;
  if (!is_float(in) && !is_complex(in) && !imma) return;  // other integers: the simple kernel
  auto lt = std::make_unique<Lt>();
  lt->f64 = in == DType::f64 || in == DType::c128;
  lt->i32 = imma;
  cublasComputeType_t compute = imma ? CUBLAS_COMPUTE_32I : lt->f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = imma ? CUDA_R_32I : is_complex(in) ? (lt->f64 ? CUDA_C_64F : CUDA_C_32F) : lt->f64 ? CUDA_R_64F : CUDA_R_32F;
  check(cublasLtMatmulDescCreate(&lt->op, compute, scale), "cublasLtMatmulDescCreate");
  // cuBLASLt is column-major: row-major C[M,N] = x·wᵀ is column-major Cᵀ[N,M] = w[N,K] · x[M,K]ᵀ.
  const Operand &ra = *b_, &rb_ = *a_;
  cublasOperation_t ta = ra.k_unit ? CUBLAS_OP_T : CUBLAS_OP_N, tb = rb_.k_unit ? CUBLAS_OP_N : CUBLAS_OP_T;
  check(cublasLtMatmulDescSetAttribute(lt->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(lt->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "TRANSB");
  if (ep.kind != GemmEpilogue::Kind::none) {
    cublasLtEpilogue_t e = ep.kind == GemmEpilogue::Kind::bias        ? CUBLASLT_EPILOGUE_BIAS
                           : ep.kind == GemmEpilogue::Kind::relu_bias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                                      : CUBLASLT_EPILOGUE_GELU_BIAS;
    check(cublasLtMatmulDescSetAttribute(lt->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)), "EPILOGUE");
    lt->bias = true;
  }
  auto layout = [&](cublasLtMatrixLayout_t& l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t batch_stride) {
    check(cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld), "cublasLtMatrixLayoutCreate");
    if (B_ > 1) {
      int32_t count = static_cast<int32_t>(B_);
      check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), "BATCH_COUNT");
      check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride, sizeof(batch_stride)), "BATCH_OFFSET");
    }
  };
  if (ta == CUBLAS_OP_N) layout(lt->a, cuda_type(in), N_, K_, std::max<int64_t>(ra.sk, 1), ra.sb);
  else layout(lt->a, cuda_type(in), K_, N_, std::max<int64_t>(ra.sr, 1), ra.sb);
  if (tb == CUBLAS_OP_N) layout(lt->b, cuda_type(in), K_, M_, std::max<int64_t>(rb_.sr, 1), rb_.sb);
  else layout(lt->b, cuda_type(in), M_, K_, std::max<int64_t>(rb_.sk, 1), rb_.sb);
  layout(lt->c, cuda_type(out), N_, M_, N_, M_ * N_);
  cublasLtMatmulPreference_t pref;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  uint64_t ws = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  uint32_t align = 64;  // arena offsets are 64-byte aligned; every buffer starts there
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align));
  cublasLtMatmulHeuristicResult_t results[16] = {};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cublaslt(), lt->op, lt->a, lt->b, lt->c, lt->c, pref, 16, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    if (ep.kind != GemmEpilogue::Kind::none || ep.residual || is_complex(in))  // the simple kernel takes no epilogue nor complex
      throw Error(ErrorKind::unsupported, cat("cuda: cuBLASLt has no algorithm for a ", M_, "×", N_, "×", K_, " ", dtype_name(in), " GEMM with this epilogue"));
    if (debug_at(1)) log_line(cat("cuda: cuBLASLt has no algorithm for ", M_, "×", N_, "×", K_, " (", dtype_name(in), "); using the simple kernel"));
    return;
  }
  lt->algo = results[0].algo;
  lt->workspace = results[0].workspaceSize;
  int64_t nx = 1, nw = 1;
  for (int64_t d : x) nx *= d;
  for (int64_t d : w) nw *= d;
  // Tiny products are launch-bound: timing their candidates would measure noise. From a
  // million multiply-adds on, the heuristic's first answer can be 10× off: training's weight
  // gradient [10, 128] over a batch of 1024 took 58 µs where a split-K candidate takes ~5.
  if (found > 1 && static_cast<double>(B_) * M_ * N_ * K_ >= double(1 << 20)) tune(*lt, results, found, std::max(nx, B_ * M_ * K_), std::max(nw, B_ * N_ * K_));
  // Scratch is only what the chosen algorithm uses: steps that need none can run side by side
  // (the executable orders steps that share scratch bytes).
  scratch_ = workspace_at_ + align_up(lt->workspace);
  lt_ = std::move(lt);
}

// The heuristic's first answer is often not the fastest for the small, skinny products of
// inference: each candidate is timed once here, at compile time, on scratch buffers.
void GemmPlan::tune(Lt& lt, const cublasLtMatmulHeuristicResult_t* results, int found, int64_t a_elems, int64_t b_elems) {
  size_t eb = dtype_size(in_), ob = dtype_size(out_);
  DeviceBuffer a(static_cast<size_t>(a_elems) * eb, "GEMM tuning"), b(static_cast<size_t>(b_elems) * eb, "GEMM tuning"),
      c(static_cast<size_t>(B_ * M_ * N_) * ob, "GEMM tuning"), bias(static_cast<size_t>(N_) * ob + 256, "GEMM tuning"), ws(kWorkspace, "GEMM tuning");
  for (auto* buf : {&a, &b, &c, &bias}) check(cudaMemset(buf->data(), 0, buf->bytes()), "clearing a tuning buffer");
  const void* bp = bias.data();
  if (lt.bias) check(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)), "BIAS_POINTER");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "creating an event");
  check(cudaEventCreate(&e1), "creating an event");
  const ScaleValue alpha(1), beta(0);
  const void* al = alpha.of(lt.i32, lt.f64);
  const void* be = beta.of(lt.i32, lt.f64);
  float best = 0;
  bool have = false;
  for (int i = 0; i < found; ++i) {
    auto go = [&] {
      return cublasLtMatmul(cublaslt(), lt.op, al, b.data(), lt.a, a.data(), lt.b, be, c.data(), lt.c, c.data(), lt.c, &results[i].algo, ws.data(),
                            kWorkspace, nullptr);
    };
    if (go() != CUBLAS_STATUS_SUCCESS) continue;
    cudaEventRecord(e0, nullptr);
    for (int r = 0; r < 10; ++r) go();
    cudaEventRecord(e1, nullptr);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (!have || ms < best) {
      have = true;
      best = ms;
      lt.algo = results[i].algo;
      lt.workspace = results[i].workspaceSize;
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGetLastError();
}

std::string GemmPlan::describe() const {
  return cat(B_ > 1 ? cat(B_, "×") : std::string(), M_, "×", N_, "×", K_, " ", dtype_name(in_), "→", dtype_name(out_), lt_ ? " cuBLASLt" : " simple",
             lt_ && lt_->bias ? "+bias" : "", lt_ && residual_ ? "+residual" : "", a_->copy ? ", copies A" : "", b_->copy ? ", copies B" : "");
}

void GemmPlan::run(const void* x, const void* w, void* y, const void* bias, const void* residual, void* scratch, cudaStream_t s) const {
  auto* base = static_cast<uint8_t*>(scratch);
  if (a_->copy) {
    launch_strided_copy(a_->bytes, x, 0, a_->ss, base + a_->offset, 0, a_->ds, a_->sp, s);
    x = base + a_->offset;
  }
  if (b_->copy) {
    launch_strided_copy(b_->bytes, w, 0, b_->ss, base + b_->offset, 0, b_->ds, b_->sp, s);
    w = base + b_->offset;
  }
  if (B_ * M_ * N_ == 0) return;
  if (!lt_) {
    GemmSpec g{B_, M_, N_, K_, a_->sb, a_->sr, a_->sk, b_->sb, b_->sk, b_->sr};
    launch_gemm_naive(to_dt(in_), to_dt(out_), x, w, y, g, s);
    return;
  }
  const ScaleValue alpha(1), beta(residual ? 1 : 0);
  const void* al = alpha.of(lt_->i32, lt_->f64);
  const void* be = beta.of(lt_->i32, lt_->f64);
  const void* c = residual ? residual : y;
  std::unique_lock<std::mutex> lock(lt_->mu, std::defer_lock);
  if (lt_->bias) {
    lock.lock();
    check(cublasLtMatmulDescSetAttribute(lt_->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "BIAS_POINTER");
  }
  check(cublasLtMatmul(cublaslt(), lt_->op, al, w, lt_->a, x, lt_->b, be, c, lt_->c, y, lt_->c, &lt_->algo,
                       lt_->workspace ? base + workspace_at_ : nullptr, lt_->workspace, s),
        "cublasLtMatmul");
}

}  // namespace rlx::backends::cuda
