// A communicator lent to the graphs of this process: while a GraphCollectives lives, every
// all_reduce / all_gather node any executable runs goes over `comm` (runtime/collective.h).
// One at a time; the communicator must outlive it.
#pragma once
#include "dist/communicator.h"
#include "runtime/collective.h"

namespace rlx::dist {

class GraphCollectives : public runtime::CollectiveGroup {
 public:
  explicit GraphCollectives(Communicator& comm);
  ~GraphCollectives() override;
  GraphCollectives(const GraphCollectives&) = delete;
  GraphCollectives& operator=(const GraphCollectives&) = delete;

  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  void all_reduce(Tensor& t, runtime::CollectiveReduce op) override;
  void all_gather(const Tensor& t, Tensor& out) override;
  void reduce_scatter(const Tensor& t, Tensor& out, runtime::CollectiveReduce op) override { comm_.reduce_scatter(t, out, op); }
  void broadcast(Tensor& t, int root) override { comm_.broadcast(t, root); }
  bool all_reduce_device(void* data, int64_t count, DType d, runtime::CollectiveReduce op, void* stream) override {
    return comm_.all_reduce_device(data, count, d, op, stream);
  }
  bool all_gather_device(const void* in, void* out, int64_t count, DType d, void* stream) override {
    return comm_.all_gather_device(in, out, count, d, stream);
  }

 private:
  Communicator& comm_;
};

}  // namespace rlx::dist
