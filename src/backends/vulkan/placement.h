// Where each value of a planned LIR lives, for the executables that give every graph input and
// every constant a buffer of its own (opengl, gpu, and the metal program): values the memory plan
// put in the arena at their offsets in `arena`, graph input i in the buffer input(i, type) makes,
// a constant's value where constant(tensor) puts it (a buffer and a byte offset), and views inside
// their roots. Values with none (symbolic shapes) keep a default Buffer.
#pragma once
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "passes/memory_plan.h"

namespace rlx::backends::vulkan {

template <class Buffer>
struct Placed {
  Buffer buffer{};
  size_t offset = 0, bytes = 0;
};

template <class Buffer, class Input, class Constant>
std::vector<Placed<Buffer>> place_values(const ir::Graph& lir, const Buffer& arena, Input&& input, Constant&& constant) {
  using Placement = ir::Placement;
  const size_t nv = lir.num_values();
  std::vector<Placed<Buffer>> at(nv);
  auto bytes = [&](size_t v) {
    const ir::Type& t = lir.type(static_cast<ir::ValueId>(v));
    return dtype_bytes(t.dtype, shape_numel(t.shape).value());
  };
  for (size_t v = 0; v < nv; ++v)
    if (lir.placement[v].kind == Placement::Kind::arena && shape_is_static(lir.type(static_cast<ir::ValueId>(v)).shape))
      at[v] = {arena, static_cast<size_t>(lir.placement[v].offset), bytes(v)};
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

}  // namespace rlx::backends::vulkan
