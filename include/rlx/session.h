// Compiling and running graphs: rlx::Session(device).compile(graph) → CompiledModel.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rlx/graph.h"
#include "rlx/tensor.h"

namespace rlx {

// How numbers are rounded — one policy for every model and command (`--precision`, and
// `--activations` where weights are quantized). Models apply it their way: the precision pass
// rewrites a graph's matmuls; a llama model loads its matrices in that precision instead.
struct PrecisionPolicy {
  // Matmul and attention products: "f32"; "bf16" or "f16" (operands rounded, f32 accumulation);
  // "amp"; "int8" (products with constant weights in int8, dynamic per-row activations)
  // (passes/precision.h).
  std::string compute = "f32";
  // Activations of matmuls with packed (quantized) weights: "f32"; "q8", rounded to 8-bit blocks
  // of 32 as llama.cpp does, so integer dot products apply (Q8_0 weights too); "auto", q8 for the
  // types below 8 bits where the device takes integer dot products natively, f32 elsewhere.
  std::string quantized_activations = "auto";

  PrecisionPolicy() = default;
  PrecisionPolicy(std::string compute_precision) : compute(std::move(compute_precision)) {}  // NOLINT: "bf16" names a policy
  PrecisionPolicy(const char* compute_precision) : compute(compute_precision) {}             // NOLINT
};

struct SessionOptions {
  std::string policy;                            // "prefer-native" / "force-common"; "" → RLX_POLICY
  std::map<std::string, std::string> overrides;  // per-op dispatch: {"softmax": "common"}
  PrecisionPolicy precision;
  // Inspection (what `rlx compile` uses): compile for a device this machine cannot run (its
  // plans print, run() refuses), and stop the compiler after a pass (mir_text/lir_text show the
  // graph there; run() refuses).
  bool compile_only = false;
  std::string stop_after;
};

// A graph compiled for one device. Symbolic dims are specialised per concrete input shapes
// on first use and cached. run() is thread-safe.
class CompiledModel {
 public:
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  // Writes each output into the matching tensor of `outputs` (allocating undefined ones). An
  // output tensor may be one of the inputs: results land after every kernel has run, which is
  // how training steps update parameters in place without allocating.
  void run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) const;
  std::vector<Tensor> run_named(const std::map<std::string, Tensor>& inputs) const;

  // Device-resident state: keeps `t` (a contiguous tensor such as a KV cache passed as a
  // donated input and written back as its output) in the device's memory between runs of any
  // model compiled for this device, so runs copy it neither in nor out; its host data is stale
  // until release_from_device. Returns false (and does nothing) where the device's memory is
  // host memory.
  bool keep_on_device(const Tensor& t) const;
  void release_from_device(const Tensor& t, bool copy_back = true) const;

  const std::string& device() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  std::string dispatch_report() const;       // the table of `rlx compile --report`
  std::string dispatch_report_json() const;
  std::string mir_text() const;              // the legalized graph
  // The plan for these symbol values: the very LIR the device's executable is (or would be)
  // built from — one lowering serves both.
  std::string lir_text(const std::map<std::string, int64_t>& bindings) const;
  // The same plan as the files of a program for a device that emits source (`rlx export`: file
  // name → contents); other devices throw rlx::Error(unsupported).
  std::map<std::string, std::string> emit_source(const std::map<std::string, int64_t>& bindings) const;

  struct Impl;
  explicit CompiledModel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

class Session {
 public:
  explicit Session(std::string device = "cpu", SessionOptions options = {});
  // Legalizes for the device (throws rlx::Error(unsupported) listing every op it cannot run).
  CompiledModel compile(const Graph& graph) const;
  const std::string& device() const { return device_; }

 private:
  std::string device_;
  SessionOptions options_;
};

// Threads of the CPU kernels (the one knob; RLX_NUM_THREADS sets the default, 0 = every core).
void set_num_threads(int n);
int num_threads();

struct DeviceInfo {
  std::string name;
  std::string description;
  bool available = false;
  std::string reason;  // why it is unavailable
  // runs here / runs on the accelerator machine / built, not run / emits source / needs hardware
  std::string status;
  int native_ops = 0;
  bool int8_dot_products = false;  // kernels multiply 8-bit activations natively (PrecisionPolicy "auto")
};
std::vector<DeviceInfo> devices();
// One device's entry; throws rlx::Error(invalid_argument) listing the devices for an unknown name.
DeviceInfo device_info(const std::string& name);

}  // namespace rlx
