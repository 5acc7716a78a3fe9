// An Executable for devices whose memory is host memory (reference, cpu): walks the LIR,
// resolving every placement to a pointer, and calls one kernel per node.
#pragma once
#include <functional>
#include <vector>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::runtime {

// A static-shaped, contiguous view of one value during a run.
struct HostView {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  template <class T>
  T* as() const { return static_cast<T*>(data); }
};

struct KernelArgs {
  const ir::Node& node;
  const std::vector<HostView>& in;
  const std::vector<HostView>& out;
};

using HostKernel = std::function<void(const KernelArgs&)>;
// Finds the kernel for a node of the LIR; returns an empty function when there is none.
using KernelLookup = std::function<HostKernel(const ir::Node& node, const ir::Graph& lir)>;

std::unique_ptr<Executable> make_host_executable(const ir::Graph& lir, const KernelLookup& lookup);

}  // namespace rlx::runtime
