// The vulkan device's executable, first form: every value of the plan gets a region of the
// device pool at compile time, constants are uploaded once, and a run uploads the inputs,
// dispatches the steps in order and downloads the outputs. (Next: the memory plan's arena and
// one command buffer recorded per plan instead of a submission per step.)
#include <cstring>
#include <map>
#include <mutex>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader_compiler.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

class VulkanExecutable : public runtime::Executable {
 public:
  explicit VulkanExecutable(const ir::Graph& lir) : lir_(lir) {
    Context& c = Context::get();
    auto region = [&](ir::ValueId v) -> Region& {
      auto it = regions_.find(v);
      if (it != regions_.end()) return it->second;
      const ir::Type& t = lir_.type(v);
      if (!shape_is_static(t.shape)) throw Error(ErrorKind::unsupported, cat("vulkan: value %", v, " has a symbolic shape"));
      size_t bytes = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      return regions_[v] = c.device_alloc(bytes);
    };
    for (ir::ValueId v : lir_.inputs()) region(v);
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      const ir::Node& n = lir_.node(i);
      if (n.op == ir::Op::constant) {
        const Tensor& value = n.attrs.tensor("value");
        Tensor dense = value.contiguous();
        c.upload(region(n.outputs[0]), dense.data(), dense.nbytes());
        continue;
      }
      std::vector<ir::Type> in, out;
      for (ir::ValueId v : n.inputs) in.push_back(lir_.type(v));
      for (ir::ValueId v : n.outputs) out.push_back(lir_.type(v));
      if (!claims_elementwise(n.op, in, out))
        throw Error(ErrorKind::unsupported, cat("vulkan: no kernel for ", ir::op_keyword(n.op), " (node ", i, ")"));
      Step s;
      auto dims = [](const ir::Type& t) {
        std::vector<int64_t> v;
        for (const Dim& d : t.shape) v.push_back(d.value());
        return v;
      };
      std::vector<std::vector<int64_t>> in_shapes;
      for (const ir::Type& t : in) in_shapes.push_back(dims(t));
      s.spirv = compile_compute_glsl(elementwise_shader(n.op, in_shapes, dims(out[0])), ir::op_keyword(n.op));
      for (ir::ValueId v : n.inputs) s.regions.push_back(region(v));
      s.regions.push_back(region(n.outputs[0]));
      s.n = static_cast<uint32_t>(shape_numel(out[0].shape).value());
      steps_.push_back(std::move(s));
    }
    for (ir::ValueId v : lir_.outputs()) region(v);
  }

  ~VulkanExecutable() override {
    Context& c = Context::get();
    for (auto& [v, r] : regions_) c.device_free(r);
  }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    std::lock_guard<std::mutex> lock(mu_);  // one region per value: runs take turns
    Context& c = Context::get();
    const auto& ins = lir_.inputs();
    if (inputs.size() != ins.size()) throw Error(ErrorKind::invalid_argument, cat("vulkan: ", inputs.size(), " inputs for a plan of ", ins.size()));
    for (size_t i = 0; i < ins.size(); ++i) {
      Tensor t = inputs[i].contiguous();
      c.upload(regions_.at(ins[i]), t.data(), t.nbytes());
    }
    for (const Step& s : steps_) {
      struct {
        uint32_t n;
      } push{s.n};
      c.dispatch(s.spirv, s.regions, &push, sizeof(push), (s.n + 255) / 256);
    }
    const auto& outs = lir_.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::Type& t = lir_.type(outs[i]);
      std::vector<int64_t> shape;
      for (const Dim& d : t.shape) shape.push_back(d.value());
      if (!outputs[i].defined()) outputs[i] = Tensor::zeros(t.dtype, shape);
      Tensor staging = Tensor::zeros(t.dtype, shape);
      c.download(regions_.at(outs[i]), staging.data(), staging.nbytes());
      std::memcpy(outputs[i].data(), staging.data(), staging.nbytes());
    }
  }

 private:
  struct Step {
    std::vector<uint32_t> spirv;
    std::vector<Region> regions;
    uint32_t n = 0;
  };
  ir::Graph lir_;
  std::map<ir::ValueId, Region> regions_;
  std::vector<Step> steps_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<VulkanExecutable>(lir); }

}  // namespace rlx::backends::vulkan
