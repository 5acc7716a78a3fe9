// The backend interface (DESIGN §4): device → compile → execute → buffers. A backend is one
// folder under src/backends with one public entry point, register_backend().
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/dispatch.h"
#include "passes/simplify.h"
#include "rlx/tensor.h"

namespace rlx::runtime {

struct Availability {
  bool available = true;
  std::string reason;  // why not, when unavailable ("no NVIDIA driver", …)
};

// One compiled LIR program. run() may be called from many threads at once; each call brings
// its own scratch arena.
class Executable {
 public:
  virtual ~Executable() = default;
  // `inputs` are contiguous host tensors of the LIR's input types. Each output is written into
  // the tensor in `outputs` (allocated when undefined); results are copied out only after every
  // kernel ran, so an output tensor may also be one of the inputs (state updated in place).
  virtual void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) = 0;
};

class Backend : public passes::KernelClaims {
 public:
  virtual std::string description() const = 0;
  virtual Availability availability() const { return {}; }
  // Where the device really runs, as `rlx devices` states it: "runs here", "runs on the
  // accelerator machine" (built; its hardware is elsewhere), "built, not run", "emits source",
  // "needs hardware" (listed only: its SDK or chips are not in reach).
  virtual std::string status() const { return availability().available ? "runs here" : "unavailable here"; }
  // Number of (op) kinds with at least one native kernel, for `rlx devices`.
  int native_op_count() const;
  // LIR → executable. Throws rlx::Error when the device cannot run it.
  virtual std::unique_ptr<Executable> compile(const ir::Graph& lir) = 0;
  // LIR → the files of a program that runs it elsewhere (file name → contents), for devices whose
  // status is "emits source" (`rlx export`); the others throw rlx::Error(unsupported).
  virtual std::map<std::string, std::string> emit_source(const ir::Graph& lir);
  // Whether the backend claims `op` for some dtype at all (support tables).
  virtual bool claims_op(ir::Op op) const = 0;
  // Evaluates single nodes on host tensors (constant folding); empty when the device can't.
  virtual passes::NodeEvaluator evaluator() const { return {}; }
  // Device-resident state (the buffer level): a contiguous host tensor (a KV cache) gets a copy
  // in the device's memory, and every run of this backend uses that copy in its place — an input
  // reads it, an output written into the tensor (a donated one) updates it — with no copy between
  // host and device. The host tensor is stale until release_resident. Returns false where there
  // is nothing to do (devices whose memory is host memory); true when it is (or already was) kept.
  virtual bool make_resident(const Tensor&) { return false; }
  // Copies the device copy back into the host tensor (when `copy_back`) and frees it; no-op for
  // a tensor that is not resident.
  virtual void release_resident(const Tensor&, bool /*copy_back*/) {}
  // Whether the device runs independent steps of a program side by side (a GPU's streams): its
  // memory plan then shares bytes only between values the dataflow orders, so that reuse adds
  // no ordering between independent branches.
  virtual bool runs_steps_concurrently() const { return false; }
  // Whether its kernels multiply 8-bit activations natively (integer dot products), which is
  // where the precision policy's "auto" rounds activations of quantized matmuls to 8 bits.
  virtual bool has_int8_dot_products() const { return false; }
};

}  // namespace rlx::runtime
