// dot_general through oneDNN's matmul (brgemm: AVX-512 for f32, AMX for bf16). Transposed
// operands are plain strides (no copies); constant weights are reordered once, at compile
// time, into the layout the kernel wants. oneDNN runs single-threaded inside each of our pool
// threads on a slice of rows or columns, so there is only one set of threads on the machine.
#include "backends/cpu/onednn_matmul.h"

#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "backends/cpu/bf16_rate.h"
#include "codegen/vmath.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using dt = dnnl::memory::data_type;

dnnl::engine& engine() { return onednn_engine(); }

dt to_dnnl(DType d) { return onednn_type(d); }

struct Slice {
  int64_t lo = 0, hi = 0;  // rows (by_rows) or columns of C
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c, scratch;
  std::vector<dnnl::memory::desc> src1;    // per binary post-op
  std::shared_ptr<dnnl::memory> packed_b;  // constant weights in the kernel's own layout
  // The epilogue from its first per-row operand on (an int8 product's activation scales): a
  // binary primitive over C in place, since the matmul's own post-ops take no per-row operand.
  std::optional<dnnl::binary> tail;
  dnnl::memory::desc tail_scratch;
};

struct Plan {
  size_t tail_from = 0;  // epilogue ops [0, tail_from) run as the matmul's post-ops, the rest after it
  int64_t batch = 1, M = 0, K = 0, N = 0;
  bool a_km = false, b_nk = false;  // A stored [K, M] / B stored [N, K] (transposed)
  bool by_rows = true;
  size_t a_elem = 4, b_elem = 4, c_elem = 4;
  bool round_a = false, round_b = false;  // f32 operands rounded to bf16 inside the kernel
  bool widen_a = false, widen_b = false;  // bf16 operands widened to f32 for the f32 kernel (bf16_rate.h)
  bool narrow_c = false;  // … whose f32 C (and epilogue) is rounded into the bf16 C after it
  Epilogue epilogue;
  std::vector<Slice> slices;
};

dnnl::memory::desc strided(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, DType d) {
  return dnnl::memory::desc({rows, cols}, to_dnnl(d), dnnl::memory::dims{row_stride, col_stride});
}

// A binary post-op's operand for an m × n share of C, as a strided view of its [M, N] / [1, N] /
// [1, 1] / [M, 1] buffer.
dnnl::memory::desc src1_desc(const PostOp& op, int64_t m, int64_t n, int64_t N) {
  switch (op.src1) {
    case PostOp::Src1::full: return strided(m, n, N, 1, DType::f32);
    case PostOp::Src1::row: return strided(1, n, n, 1, DType::f32);
    case PostOp::Src1::column: return strided(m, 1, 1, 1, DType::f32);
    case PostOp::Src1::scalar: break;
  }
  return strided(1, 1, 1, 1, DType::f32);
}

// Where that share's operand starts in its buffer (elements).
int64_t src1_offset(const PostOp& op, bool by_rows, int64_t lo, int64_t c_off) {
  switch (op.src1) {
    case PostOp::Src1::full: return c_off;
    case PostOp::Src1::row: return by_rows ? 0 : lo;
    case PostOp::Src1::column: return by_rows ? lo : 0;
    case PostOp::Src1::scalar: break;
  }
  return 0;
}

void append_post_op(dnnl::post_ops& po, const PostOp& op, const dnnl::memory::desc& src1) {
  if (op.kind == PostOp::Kind::eltwise) po.append_eltwise(1.0f, static_cast<dnnl::algorithm>(op.alg), op.alpha, op.beta);
  else po.append_binary(static_cast<dnnl::algorithm>(op.alg), src1);
}

bool reference_impl(const char* impl) { return std::string(impl).rfind("ref", 0) == 0; }

// Slice of B (rows k, columns [lo, hi)) as a strided desc over the full B buffer.
// split: C's rows or columns are shared out among the threads, one primitive per share.
// widen: bf16 operands multiplied by the f32 kernel (A's slices widened as they run, runtime B
// whole, constant B once in its reorder).
std::shared_ptr<Plan> build_plan(const MatmulShape& s, const void* const_b, const Epilogue& ep, bool split, bool widen = false) {
  omp_set_num_threads(1);  // the weight reorders below must not start an OpenMP team either
  auto p = std::make_shared<Plan>();
  p->epilogue = ep;
  p->tail_from = ep.ops.size();
  for (size_t i = 0; i < ep.ops.size(); ++i)
    if (ep.ops[i].kind == PostOp::Kind::binary && ep.ops[i].src1 == PostOp::Src1::column) {
      p->tail_from = i;
      break;
    }
  widen = widen && s.a_dtype == DType::bf16 && s.b_dtype == DType::bf16;
  p->narrow_c = widen && s.c_dtype == DType::bf16;  // f32 kernels store no bf16 C on every ISA
  // the tail runs on C in f32, in place
  if (p->tail_from < ep.ops.size() && s.c_dtype != DType::f32 && !p->narrow_c)
    throw dnnl::error(dnnl_unimplemented, "a per-row epilogue operand needs an f32 C");
  p->batch = s.batch;
  p->M = s.M;
  p->K = s.K;
  p->N = s.N;
  p->a_km = s.a_km;
  p->b_nk = s.b_nk;
  p->a_elem = dtype_size(s.a_dtype);
  p->b_elem = dtype_size(s.b_dtype);
  p->c_elem = dtype_size(s.c_dtype);
  bool to_bf16 = s.compute == DType::bf16 && !widen;
  p->round_a = to_bf16 && s.a_dtype == DType::f32;
  p->round_b = to_bf16 && s.b_dtype == DType::f32 && !const_b;  // constant weights are converted once, below
  p->widen_a = widen;
  p->widen_b = widen && !const_b;
  DType kernel_b = widen ? DType::f32 : to_bf16 ? DType::bf16 : s.b_dtype;
  int T = num_threads();
  // Split the rows of C when there are enough, otherwise its columns (decode: M = 1).
  p->by_rows = s.batch > 1 || s.M >= 32 * T || s.N < 64 * T;
  int64_t len = s.batch > 1 ? s.M : (p->by_rows ? s.M : s.N);
  int parts = (s.batch > 1) ? 1 : std::max<int>(1, std::min<int64_t>(T, len / (p->by_rows ? 16 : 64)));
  if (s.M * s.N * s.K < 32768 || !split) parts = 1;
  int64_t chunk = (len + parts - 1) / parts;
  // A per-row tail reads C right after the product: blocks of rows whose C stays in L2 (~512 KB),
  // all of one size sharing one primitive and one packed copy of B.
  if (p->tail_from < ep.ops.size() && p->by_rows && s.batch == 1 && parts > 1) {
    chunk = std::clamp<int64_t>((int64_t{512} << 10) / (s.N * 4) / 16 * 16, 16, 256);
    parts = static_cast<int>((len + chunk - 1) / chunk);
  }
  for (int i = 0; i < parts; ++i) {
    Slice sl;
    sl.lo = i * chunk;
    sl.hi = std::min(len, sl.lo + chunk);
    if (sl.lo >= sl.hi) continue;
    if (p->by_rows && !p->slices.empty() && p->slices[0].hi - p->slices[0].lo == sl.hi - sl.lo) {
      Slice same = p->slices[0];  // as many rows: the same primitives (and packed B) over other rows
      same.lo = sl.lo;
      same.hi = sl.hi;
      p->slices.push_back(std::move(same));
      continue;
    }
    int64_t m = p->by_rows ? sl.hi - sl.lo : s.M, n = p->by_rows ? s.N : sl.hi - sl.lo;
    // Rounded or widened A slices are packed [m, K]; rounded or widened runtime B keeps its layout.
    sl.a = p->round_a ? strided(m, s.K, s.K, 1, DType::bf16)
           : p->widen_a ? strided(m, s.K, s.K, 1, DType::f32)
           : p->a_km  ? strided(m, s.K, 1, s.M, s.a_dtype)
                      : strided(m, s.K, s.K, 1, s.a_dtype);
    dnnl::memory::desc b_user = p->b_nk ? strided(s.K, n, 1, s.K, s.b_dtype) : strided(s.K, n, s.N, 1, s.b_dtype);
    const DType b_run_type = p->round_b ? DType::bf16 : p->widen_b ? DType::f32 : s.b_dtype;
    dnnl::memory::desc b_run = p->b_nk ? strided(s.K, n, 1, s.K, b_run_type) : strided(s.K, n, s.N, 1, b_run_type);
    sl.c = p->narrow_c ? strided(m, n, n, 1, DType::f32) : strided(m, n, s.N, 1, s.c_dtype);  // narrow_c: a packed f32 share
    dnnl::memory::desc b_want = const_b ? dnnl::memory::desc({s.K, n}, to_dnnl(kernel_b), dnnl::memory::format_tag::any) : b_run;
    // User scratchpads: the same primitive may run in several threads at once (thread-safe run).
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    for (const PostOp& op : ep.ops) sl.src1.push_back(src1_desc(op, m, n, s.N));  // eltwise ones unused
    if (p->tail_from > 0) {
      dnnl::post_ops po;
      for (size_t i = 0; i < p->tail_from; ++i) append_post_op(po, ep.ops[i], sl.src1[i]);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(sl.a, b_want, sl.c), attr, engine());
    // oneDNN's reference matmul is orders of magnitude slower than any other path (oneDNN 2.6 on
    // Emerald Rapids picks it for f32 column shares of C with a bias: 13 s for one MiniLM run):
    // never plan one — the dense-C plan, the unfused kernels or BLAS take over
    if (reference_impl(pd.impl_info_str())) throw dnnl::error(dnnl_unimplemented, "only oneDNN's reference matmul");
    if (p->tail_from < ep.ops.size()) {
      const PostOp& head = ep.ops[p->tail_from];
      dnnl::primitive_attr tattr;
      tattr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops tpo;
      for (size_t i = p->tail_from + 1; i < ep.ops.size(); ++i) append_post_op(tpo, ep.ops[i], sl.src1[i]);
      tattr.set_post_ops(tpo);
      dnnl::binary::primitive_desc tpd(dnnl::binary::desc(static_cast<dnnl::algorithm>(head.alg), sl.c, sl.src1[p->tail_from], sl.c), tattr, engine());
      if (reference_impl(tpd.impl_info_str())) throw dnnl::error(dnnl_unimplemented, "only a reference binary for the per-row epilogue");
      sl.tail = dnnl::binary(tpd);
      sl.tail_scratch = tpd.scratchpad_desc();
    }
    sl.prim = dnnl::matmul(pd);
    sl.b = pd.weights_desc();
    sl.scratch = pd.scratchpad_desc();
    if (const_b) {
      // Reorder this slice's columns of the constant weights once, into the kernel's layout.
      const uint8_t* base = static_cast<const uint8_t*>(const_b) +
                            (p->by_rows ? 0 : (p->b_nk ? sl.lo * s.K : sl.lo) * static_cast<int64_t>(p->b_elem));
      dnnl::memory src(b_user, engine(), const_cast<uint8_t*>(base));
      sl.packed_b = std::make_shared<dnnl::memory>(sl.b, engine());
      dnnl::stream st(engine());
      dnnl::reorder(src, *sl.packed_b).execute(st, src, *sl.packed_b);
      st.wait();
    }
    p->slices.push_back(std::move(sl));
  }
  return p;
}

// m rows of op(A) from `a` (at the slice's first row; [K, M] when a_km) converted element by
// element into buf, packed [m, K].
template <class From, class To, class Convert>
const uint8_t* convert_a(const Plan& p, int64_t m, const From* a, std::vector<To>& buf, Convert convert) {
  buf.resize(static_cast<size_t>(m * p.K));
  To* dst = buf.data();
  if (p.a_km) {
    for (int64_t r = 0; r < m; ++r)
      for (int64_t k = 0; k < p.K; ++k) dst[r * p.K + k] = convert(a[r + k * p.M]);
  } else {
    for (int64_t i = 0; i < m * p.K; ++i) dst[i] = convert(a[i]);
  }
  return reinterpret_cast<const uint8_t*>(dst);
}

// The whole of a runtime B converted element by element into buf, in its own layout.
template <class From, class To, class Convert>
const uint8_t* convert_b(const Plan& p, const From* b, std::vector<To>& buf, Convert convert) {
  buf.resize(static_cast<size_t>(p.K * p.N));
  for (int64_t i = 0; i < p.K * p.N; ++i) buf[static_cast<size_t>(i)] = convert(b[i]);
  return reinterpret_cast<const uint8_t*>(buf.data());
}

void execute(const Plan& p, const Slice& sl, const uint8_t* a, const uint8_t* b, uint8_t* c, const std::vector<const float*>& extra) {
  omp_set_num_threads(1);  // oneDNN's OpenMP stays single-threaded inside our pool threads
  thread_local dnnl::stream stream(engine());
  int64_t a_off = p.by_rows ? (p.a_km ? sl.lo : sl.lo * p.K) : 0;
  int64_t c_off = p.by_rows ? sl.lo * p.N : sl.lo;
  int64_t b_off = p.by_rows ? 0 : (p.b_nk ? sl.lo * p.K : sl.lo);
  thread_local std::vector<uint8_t> scratch_bytes;
  size_t need = sl.scratch.get_size();
  if (scratch_bytes.size() < need) scratch_bytes.resize(need);
  const uint8_t* a_ptr = a + a_off * static_cast<int64_t>(p.a_elem);
  thread_local std::vector<uint16_t> a16, b16;
  thread_local std::vector<float> a32, b32;
  const int64_t m = p.by_rows ? sl.hi - sl.lo : p.M;
  // bf16 operands widened to f32 (exact), or f32 ones rounded to bf16: A's slice packed [m, K],
  // a runtime B whole in its own layout (b_off then counts the converted elements)
  if (p.widen_a) a_ptr = convert_a(p, m, reinterpret_cast<const uint16_t*>(a_ptr), a32, vm::from_bf16);
  if (p.round_a) a_ptr = convert_a(p, m, reinterpret_cast<const float*>(a_ptr), a16, vm::to_bf16);
  if (p.widen_b) b = convert_b(p, reinterpret_cast<const uint16_t*>(b), b32, vm::from_bf16);
  if (p.round_b) b = convert_b(p, reinterpret_cast<const float*>(b), b16, vm::to_bf16);
  dnnl::memory am(sl.a, engine(), const_cast<uint8_t*>(a_ptr));
  const int64_t cn = p.by_rows ? p.N : sl.hi - sl.lo;  // C's share: m rows × cn columns
  thread_local std::vector<float> c32;
  if (p.narrow_c) c32.resize(static_cast<size_t>(m * cn));
  dnnl::memory cm(sl.c, engine(), p.narrow_c ? static_cast<void*>(c32.data()) : static_cast<void*>(c + c_off * static_cast<int64_t>(p.c_elem)));
  // narrow_c: the share's f32 results, epilogue included, rounded into the bf16 C
  auto narrow = [&] {
    if (!p.narrow_c) return;
    uint16_t* out = reinterpret_cast<uint16_t*>(c) + c_off;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < cn; ++j) out[r * p.N + j] = vm::to_bf16(c32[static_cast<size_t>(r * cn + j)]);
  };
  dnnl::memory sm(sl.scratch, engine(), scratch_bytes.data());
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, am}, {DNNL_ARG_DST, cm}, {DNNL_ARG_SCRATCHPAD, sm}};
  if (sl.packed_b) args.emplace(DNNL_ARG_WEIGHTS, *sl.packed_b);
  else args.emplace(DNNL_ARG_WEIGHTS, dnnl::memory(sl.b, engine(), const_cast<uint8_t*>(b) + b_off * static_cast<int64_t>(p.round_b ? 2 : p.widen_b ? 4 : p.b_elem)));
  auto operand = [&](size_t i) {
    const PostOp& op = p.epilogue.ops[i];
    const float* src = extra[static_cast<size_t>(op.input)];
    return dnnl::memory(sl.src1[i], engine(), const_cast<float*>(src) + src1_offset(op, p.by_rows, sl.lo, c_off));
  };
  for (size_t i = 0; i < p.tail_from; ++i)
    if (p.epilogue.ops[i].kind == PostOp::Kind::binary) args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, operand(i));
  sl.prim.execute(stream, args);
  if (!sl.tail) return narrow();
  if (scratch_bytes.size() < sl.tail_scratch.get_size()) scratch_bytes.resize(sl.tail_scratch.get_size());
  dnnl::memory tm(sl.tail_scratch, engine(), scratch_bytes.data());
  std::unordered_map<int, dnnl::memory> targs = {{DNNL_ARG_SRC_0, cm}, {DNNL_ARG_SRC_1, operand(p.tail_from)}, {DNNL_ARG_DST, cm}, {DNNL_ARG_SCRATCHPAD, tm}};
  for (size_t i = p.tail_from + 1; i < p.epilogue.ops.size(); ++i)
    if (p.epilogue.ops[i].kind == PostOp::Kind::binary)
      targs.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i - p.tail_from - 1)) | DNNL_ARG_SRC_1, operand(i));
  sl.tail->execute(stream, targs);
  narrow();
}

}  // namespace

dnnl::memory::data_type onednn_type(DType d) {
  switch (d) {
    case DType::bf16: return dnnl::memory::data_type::bf16;
    case DType::i8: return dnnl::memory::data_type::s8;
    case DType::u8: return dnnl::memory::data_type::u8;
    case DType::i32: return dnnl::memory::data_type::s32;
    default: return dnnl::memory::data_type::f32;
  }
}

dnnl::engine& onednn_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

bool onednn_available() {
  static const bool ok = [] {
    try {
      engine();
      return true;
    } catch (...) {
      return false;
    }
  }();
  return ok;
}

bool onednn_matmul_buildable(const MatmulShape& s, const Epilogue& ep) {
  static std::mutex mu;
  static std::unordered_map<std::string, bool> known;
  std::string key = cat(s.batch, ",", s.M, ",", s.K, ",", s.N, ",", s.a_km, s.b_nk, ",", dtype_name(s.a_dtype), dtype_name(s.b_dtype), dtype_name(s.c_dtype),
                        dtype_name(s.compute), ",", dtype_name(ep.out));
  for (const PostOp& op : ep.ops) key += cat(";", static_cast<int>(op.kind), ",", op.alg, ",", static_cast<int>(op.src1));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(key); it != known.end()) return it->second;
  bool ok = false;
  for (bool split : {true, false}) {
    try {
      build_plan(s, nullptr, ep, split);  // descriptors only: no weights to reorder
      ok = true;
      break;
    } catch (const dnnl::error&) {
    }
  }
  known[key] = ok;
  return ok;
}

HostKernel make_onednn_matmul(const MatmulShape& s, const void* const_b, const Epilogue& ep) {
  std::shared_ptr<Plan> plan;
  // bf16 products widened to f32 where this CPU multiplies f32 faster (bf16_rate.h); a shape the
  // f32 kernels cannot store (bf16 columns of C on some ISAs) keeps the bf16 kernels
  if (s.a_dtype == DType::bf16 && s.b_dtype == DType::bf16 && !bf16_products_native()) {
    for (bool split : {true, false}) {
      try {
        plan = build_plan(s, s.batch == 1 ? const_b : nullptr, ep, split, true);
        break;
      } catch (const dnnl::error&) {
      }
    }
  }
  if (!plan) try {
    plan = build_plan(s, s.batch == 1 ? const_b : nullptr, ep, true);
  } catch (const dnnl::error&) {
    // Some ISAs have no kernel for a share's strided C in every type combination (f32 products
    // stored as bf16 columns on AVX512-BF16 without AMX): one primitive over the dense C then.
    try {
      plan = build_plan(s, s.batch == 1 ? const_b : nullptr, ep, false);
    } catch (const dnnl::error& e) {
      throw Error(ErrorKind::unsupported, cat("oneDNN has no matmul for [", s.M, ", ", s.K, "] · [", s.K, ", ", s.N, "] (", dtype_name(s.a_dtype), " × ",
                                              dtype_name(s.b_dtype), " → ", dtype_name(s.c_dtype), ") here: ", e.what()));
    }
  }
  return [plan](const KernelArgs& a) {
    const Plan& p = *plan;
    const uint8_t* A = static_cast<const uint8_t*>(a.in[0].data);
    const uint8_t* B = static_cast<const uint8_t*>(a.in[1].data);
    uint8_t* C = static_cast<uint8_t*>(a.out[0].data);
    std::vector<const float*> extra;
    for (size_t i = 2; i < a.in.size(); ++i) extra.push_back(a.in[i].as<float>());
    if (p.batch > 1) {
      // one primitive over [M, K]·[K, N], run per batch item across the pool
      int64_t as = p.M * p.K * static_cast<int64_t>(p.a_elem), bs = p.K * p.N * static_cast<int64_t>(p.b_elem),
              cs = p.M * p.N * static_cast<int64_t>(p.c_elem);
      rlx::parallel_for(p.batch, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) execute(p, p.slices[0], A + i * as, B + i * bs, C + i * cs, extra);
      });
      return;
    }
    rlx::parallel_for(static_cast<int64_t>(p.slices.size()), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) execute(p, p.slices[static_cast<size_t>(i)], A, B, C, extra);
    });
  };
}

}  // namespace rlx::backends::cpu
