// A planned LIR on OpenGL: the memory plan's arena, each input's and constant's own buffer, and
// every node's launches — the vulkan device's kernels printed in OpenGL's flavour (target.h) —
// compiled once into GL programs. GL has no command buffers: a run binds each launch's storage
// ranges and its words (one uniform buffer holds every launch's, written when the plan is built),
// dispatches, and puts a memory barrier between dispatches.
#include <cstring>
#include <map>
#include <memory>

#include "backends/opengl/opengl.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/placement.h"
#include "backends/vulkan/target.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::opengl {

namespace {

using Placement = ir::Placement;
using vulkan::Launch;

using Location = vulkan::Placed<GLuint>;

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

class GlExecutable : public runtime::Executable {
  // one dispatch, resolved: its program, storage ranges and words' place in the uniform buffer
  struct Step {
    GLuint program = 0;
    struct Range {
      GLuint buffer;
      size_t offset, bytes;
    };
    std::vector<Range> ranges;
    size_t words_at = 0, words_bytes = 0;
    uint32_t groups[3] = {1, 1, 1};
    int node = -1;
  };

 public:
  explicit GlExecutable(const ir::Graph& lir) : lir_(lir), c_(Context::get()) {
    Context::Current current(c_);
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~GlExecutable() override {
    Context::Current current(c_);
    release();
  }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    Context::Current current(c_);
    const Gl& gl = c_.gl();
    const auto& ins = lir_.inputs();
    if (inputs.size() != ins.size()) throw Error(ErrorKind::invalid_argument, cat("opengl: ", inputs.size(), " inputs for a plan of ", ins.size()));
    for (size_t i = 0; i < ins.size(); ++i) {
      const ir::Type& t = lir_.type(ins[i]);
      const size_t want = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      if (inputs[i].dtype() != t.dtype || inputs[i].nbytes() != want)
        throw Error(ErrorKind::invalid_argument, cat("opengl: input ", i, " is ", dtype_name(inputs[i].dtype()), " of ", inputs[i].nbytes(),
                                                     " bytes; the plan takes ", ir::type_str(t)));
      Tensor x = inputs[i].contiguous();
      const Location& l = loc_[static_cast<size_t>(ins[i])];
      gl.BindBuffer(GL_COPY_WRITE_BUFFER, l.buffer);
      gl.BufferSubData(GL_COPY_WRITE_BUFFER, static_cast<GLintptr>(l.offset), static_cast<GLsizeiptr>(want), x.data());
    }
    const uint32_t zero[16] = {};
    gl.BindBuffer(GL_COPY_WRITE_BUFFER, errors_);
    gl.BufferSubData(GL_COPY_WRITE_BUFFER, 0, sizeof zero, zero);
    gl.MemoryBarrier(GL_ALL_BARRIER_BITS);
    for (const Step& s : steps_) {
      gl.UseProgram(s.program);
      for (size_t b = 0; b < s.ranges.size(); ++b)
        gl.BindBufferRange(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(b), s.ranges[b].buffer, static_cast<GLintptr>(s.ranges[b].offset),
                           static_cast<GLsizeiptr>(s.ranges[b].bytes));
      if (s.words_bytes) gl.BindBufferRange(GL_UNIFORM_BUFFER, 0, words_, static_cast<GLintptr>(s.words_at), static_cast<GLsizeiptr>(s.words_bytes));
      gl.DispatchCompute(s.groups[0], s.groups[1], s.groups[2]);
      gl.MemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
    }
    c_.check("a run's dispatches");
    uint32_t e[6] = {};
    gl.BindBuffer(GL_COPY_READ_BUFFER, errors_);
    gl.GetBufferSubData(GL_COPY_READ_BUFFER, 0, sizeof e, e);
    vulkan::throw_index_error(e, [&](uint32_t s) { return s < step_nodes_.size() ? vulkan::node_label(lir_.node(step_nodes_[s]), step_nodes_[s]) : std::string("a step"); });
    const auto& outs = lir_.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::Type& t = lir_.type(outs[i]);
      if (!outputs[i].defined()) outputs[i] = Tensor::zeros(t.dtype, vulkan::dims(t));
      const Location& l = loc_[static_cast<size_t>(outs[i])];
      gl.BindBuffer(GL_COPY_READ_BUFFER, l.buffer);
      gl.GetBufferSubData(GL_COPY_READ_BUFFER, static_cast<GLintptr>(l.offset), static_cast<GLsizeiptr>(outputs[i].nbytes()), outputs[i].data());
    }
    c_.check("reading the outputs");
  }

 private:
  GLuint new_buffer(size_t bytes, const void* data = nullptr) {
    const Gl& gl = c_.gl();
    GLuint b = 0;
    gl.GenBuffers(1, &b);
    buffers_.push_back(b);
    gl.BindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    // whole 16-byte units: kernels read packed 8/16-bit tensors a uint word at a time
    gl.BufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(align_up(std::max<size_t>(bytes, 16), 16)), nullptr, GL_DYNAMIC_DRAW);
    if (data) gl.BufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), data);
    c_.check(cat("allocating ", bytes, " bytes").c_str());
    return b;
  }

  void build() {
    const GLuint arena = new_buffer(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 16)));
    loc_ = vulkan::place_values<GLuint>(
        lir_, arena, [&](size_t, const ir::Type& t) { return new_buffer(dtype_bytes(t.dtype, shape_numel(t.shape).value())); },
        [&](const Tensor& value) { return std::pair<GLuint, size_t>{new_buffer(value.nbytes(), value.data()), 0}; });
    errors_ = new_buffer(64);
    plan();
  }

  const Location& location(ir::ValueId v) const {
    const Location& l = loc_.at(static_cast<size_t>(v));
    if (!l.buffer) throw Error(ErrorKind::internal, cat("opengl: %", v, " has no placement"));
    return l;
  }

  // A storage range for value v read in units of elem_bytes (0: its dtype's): from the offset
  // rounded down to the device's alignment; the remainder becomes the element offset word.
  Step::Range range(ir::ValueId v, uint32_t elem_bytes, uint32_t& elem_offset) const {
    const Location& l = location(v);
    const ir::Type& t = lir_.type(v);
    const size_t a = static_cast<size_t>(c_.info().ssbo_alignment), base = l.offset / a * a, rem = l.offset - base;
    const size_t elem = elem_bytes ? elem_bytes : static_cast<size_t>(std::max(1, dtype_bits(t.dtype) / 8));
    if (rem % elem) throw Error(ErrorKind::internal, cat("opengl: %", v, " starts ", l.offset, " bytes in, not a whole element of ", elem, " bytes"));
    const size_t bytes = align_up(rem + l.bytes, 16);
    if (static_cast<int64_t>(bytes) > c_.info().max_ssbo_bytes)
      throw Error(ErrorKind::unsupported, cat("opengl: ", ir::type_str(t), " (", l.bytes, " bytes) is larger than one storage block may be on this device (",
                                              c_.info().max_ssbo_bytes, " bytes)"));
    elem_offset = static_cast<uint32_t>(rem / elem);
    return {l.buffer, base, bytes};
  }

  GLuint program(const std::string& source, const std::string& name) {
    auto it = programs_.find(source);
    if (it != programs_.end()) return it->second;
    const Gl& gl = c_.gl();
    GLuint sh = gl.CreateShader(GL_COMPUTE_SHADER);
    const char* text = source.c_str();
    gl.ShaderSource(sh, 1, &text, nullptr);
    gl.CompileShader(sh);
    GLint ok = 0;
    gl.GetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    auto log = [&](bool shader, GLuint o) {
      char buf[4096] = {};
      GLsizei len = 0;
      if (shader) gl.GetShaderInfoLog(o, sizeof buf - 1, &len, buf);
      else gl.GetProgramInfoLog(o, sizeof buf - 1, &len, buf);
      return std::string(buf, static_cast<size_t>(len));
    };
    if (!ok) {
      std::string msg = log(true, sh);
      gl.DeleteShader(sh);
      throw Error(ErrorKind::internal, cat("opengl: ", name, " does not compile: ", msg));
    }
    GLuint p = gl.CreateProgram();
    gl.AttachShader(p, sh);
    gl.LinkProgram(p);
    gl.DeleteShader(sh);
    gl.GetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
      std::string msg = log(false, p);
      gl.DeleteProgram(p);
      throw Error(ErrorKind::internal, cat("opengl: ", name, " does not link: ", msg));
    }
    programs_[source] = p;
    return p;
  }

  // Every node's launches printed for this device, compiled, and resolved to steps; the words
  // of all of them in one uniform buffer.
  void plan() {
    vulkan::ScopedTarget target(gl_target());
    std::vector<uint8_t> words;
    size_t scratch_max = 0;
    std::vector<vulkan::NodeLaunches> planned = vulkan::graph_launches(lir_, scratch_max);
    const GLuint scratch = scratch_max ? new_buffer(scratch_max) : 0;
    const size_t ua = static_cast<size_t>(c_.info().ubo_alignment);
    for (auto& [i, ls] : planned) {
      const ir::Node& n = lir_.node(i);
      if (ls.empty()) continue;
      const uint32_t step = static_cast<uint32_t>(step_nodes_.size());
      step_nodes_.push_back(i);
      try {
        for (Launch& l : ls) {
          auto bound = vulkan::bind_launch("opengl", n, l, step, loc_, [&](ir::ValueId v, uint32_t elem, uint32_t& off) { return range(v, elem, off); },
                                           scratch ? std::optional<Step::Range>(Step::Range{scratch, 0, scratch_max}) : std::nullopt, Step::Range{errors_, 0, 64});
          if (!bound) continue;
          Step s;
          s.node = i;
          s.ranges = std::move(bound->bindings);
          const std::vector<uint32_t>& push = bound->words;
          if (debug_at(3)) log_line(cat("opengl: ", l.name, " for ", vulkan::node_label(n, i), ":\n", l.source));
          s.program = program(l.source, cat(l.name, " for ", vulkan::node_label(n, i)));
          if (!push.empty()) {
            s.words_at = align_up(words.size(), ua);
            s.words_bytes = align_up(push.size() * 4, 16);  // std140 blocks are sized in 16-byte units
            words.resize(s.words_at + s.words_bytes, 0);
            std::memcpy(words.data() + s.words_at, push.data(), push.size() * 4);
          }
          s.groups[0] = l.groups[0], s.groups[1] = l.groups[1], s.groups[2] = l.groups[2];
          steps_.push_back(std::move(s));
        }
      } catch (const Error& e) {
        throw Error(e.kind(), cat(vulkan::node_label(n, i), ": ", e.what()));
      }
    }
    const Gl& gl = c_.gl();
    gl.GenBuffers(1, &words_);
    gl.BindBuffer(GL_UNIFORM_BUFFER, words_);
    gl.BufferData(GL_UNIFORM_BUFFER, static_cast<GLsizeiptr>(std::max<size_t>(words.size(), 16)), words.empty() ? nullptr : words.data(), GL_STATIC_DRAW);
    c_.check("planning the dispatches");
    if (debug_at(1)) log_line(cat("opengl: graph @", lir_.name, ": ", steps_.size(), " dispatches, arena ", lir_.arena_bytes, " bytes"));
  }

  void release() {
    const Gl& gl = c_.gl();
    for (auto& [src, p] : programs_) gl.DeleteProgram(p);
    programs_.clear();
    if (!buffers_.empty()) gl.DeleteBuffers(static_cast<GLsizei>(buffers_.size()), buffers_.data());
    buffers_.clear();
    if (words_) gl.DeleteBuffers(1, &words_);
    words_ = 0;
  }

  ir::Graph lir_;
  Context& c_;
  std::vector<Location> loc_;
  std::vector<GLuint> buffers_;
  GLuint errors_ = 0, words_ = 0;
  std::map<std::string, GLuint> programs_;
  std::vector<Step> steps_;
  std::vector<int> step_nodes_;
};

}  // namespace

vulkan::KernelTarget gl_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::opengl;
  // claims read the same whether or not a GL driver is here (docs/ops.md, dispatch reports):
  // the device is available only where ARB int64 is (gl.cpp), so the kernels may assume it
  t.features.int64 = true;
  // 8/16-bit tensors packed into uint words by the skeleton (shader.cpp); no subgroups (not core)
  t.features.storage8 = t.features.storage16 = t.features.int8 = t.features.int16 = true;
  t.features.max_storage_range = static_cast<uint64_t>(std::max<GLint64>(Context::get().info().max_ssbo_bytes, 0));
  t.features.max_shared_bytes = static_cast<uint32_t>(Context::get().info().max_shared_bytes);
  return t;
}

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<GlExecutable>(lir); }

}  // namespace rlx::backends::opengl
