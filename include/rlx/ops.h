// Ops of the graph-builder API. Each returns the op's value; shapes and dtypes are inferred and
// a mismatch throws rlx::Error naming the op and what was wrong.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "rlx/graph.h"

namespace rlx {

// Any op of the op table by name, attributes in the text form: op(g, "topk", {x}, "k=5, axis=-1").
std::vector<Value> op(const std::string& name, const std::vector<Value>& inputs, const std::string& attrs = "");

Value constant(Graph& g, const Tensor& t);
Value scalar_like(Value like, double v);

Value add(Value a, Value b);
Value sub(Value a, Value b);
Value mul(Value a, Value b);
Value div(Value a, Value b);
Value maximum(Value a, Value b);
Value minimum(Value a, Value b);
Value pow(Value a, Value b);
Value neg(Value x);
Value exp(Value x);
Value log(Value x);
Value sqrt(Value x);
Value tanh(Value x);
Value sigmoid(Value x);
Value cast(Value x, DType to);
Value select(Value cond, Value a, Value b);

Value reshape(Value x, Shape shape);
Value transpose(Value x, std::vector<int64_t> perm);
Value concat(const std::vector<Value>& xs, int64_t axis);
Value gather(Value x, Value indices, int64_t axis);
Value reduce_sum(Value x, std::vector<int64_t> axes, bool keepdims = false);
Value reduce_max(Value x, std::vector<int64_t> axes, bool keepdims = false);
Value argmax(Value x, int64_t axis, bool keepdims = false);

Value matmul(Value a, Value b);
Value linear(Value x, Value w, std::optional<Value> bias = std::nullopt);
Value relu(Value x);
Value gelu(Value x);
Value silu(Value x);
Value softmax(Value x, int64_t axis = -1);
Value log_softmax(Value x, int64_t axis = -1);
Value layer_norm(Value x, std::optional<Value> gamma, std::optional<Value> beta, double eps = 1e-5);
Value rms_norm(Value x, std::optional<Value> gamma, double eps = 1e-6);
Value embedding(Value table, Value ids);
Value cross_entropy(Value logits, Value labels);

inline Value operator+(Value a, Value b) { return add(a, b); }
inline Value operator-(Value a, Value b) { return sub(a, b); }
inline Value operator*(Value a, Value b) { return mul(a, b); }
inline Value operator/(Value a, Value b) { return div(a, b); }
inline Value operator+(Value a, double b) { return add(a, scalar_like(a, b)); }
inline Value operator*(Value a, double b) { return mul(a, scalar_like(a, b)); }

}  // namespace rlx
