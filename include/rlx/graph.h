// The graph-builder API: build a model as a graph of ops, or read one from its text form.
//
//   rlx::Graph g("mlp");
//   auto x = g.input("x", rlx::DType::f32, {rlx::Dim::symbol("B"), 784});
//   auto w = g.input("w", rlx::DType::f32, {128, 784});
//   g.set_outputs({rlx::relu(rlx::linear(x, w))});
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlx/dtype.h"
#include "rlx/shape.h"
#include "rlx/tensor.h"

namespace rlx {

namespace ir {
class Graph;
}
class Graph;

// A value of a graph under construction: a typed SSA value.
class Value {
 public:
  Value() = default;
  DType dtype() const;
  Shape shape() const;  // by value: building more ops may move the graph's storage
  size_t rank() const { return shape().size(); }
  bool valid() const { return g_ != nullptr; }
  ir::Graph* ir_graph() const { return g_; }
  int32_t id() const { return id_; }
  Value(ir::Graph* g, int32_t id) : g_(g), id_(id) {}

 private:
  ir::Graph* g_ = nullptr;
  int32_t id_ = -1;
};

class Graph {
 public:
  explicit Graph(std::string name = "main");
  Value input(const std::string& name, DType dtype, Shape shape);
  void set_outputs(const std::vector<Value>& outputs);
  // Lets output `output_index` reuse the buffer of input `input_index` (same type): state such
  // as a KV cache is then updated in place by CompiledModel::run_into, and that input's tensor
  // is overwritten by every run.
  void donate(size_t output_index, size_t input_index);
  std::vector<Value> inputs() const;
  std::vector<Value> outputs() const;

  // Text form (see docs and examples/*.rlx); parse errors name line and column.
  std::string to_text() const;
  static Graph from_text(std::string_view text, const std::string& source_name = "<text>");
  static Graph load(const std::string& path);
  // Throws rlx::Error(invalid_graph) listing every problem.
  void verify() const;

  const ir::Graph& ir() const { return *impl_; }
  ir::Graph& ir() { return *impl_; }
  explicit Graph(std::shared_ptr<ir::Graph> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<ir::Graph> impl_;
};

}  // namespace rlx
