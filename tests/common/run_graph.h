// Compiles an IR graph for one device and runs it once: the unit tests' way to compare devices.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/graph.h"
#include "rlx/session.h"

namespace rlx::testing {

inline std::vector<Tensor> run_on(const std::string& device, const ir::Graph& g, const std::vector<Tensor>& in) {
  Session s(device);
  return s.compile(Graph(std::make_shared<ir::Graph>(g))).run(in);
}

}  // namespace rlx::testing
