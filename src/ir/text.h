// The text form of every IR level. print(parse(t)) == t for any t that print produced.
//
//   graph @mlp(%x: f32[B,784], %w: f32[128,784]) {
//     %0 = hir.linear(%x, %w) : f32[B,128] loc("fc1")
//     %1 = mir.reduce(%0) {axes=[1], kind=max} : f32[B]
//     return %1
//   }
//
// LIR adds the device and arena size to the header and a placement to each result:
//   lir @mlp(…) device=cpu arena=4096 { %0 = … : f32[2,128] @arena[0:1024] … }
#pragma once
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace rlx::ir {

std::string print_graph(const Graph& g);
// Throws rlx::Error(parse) naming the line, column and what was expected.
Graph parse_graph(std::string_view text, const std::string& source_name = "<text>");

}  // namespace rlx::ir
