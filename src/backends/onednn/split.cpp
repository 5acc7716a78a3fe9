// Running a oneDNN primitive over shares of rows in RLX's pool, and the small helpers every
// kernel family here shares (types, descriptors, claim caching).
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "backends/cpu/onednn_matmul.h"
#include "backends/onednn/oneapi.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::onednn {

std::optional<dnnl::memory::data_type> dnnl_type(DType d) {
  using dt = dnnl::memory::data_type;
  switch (d) {
    case DType::f32: return dt::f32;
    case DType::bf16: return dt::bf16;
    case DType::f16: return dt::f16;
    case DType::i8: return dt::s8;
    case DType::u8:
    case DType::boolean: return dt::u8;
    case DType::i32: return dt::s32;
    default: return std::nullopt;
  }
}

dnnl::memory::desc strided(const std::vector<int64_t>& dims, DType d, const std::vector<int64_t>& strides) {
  auto t = dnnl_type(d);
  if (!t) throw dnnl::error(dnnl_unimplemented, "no oneDNN type for this dtype");
  return dnnl::memory::desc(dims, *t, strides);
}

dnnl::memory::desc dense(const std::vector<int64_t>& dims, DType d) { return strided(dims, d, codegen::contiguous_strides(dims)); }

std::vector<int64_t> dims_of(const Shape& s) {
  std::vector<int64_t> d = shape_values(s);
  if (d.empty()) d.push_back(1);
  return d;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool buildable(const std::string& key, const std::function<void()>& attempt) {
  static std::mutex mu;
  static std::unordered_map<std::string, bool> known;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  bool ok = true;
  try {
    omp_set_num_threads(1);  // building may reorder; no OpenMP team beside our pool
    attempt();
  } catch (const dnnl::error&) {
    ok = false;
  } catch (const Error&) {
    ok = false;
  }
  std::lock_guard<std::mutex> lock(mu);
  known[key] = ok;
  return ok;
}

std::string claim_key(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  std::string k = ir::op_keyword(op);
  for (const ir::Type& t : in) k += cat(" ", ir::type_str(t));
  k += " ->";
  for (const ir::Type& t : out) k += cat(" ", ir::type_str(t));
  return cat(k, " #", attrs.hash());
}

namespace {

struct Plan {
  std::vector<Arg> args;
  Prim full, rest;  // shares of the chunk size; the last, shorter share
  int64_t rows = 0, chunk = 1;
  bool one_row = false;
};

void run_share(const Plan& p, const Prim& prim, int64_t lo, const KernelArgs& a) {
  omp_set_num_threads(1);
  thread_local dnnl::stream stream(cpu::onednn_engine());
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < prim.scratch.get_size()) scratch.resize(prim.scratch.get_size());
  std::unordered_map<int, dnnl::memory> args;
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Arg& arg = p.args[i];
    void* data = arg.fixed ? const_cast<void*>(arg.fixed)
                 : arg.tensor >= 0 ? a.in[static_cast<size_t>(arg.tensor)].data
                                   : a.out[static_cast<size_t>(-1 - arg.tensor)].data;
    uint8_t* base = static_cast<uint8_t*>(data) + arg.offset + lo * arg.row_bytes;
    args.emplace(arg.key, dnnl::memory(prim.descs[i], cpu::onednn_engine(), base));
  }
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(prim.scratch, cpu::onednn_engine(), scratch.data()));
  prim.prim.execute(stream, args);
}

}  // namespace

HostKernel split_kernel(int64_t rows, int64_t row_work, std::vector<Arg> args, const Build& build, bool one_row) {
  omp_set_num_threads(1);
  auto p = std::make_shared<Plan>();
  p->args = std::move(args);
  // A share is worth a thread from ~32k elements on; each worker gets one.
  int64_t parts = std::clamp<int64_t>(rows * std::max<int64_t>(row_work, 1) / 32768, 1, std::min<int64_t>(num_threads(), rows));
  int64_t chunk = std::max<int64_t>(1, (rows + parts - 1) / std::max<int64_t>(parts, 1));  // 1 for an empty tensor
  if (rows > 0) p->full = build(one_row ? 1 : chunk);
  if (rows > 0 && rows % chunk && !one_row) p->rest = build(rows % chunk);
  p->rows = rows;
  p->chunk = chunk;
  p->one_row = one_row;
  return [p](const KernelArgs& a) {
    int64_t shares = (p->rows + p->chunk - 1) / p->chunk;
    rlx::parallel_for(shares, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t first = i * p->chunk, end = std::min(p->rows, first + p->chunk);
        if (!p->one_row) run_share(*p, end - first < p->chunk ? p->rest : p->full, first, a);
        else
          for (int64_t r = first; r < end; ++r) run_share(*p, p->full, r, a);
      }
    });
  };
}

}  // namespace rlx::backends::onednn
