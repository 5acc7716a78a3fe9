// The vulkan device's executable: the memory plan's arena and each input get a region of the
// device pool, constants are uploaded once, and the whole plan — input copies from a staging
// buffer, every step's dispatches with a barrier after each, output copies back — is recorded
// into one command buffer. A run is a memcpy into staging, one submission, a check of the
// index-error word and a memcpy out. Inputs and outputs kept on the device (resident.h: KV
// caches) are bound to their device copies instead of staging; the program is recorded again
// only when that binding changes (the first decode step, not the others).
#include <climits>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/vulkan/context.h"
#include "backends/vulkan/hlsl.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/program.h"
#include "backends/vulkan/resident.h"
#include "backends/vulkan/target.h"
#include "backends/vulkan/shader_compiler.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

using Placement = ir::Placement;

size_t align16(size_t n) { return (n + 15) / 16 * 16; }

// Where a value's bytes are: a buffer and a byte offset into it.
struct Location {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, bytes = 0;
};

class VulkanExecutable : public runtime::Executable {
  struct Binding {
    std::vector<Region> in, out;  // per input/output: the device copy it is bound to, or none
    bool operator==(const Binding& o) const {
      auto same = [](const std::vector<Region>& a, const std::vector<Region>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
          if (a[i].buffer != b[i].buffer || a[i].offset != b[i].offset) return false;
        return true;
      };
      return same(in, o.in) && same(out, o.out);
    }
  };

 public:
  VulkanExecutable(const ir::Graph& lir, const KernelTarget& target) : lir_(lir), c_(Context::get()), target_(target) {
    try {
      ScopedTarget printing(target_);
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~VulkanExecutable() override { release(); }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    std::lock_guard<std::mutex> lock(mu_);  // one arena: runs take turns
    const auto& ins = lir_.inputs();
    if (inputs.size() != ins.size()) throw Error(ErrorKind::invalid_argument, cat("vulkan: ", inputs.size(), " inputs for a plan of ", ins.size()));
    Binding bound;
    for (const Tensor& t : inputs) bound.in.push_back(resident_region(t).value_or(Region{}));
    for (size_t i = 0; i < lir_.outputs().size(); ++i) bound.out.push_back(i < outputs.size() ? resident_region(outputs[i]).value_or(Region{}) : Region{});
    if (!program_ || !(bound == bound_)) record(bound);
    auto* staging = static_cast<uint8_t*>(staging_.mapped);
    for (size_t i = 0; i < ins.size(); ++i) {
      const ir::Type& t = lir_.type(ins[i]);
      size_t want = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      if (inputs[i].dtype() != t.dtype || inputs[i].nbytes() != want)
        throw Error(ErrorKind::invalid_argument, cat("vulkan: input ", i, " is ", dtype_name(inputs[i].dtype()), " of ", inputs[i].nbytes(),
                                                     " bytes; the plan takes ", ir::type_str(t)));
      if (bound_.in[i].buffer) continue;  // its device copy is the data
      Tensor x = inputs[i].contiguous();
      check_fits_class(x, cat("input ", i, " (", lir_.value(ins[i]).name, ")"));
      std::memcpy(staging + input_slot_[i], x.data(), want);
    }
    std::memset(errors_.mapped, 0, errors_.bytes);
    program_->run();
    throw_index_error(static_cast<const uint32_t*>(errors_.mapped), [&](uint32_t s) { return step_label(s); });
    const auto& outs = lir_.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::Type& t = lir_.type(outs[i]);
      if (!outputs[i].defined()) outputs[i] = Tensor::zeros(t.dtype, dims(t));
      if (bound_.out[i].buffer) continue;  // updated on the device
      std::memcpy(outputs[i].data(), staging + output_slot_[i], outputs[i].nbytes());
    }
  }

 private:
  void build() {
    const size_t nv = lir_.num_values();
    loc_.assign(nv, Location{});
    arena_ = c_.device_alloc(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 16)));
    regions_.push_back(arena_);
    const auto& ins = lir_.inputs();
    for (size_t v = 0; v < nv; ++v) {
      const Placement& p = lir_.placement[v];
      const ir::Type& t = lir_.type(static_cast<ir::ValueId>(v));
      if (!shape_is_static(t.shape)) continue;
      const VkDeviceSize bytes = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      if (p.kind == Placement::Kind::arena) loc_[v] = {arena_.buffer, arena_.offset + static_cast<VkDeviceSize>(p.offset), bytes};
    }
    // each graph input's own region; a donated output (placed at its input) shares it
    for (ir::ValueId in : ins) {
      const ir::Type& t = lir_.type(in);
      Region r = c_.device_alloc(std::max<size_t>(dtype_bytes(t.dtype, shape_numel(t.shape).value()), 16));
      regions_.push_back(r);
      input_region_.push_back(r);
    }
    for (size_t v = 0; v < nv; ++v)
      if (lir_.placement[v].kind == Placement::Kind::input) {
        const ir::Type& t = lir_.type(static_cast<ir::ValueId>(v));
        const Region& r = input_region_.at(static_cast<size_t>(lir_.placement[v].index));
        loc_[v] = {r.buffer, r.offset, dtype_bytes(t.dtype, shape_numel(t.shape).value())};
      }
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      const ir::Node& n = lir_.node(i);
      if (n.op != ir::Op::constant) continue;
      Tensor value = n.attrs.tensor("value").contiguous();
      check_fits_class(value, cat("constant ", node_label(n, i)));
      Region r = c_.device_alloc(std::max<size_t>(value.nbytes(), 16));
      regions_.push_back(r);
      c_.upload(r, value.data(), value.nbytes());
      loc_[static_cast<size_t>(n.outputs[0])] = {r.buffer, r.offset, value.nbytes()};
    }
    // staging: every input's slot, then every output's
    size_t at = 0;
    for (ir::ValueId v : ins) input_slot_.push_back(at), at = align16(at + loc_[static_cast<size_t>(v)].bytes);
    for (ir::ValueId v : lir_.outputs()) {
      const ir::Type& t = lir_.type(v);
      output_slot_.push_back(at), at = align16(at + dtype_bytes(t.dtype, shape_numel(t.shape).value()));
    }
    staging_ = c_.host_buffer(std::max<size_t>(at, 16));
    errors_ = c_.host_buffer(64);
    base_loc_ = loc_;
    plan_launches();
    // recorded now with nothing kept on the device, so a node without a kernel fails the compile
    Binding none;
    none.in.resize(ins.size());
    none.out.resize(lir_.outputs().size());
    record(none);
    run_once();
  }

  // The launches that prepare constants for the plan (weights staged for the tensor cores), in
  // one submission of their own.
  void run_once() {
    Program prep(c_);
    hazards_.clear();
    size_t count = 0;
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      std::vector<Launch>& ls = node_launches_[static_cast<size_t>(i)];
      bool any = false;
      for (const Launch& l : ls) any = any || l.once;
      if (!any) continue;
      const ir::Node& n = lir_.node(i);
      try {
        record_launches(n, i, 0, ls, prep, true);
      } catch (const Error& e) {
        throw Error(e.kind(), cat(node_label(n, i), ": ", e.what()));
      }
      ++count;
    }
    prep.end();
    if (count) prep.run();
  }

  // Every value's location under `bound` (inputs and outputs kept on the device), and the
  // program recorded for it.
  void record(const Binding& bound) {
    program_.reset();
    loc_ = base_loc_;
    const auto& ins = lir_.inputs();
    for (size_t v = 0; v < loc_.size(); ++v) {  // inputs, and outputs donated to them
      const Placement& p = lir_.placement[v];
      if (p.kind != Placement::Kind::input) continue;
      const Region& r = bound.in.at(static_cast<size_t>(p.index));
      if (r.buffer) loc_[v] = {r.buffer, r.offset, loc_[v].bytes};
    }
    for (size_t v = 0; v < loc_.size(); ++v)
      if (lir_.placement[v].kind == Placement::Kind::view) {
        auto id = static_cast<ir::ValueId>(v);
        const Location& root = loc_[static_cast<size_t>(passes::placement_root(lir_, id))];
        const ir::Type& t = lir_.type(id);
        loc_[v] = {root.buffer, root.offset + static_cast<VkDeviceSize>(passes::placement_offset(lir_, id)), dtype_bytes(t.dtype, shape_numel(t.shape).value())};
      }
    step_nodes_.clear();
    program_ = std::make_unique<Program>(c_);
    if (flags().RLX_VULKAN_PROFILE) program_->profile(static_cast<size_t>(lir_.num_nodes()) * 4 + 16);
    const Region whole{staging_.buffer, 0, staging_.bytes};
    for (size_t i = 0; i < ins.size(); ++i) {
      if (bound.in[i].buffer) continue;
      const Location& l = loc_[static_cast<size_t>(ins[i])];
      program_->copy({whole.buffer, input_slot_[i], l.bytes}, {l.buffer, l.offset, l.bytes}, l.bytes);
    }
    program_->barrier();
    hazards_.clear();
    for (int i = 0; i < lir_.num_nodes(); ++i) record_node(i);
    program_->barrier();
    const auto& outs = lir_.outputs();
    for (size_t i = 0; i < outs.size(); ++i) {
      const Location& l = location(outs[i], "output");
      if (bound.out[i].buffer) {  // kept on the device: updated there (nothing to do when written in place)
        if (bound.out[i].buffer != l.buffer || bound.out[i].offset != l.offset) program_->copy({l.buffer, l.offset, l.bytes}, bound.out[i], l.bytes);
      } else {
        program_->copy({l.buffer, l.offset, l.bytes}, {whole.buffer, output_slot_[i], l.bytes}, l.bytes);
      }
    }
    program_->end();
    bound_ = bound;
    if (debug_at(1))
      log_line(cat("vulkan: graph @", lir_.name, ": ", program_->dispatches(), " dispatches recorded, arena ", lir_.arena_bytes, " bytes, staging ",
                   staging_.bytes, " bytes"));
  }

  const Location& location(ir::ValueId v, const char* what) const {
    const Location& l = loc_.at(static_cast<size_t>(v));
    if (!l.buffer) throw Error(ErrorKind::internal, cat("vulkan: ", what, " %", v, " has no placement"));
    return l;
  }

  // A storage binding of a value: the descriptor starts at the device's alignment below the
  // value's bytes, the element offset (a push constant) covers the rest.
  Region binding(ir::ValueId v, uint32_t elem_bytes, uint32_t& elem_offset) const {
    const Location& l = location(v, "operand");
    const ir::Type& t = lir_.type(v);
    const VkDeviceSize a = c_.storage_alignment(), base = l.offset / a * a, rem = l.offset - base;
    const VkDeviceSize elem = elem_bytes ? elem_bytes : static_cast<VkDeviceSize>(std::max(1, dtype_bits(t.dtype) / 8));
    if (rem % elem) throw Error(ErrorKind::internal, cat("vulkan: %", v, " starts ", l.offset, " bytes in, not a whole element of ", elem, " bytes"));
    const VkDeviceSize range = std::max<VkDeviceSize>(16, (rem + l.bytes + 15) / 16 * 16);
    if (range > c_.features().max_storage_range)
      throw Error(ErrorKind::unsupported, cat("vulkan: ", ir::type_str(t), " (", l.bytes, " bytes) is larger than one storage binding may be on this device (",
                                              c_.features().max_storage_range, " bytes)"));
    elem_offset = static_cast<uint32_t>(rem / elem);
    return {l.buffer, base, range};
  }

  // Every node's launches, printed once (a program recorded again reuses them), and the scratch
  // the largest needs (steps run one after another, so one scratch region serves them all).
  void plan_launches() {
    node_launches_.assign(static_cast<size_t>(lir_.num_nodes()), {});
    size_t scratch_max = 0;
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      const ir::Node& n = lir_.node(i);
      if (n.op == ir::Op::constant) continue;
      bool all_views = true;
      for (ir::ValueId v : n.outputs) all_views = all_views && lir_.placement[static_cast<size_t>(v)].kind == Placement::Kind::view;
      if (all_views) continue;  // a reshape of contiguous memory: no work
      NodeTypes t;
      for (ir::ValueId v : n.inputs) {
        t.in.push_back(lir_.type(v));
        const ir::Node* p = lir_.producer(v);
        t.in_constant.push_back(p && p->op == ir::Op::constant);
      }
      for (ir::ValueId v : n.outputs) t.out.push_back(lir_.type(v));
      size_t scratch = 0;
      try {
        node_launches_[static_cast<size_t>(i)] = launches(n, t, scratch);
      } catch (const Error& e) {
        throw Error(e.kind(), cat(node_label(n, i), ": ", e.what()));
      }
      scratch_max = std::max(scratch_max, scratch);
      uint64_t persistent = 0;
      for (const Launch& l : node_launches_[static_cast<size_t>(i)]) persistent = std::max(persistent, l.persistent_bytes);
      if (persistent) {
        Region r = c_.device_alloc(persistent);
        regions_.push_back(r);
        persistent_[i] = r;
      }
    }
    if (scratch_max) {
      scratch_ = c_.device_alloc(scratch_max);
      regions_.push_back(scratch_);
    }
  }

  void record_node(int i) {
    const ir::Node& n = lir_.node(i);
    std::vector<Launch>& ls = node_launches_[static_cast<size_t>(i)];
    if (ls.empty()) return;  // nothing to compute (a constant, a view, an empty tensor)
    const uint32_t step = static_cast<uint32_t>(step_nodes_.size());
    step_nodes_.push_back(i);
    try {
      record_launches(n, i, step, ls, *program_);
    } catch (const Error& e) {
      throw Error(e.kind(), cat(node_label(n, i), ": ", e.what()));
    }
  }

  std::string step_label(uint32_t s) const {
    return s < step_nodes_.size() ? node_label(lir_.node(step_nodes_[s]), step_nodes_[s]) : std::string("a step");
  }

  // Whether every operand bound in units of elem_bytes starts on a whole unit.
  bool aligned(const ir::Node& n, const Launch& l) const {
    for (const Operand& o : l.operands) {
      if (!o.elem_bytes || (o.kind != Operand::Kind::input && o.kind != Operand::Kind::output)) continue;
      const ir::ValueId v = o.kind == Operand::Kind::input ? n.inputs[static_cast<size_t>(o.index)] : n.outputs[static_cast<size_t>(o.index)];
      if (location(v, "operand").offset % c_.storage_alignment() % o.elem_bytes) return false;
    }
    return true;
  }

  // The launches of node i that run on every run (once: those that run when the plan is built)
  // into `into`.
  void record_launches(const ir::Node& n, int i, uint32_t step, std::vector<Launch>& planned, Program& into, bool once = false) {
    // a node whose launches bind some operand in wider units than it starts on runs its fallback
    std::shared_ptr<std::vector<Launch>> fallback;
    bool all_aligned = true;
    for (const Launch& l : planned) {
      if (l.unaligned) fallback = l.unaligned;
      all_aligned = all_aligned && aligned(n, l);
    }
    std::vector<Launch*> ls;
    for (Launch& l : (fallback && !all_aligned) ? *fallback : planned)
      if (l.once == once) ls.push_back(&l);
    for (Launch* lp : ls) {
      Launch& l = *lp;
      if (l.skip_when_in_place) {
        const Operand& from = l.operands.at(0);
        const Location& a = location(from.kind == Operand::Kind::input ? n.inputs[static_cast<size_t>(from.index)] : n.outputs[static_cast<size_t>(from.index)], "operand");
        const Location& b = location(n.outputs[0], "output");
        if (a.buffer == b.buffer && a.offset == b.offset) continue;
      }
      std::vector<Region> bindings;
      std::vector<uint32_t> push;
      for (const Operand& o : l.operands) {
        uint32_t off = 0;
        switch (o.kind) {
          case Operand::Kind::input: bindings.push_back(binding(n.inputs[static_cast<size_t>(o.index)], o.elem_bytes, off)); break;
          case Operand::Kind::output: bindings.push_back(binding(n.outputs[static_cast<size_t>(o.index)], o.elem_bytes, off)); break;
          case Operand::Kind::error: bindings.push_back({errors_.buffer, 0, errors_.bytes}); continue;  // no offset word
          case Operand::Kind::scratch: {  // index: the byte offset in the step's scratch
            if (!scratch_.buffer || !o.elem_bytes || o.index % static_cast<int>(o.elem_bytes))
              throw Error(ErrorKind::internal, cat("vulkan: ", l.name, " binds scratch it did not ask for"));
            bindings.push_back(scratch_);
            off = static_cast<uint32_t>(o.index) / o.elem_bytes;
            break;
          }
          case Operand::Kind::persistent: {  // index: the byte offset in the node's persistent region
            auto r = persistent_.find(i);
            if (r == persistent_.end() || !o.elem_bytes || o.index % static_cast<int>(o.elem_bytes))
              throw Error(ErrorKind::internal, cat("vulkan: ", l.name, " binds a persistent region it did not ask for"));
            bindings.push_back(r->second);
            off = static_cast<uint32_t>(o.index) / o.elem_bytes;
            break;
          }
        }
        push.push_back(off);
      }
      if (l.step_word >= 0) l.words[static_cast<size_t>(l.step_word)] = step;
      push.insert(push.end(), l.words.begin(), l.words.end());
      const bool hlsl = target_.api == KernelApi::hlsl;
      if (hlsl) {  // HLSL has no gl_NumWorkGroups; every HLSL kernel can raise an error (hlsl.h)
        push.insert(push.end(), {l.groups[0], l.groups[1], l.groups[2], step});
        bool has_errors = false;
        for (const Operand& o : l.operands) has_errors = has_errors || o.kind == Operand::Kind::error;
        if (!has_errors) bindings.push_back({errors_.buffer, 0, errors_.bytes});
      }
      if (push.size() * 4 != l.push_bytes)
        throw Error(ErrorKind::internal, cat("vulkan: ", l.name, " pushes ", push.size() * 4, " bytes, its shader declares ", l.push_bytes));
      if (debug_at(3)) log_line(cat("vulkan: ", l.name, " for ", node_label(n, i), ":\n", l.source));
      std::vector<uint32_t> spirv = hlsl ? compile_compute_hlsl(l.source, cat(l.name, " for ", node_label(n, i))) : compile_compute_glsl(l.source, cat(l.name, " for ", node_label(n, i)));
      const Pipeline& p = c_.pipeline(spirv, static_cast<uint32_t>(bindings.size()), l.push_bytes);
      // a barrier only where this dispatch touches memory a dispatch since the last one wrote
      // (or writes memory one read): independent neighbours (q, k and v's products) overlap
      std::vector<Region> reads, writes;
      for (size_t b = 0; b < l.operands.size(); ++b) {
        const Operand::Kind k = l.operands[b].kind;
        if (k == Operand::Kind::error) continue;  // atomics only
        reads.push_back(bindings[b]);
        if (k != Operand::Kind::input) writes.push_back(bindings[b]);
      }
      if (hazards_.conflict(reads, writes)) {
        into.barrier();
        hazards_.clear();
      }
      into.dispatch(p, bindings, push.data(), l.push_bytes, l.groups[0], l.groups[1], l.groups[2],
                    cat(l.name, " ", n.origin.empty() ? ir::op_keyword(n.op) : n.origin));
      hazards_.add(reads, writes);
    }
  }

  // Where the kernels' integer class is 32-bit (directx), an i64 tensor's values must fit it:
  // its kernels read the low word of each (shader.cpp).
  void check_fits_class(const Tensor& x, const std::string& what) const {
    if (target_.features.int32_class) check_fits_int32_class(x, "directx", what);
  }

  void release() {
    program_.reset();
    for (const Region& r : regions_) c_.device_free(r);
    regions_.clear();
    if (staging_.buffer) c_.free(staging_);
    if (errors_.buffer) c_.free(errors_);
  }

  ir::Graph lir_;
  Context& c_;
  KernelTarget target_;  // whom the kernels are printed for: vulkan's GLSL, or HLSL (the directx device)
  std::vector<Location> base_loc_;  // without the device copies a run binds
  std::vector<Region> input_region_;  // per graph input
  std::vector<std::vector<Launch>> node_launches_;  // per node; none for constants and views
  Region scratch_;
  // What the dispatches recorded since the last barrier read and wrote.
  struct Hazards {
    std::vector<Region> reads, writes;
    static bool overlap(const Region& a, const Region& b) {
      return a.buffer == b.buffer && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
    }
    static bool any(const std::vector<Region>& xs, const std::vector<Region>& ys) {
      for (const Region& x : xs)
        for (const Region& y : ys)
          if (overlap(x, y)) return true;
      return false;
    }
    bool conflict(const std::vector<Region>& r, const std::vector<Region>& w) const {
      const std::string& mode = flags().RLX_VULKAN_BARRIERS;
      if (mode != "deps" && mode != "all") throw Error(ErrorKind::invalid_argument, cat("RLX_VULKAN_BARRIERS=", mode, ": choose deps or all"));
      if (mode == "all") return true;
      return any(r, writes) || any(w, writes) || any(w, reads);
    }
    void add(const std::vector<Region>& r, const std::vector<Region>& w) {
      reads.insert(reads.end(), r.begin(), r.end());
      writes.insert(writes.end(), w.begin(), w.end());
    }
    void clear() { reads.clear(), writes.clear(); }
  } hazards_;
  std::map<int, Region> persistent_;  // per node that keeps staged constants
  Binding bound_;
  Region arena_;
  std::vector<Region> regions_;
  std::vector<Location> loc_;
  std::vector<size_t> input_slot_, output_slot_;
  std::vector<int> step_nodes_;  // the node of each step (error messages)
  HostBuffer staging_, errors_;
  std::unique_ptr<Program> program_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<VulkanExecutable>(lir, current_target()); }

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir, const KernelTarget& target) { return std::make_unique<VulkanExecutable>(lir, target); }

}  // namespace rlx::backends::vulkan
