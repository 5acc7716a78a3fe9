#include "dist/graph_collectives.h"

#include "rlx/error.h"

namespace rlx::dist {

GraphCollectives::GraphCollectives(Communicator& comm) : comm_(comm) {
  if (runtime::set_collective_group(this) != nullptr) {
    runtime::set_collective_group(nullptr);
    throw Error(ErrorKind::internal, "a second communicator lent to the graphs while one still is");
  }
}

GraphCollectives::~GraphCollectives() { runtime::set_collective_group(nullptr); }

void GraphCollectives::all_reduce(Tensor& t, runtime::CollectiveReduce op) { comm_.all_reduce(t, op); }

void GraphCollectives::all_gather(const Tensor& t, Tensor& out) { comm_.all_gather(t, out); }

}  // namespace rlx::dist
