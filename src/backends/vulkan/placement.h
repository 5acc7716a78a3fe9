// Where each value of a planned LIR lives, for the executables that give every graph input and
// every constant a buffer of its own (opengl, gpu, and the metal program): values the memory plan
// put in the arena at their offsets in `arena`, graph input i in the buffer input(i, type) makes,
// a constant's value where constant(tensor) puts it (a buffer and a byte offset), and views inside
// their roots. Values with none (symbolic shapes) keep a default Buffer. bind_launch then resolves
// each launch's bindings and words against those places.
#pragma once
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "backends/vulkan/kernels.h"
#include "ir/graph.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

template <class Buffer>
struct Placed {
  Buffer buffer{};
  size_t offset = 0, bytes = 0;
};

// The same with the arena's values placed where arena_at(value, bytes) says (a buffer and a byte
// offset) — for a program that gives each of them a buffer of its own (webgpu's exported page).
template <class Buffer, class ArenaAt, class Input, class Constant>
std::vector<Placed<Buffer>> place_values_with(const ir::Graph& lir, ArenaAt&& arena_at, Input&& input, Constant&& constant) {
  using Placement = ir::Placement;
  const size_t nv = lir.num_values();
  std::vector<Placed<Buffer>> at(nv);
  auto bytes = [&](size_t v) {
    const ir::Type& t = lir.type(static_cast<ir::ValueId>(v));
    return dtype_bytes(t.dtype, shape_numel(t.shape).value());
  };
  for (size_t v = 0; v < nv; ++v)
    if (lir.placement[v].kind == Placement::Kind::arena && shape_is_static(lir.type(static_cast<ir::ValueId>(v)).shape)) {
      std::pair<Buffer, size_t> where = arena_at(static_cast<ir::ValueId>(v), bytes(v));
      at[v] = {where.first, where.second, bytes(v)};
    }
  std::vector<Buffer> inputs;
  for (size_t i = 0; i < lir.inputs().size(); ++i) inputs.push_back(input(i, lir.type(lir.inputs()[i])));
  for (size_t v = 0; v < nv; ++v)
    if (lir.placement[v].kind == Placement::Kind::input) at[v] = {inputs.at(static_cast<size_t>(lir.placement[v].index)), 0, bytes(v)};
  for (int i = 0; i < lir.num_nodes(); ++i) {
    const ir::Node& n = lir.node(i);
    if (n.op != ir::Op::constant) continue;
    Tensor value = n.attrs.tensor("value").contiguous();
    std::pair<Buffer, size_t> where = constant(value);
    at[static_cast<size_t>(n.outputs[0])] = {where.first, where.second, value.nbytes()};
  }
  for (size_t v = 0; v < nv; ++v)
    if (lir.placement[v].kind == Placement::Kind::view) {
      auto id = static_cast<ir::ValueId>(v);
      const Placed<Buffer>& root = at[static_cast<size_t>(passes::placement_root(lir, id))];
      at[v] = {root.buffer, root.offset + static_cast<size_t>(passes::placement_offset(lir, id)), bytes(v)};
    }
  return at;
}

template <class Buffer, class Input, class Constant>
std::vector<Placed<Buffer>> place_values(const ir::Graph& lir, const Buffer& arena, Input&& input, Constant&& constant) {
  return place_values_with<Buffer>(
      lir, [&](ir::ValueId v, size_t) { return std::pair<Buffer, size_t>{arena, static_cast<size_t>(lir.placement[static_cast<size_t>(v)].offset)}; },
      std::forward<Input>(input), std::forward<Constant>(constant));
}

// The whole buffer of value v (placed at `at`), with v's start in units of elem_bytes (0: its
// dtype's size) as its offset word — for executables that bind whole buffers (gpu, webgpu).
template <class Buffer>
Buffer whole_buffer(const char* device, const ir::Graph& lir, const std::vector<Placed<Buffer>>& at, ir::ValueId v, uint32_t elem_bytes, uint32_t& elem_offset) {
  const Placed<Buffer>& l = at.at(static_cast<size_t>(v));
  if (!l.buffer) throw Error(ErrorKind::internal, cat(device, ": %", v, " has no placement"));
  const size_t elem = elem_bytes ? elem_bytes : static_cast<size_t>(std::max(1, dtype_bits(lir.type(v).dtype) / 8));
  if (l.offset % elem) throw Error(ErrorKind::internal, cat(device, ": %", v, " starts ", l.offset, " bytes in, not a whole element of ", elem, " bytes"));
  if (l.offset / elem > UINT32_MAX) throw Error(ErrorKind::unsupported, cat(device, ": %", v, " starts beyond what a 32-bit element offset reaches"));
  elem_offset = static_cast<uint32_t>(l.offset / elem);
  return l.buffer;
}

// A launch's bindings, one per operand in order, and its words: each operand's element offset,
// then the kernel's own (the step's index set where the kernel reports index errors).
template <class Binding>
struct BoundLaunch {
  std::vector<Binding> bindings;
  std::vector<uint32_t> words;
};

// Resolves launch `l` of node `n`, the plan's step `step`, for an executable whose values are
// `at`: bind(value, elem_bytes, offset_word) gives an input's or output's binding and sets its
// element offset; `scratch` (none when no step asked for any) and `error` are bound as they are.
// Empty when the launch is a copy the memory plan made unnecessary (skip_when_in_place).
// `device` names the device in errors; `trailing_bytes` are words the executable pushes after
// these itself (the HLSL flavour's group counts and step).
template <class Buffer, class Binding, class Bind>
std::optional<BoundLaunch<Binding>> bind_launch(const char* device, const ir::Node& n, Launch& l, uint32_t step, const std::vector<Placed<Buffer>>& at, Bind&& bind,
                                                const std::optional<Binding>& scratch, const Binding& error, uint32_t trailing_bytes = 0) {
  if (l.once || l.persistent_bytes) throw Error(ErrorKind::internal, cat(device, ": ", l.name, " prepares constants, which this device does not"));
  auto value = [&](const Operand& o) { return o.kind == Operand::Kind::input ? n.inputs[static_cast<size_t>(o.index)] : n.outputs[static_cast<size_t>(o.index)]; };
  if (l.skip_when_in_place) {
    const Placed<Buffer>& a = at.at(static_cast<size_t>(value(l.operands.at(0))));
    const Placed<Buffer>& b = at.at(static_cast<size_t>(n.outputs[0]));
    if (a.buffer == b.buffer && a.offset == b.offset) return std::nullopt;
  }
  BoundLaunch<Binding> r;
  for (const Operand& o : l.operands) {
    uint32_t off = 0;
    switch (o.kind) {
      case Operand::Kind::input:
      case Operand::Kind::output: r.bindings.push_back(bind(value(o), o.elem_bytes, off)); break;
      case Operand::Kind::error: r.bindings.push_back(error); continue;
      case Operand::Kind::scratch:
        if (!scratch || !o.elem_bytes || o.index % static_cast<int>(o.elem_bytes))
          throw Error(ErrorKind::internal, cat(device, ": ", l.name, " binds scratch it did not ask for"));
        r.bindings.push_back(*scratch);
        off = static_cast<uint32_t>(o.index) / o.elem_bytes;
        break;
      case Operand::Kind::persistent: throw Error(ErrorKind::internal, cat(device, ": ", l.name, " binds a persistent region"));
    }
    r.words.push_back(off);
  }
  if (l.step_word >= 0) l.words[static_cast<size_t>(l.step_word)] = step;
  r.words.insert(r.words.end(), l.words.begin(), l.words.end());
  if (r.words.size() * 4 + trailing_bytes != l.push_bytes)
    throw Error(ErrorKind::internal, cat(device, ": ", l.name, " pushes ", r.words.size() * 4, " bytes, its kernel declares ", l.push_bytes));
  return r;
}

// What the HLSL flavour adds to a bound launch (hlsl.h): its group counts and step as trailing
// words (HLSL has no group-count built-in), and the error words as a last binding where the
// family has none (every HLSL kernel can raise an error). `writes` (may be null) gets that
// binding's access.
template <class Binding>
void add_hlsl_tail(const Launch& l, uint32_t step, BoundLaunch<Binding>& b, const Binding& error, std::vector<bool>* writes = nullptr) {
  b.words.insert(b.words.end(), {l.groups[0], l.groups[1], l.groups[2], step});
  if (std::none_of(l.operands.begin(), l.operands.end(), [](const Operand& o) { return o.kind == Operand::Kind::error; })) {
    b.bindings.push_back(error);
    if (writes) writes->push_back(true);
  }
}

}  // namespace rlx::backends::vulkan
