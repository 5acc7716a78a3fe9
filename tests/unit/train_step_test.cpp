// The training step's split for data parallelism: the update graph built from
// train::gradients_as_data, fed the gradients of the value-and-grad graph, gives bitwise the
// parameters and optimizer state of the whole step (tests/cli/dist.sh runs it over two ranks).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ops/builder.h"
#include "passes/autodiff.h"
#include "rlx/session.h"
#include "runtime/collective.h"
#include "train/data_parallel.h"
#include "train/train_step.h"

using namespace rlx;
using ir::ValueId;

namespace {

// loss = Σ (relu(x·w1)·w2 − t)² / 8, parameters w1 [16, 8] and w2 [8, 4]
ir::Graph two_layers() {
  ir::Graph g;
  ops::Builder b(g);
  ValueId w1 = g.add_input({DType::f32, {Dim(16), Dim(8)}}, "w1");
  ValueId w2 = g.add_input({DType::f32, {Dim(8), Dim(4)}}, "w2");
  ValueId x = g.add_input({DType::f32, {Dim(8), Dim(16)}}, "x");
  ValueId t = g.add_input({DType::f32, {Dim(8), Dim(4)}}, "t");
  ValueId h = b.max(b.dot_general(x, w1, {{}, {}}, {{1}, {0}}), b.scalar(DType::f32, 0));
  ValueId d = b.sub(b.dot_general(h, w2, {{}, {}}, {{1}, {0}}), t);
  g.set_outputs({b.div(b.reduce(b.mul(d, d), "sum", {0, 1}, false), b.scalar(DType::f32, 8))});
  return g;
}

Tensor random(std::mt19937& rng, std::vector<int64_t> shape) {
  std::normal_distribution<double> n(0, 0.5);
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  std::vector<double> v(static_cast<size_t>(count));
  for (auto& e : v) e = n(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

CompiledModel compile(const ir::Graph& g) { return Session("reference").compile(Graph(std::make_shared<ir::Graph>(g))); }

bool same_bits(const Tensor& a, const Tensor& b) {
  Tensor x = a.contiguous(), y = b.contiguous();
  return x.numel() == y.numel() && std::equal(x.data_as<float>(), x.data_as<float>() + x.numel(), y.data_as<float>(),
                                              [](float p, float q) { return std::memcmp(&p, &q, sizeof p) == 0; });
}

}  // namespace

TEST(TrainStep, UpdateFromGradientsAsDataEqualsTheWholeStep) {
  std::mt19937 rng(5);
  const ir::Graph fwd = two_layers();
  std::vector<Tensor> params = {random(rng, {16, 8}), random(rng, {8, 4})}, data = {random(rng, {8, 16}), random(rng, {8, 4})};
  train::OptimizerConfig opt;
  opt.kind = "adamw";
  opt.weight_decay = 0.01;
  opt.clip_norm = 0.5;  // clipping reads every gradient: it must see the same ones
  const int slots = train::optimizer_slots(opt);
  std::vector<Tensor> state;
  for (const Tensor& p : params)
    for (int s = 0; s < slots; ++s) state.push_back(Tensor::zeros(DType::f32, p.shape()));
  const Tensor lr = Tensor::scalar(DType::f32, 0.01), step = Tensor::scalar(DType::f32, 1);

  // the whole step: [params, slots, data, lr, step] → [params, slots, loss]
  std::vector<Tensor> in = params;
  in.insert(in.end(), state.begin(), state.end());
  in.insert(in.end(), data.begin(), data.end());
  in.push_back(lr);
  in.push_back(step);
  std::vector<Tensor> whole = compile(train::build_train_step(fwd, 2, opt).graph).run(in);

  // backward alone, then the update with the gradients as its data
  std::vector<Tensor> vg_in = params;
  vg_in.insert(vg_in.end(), data.begin(), data.end());
  std::vector<Tensor> vg = compile(passes::value_and_grad(fwd, 0, {fwd.inputs()[0], fwd.inputs()[1]})).run(vg_in);  // loss, g1, g2
  ASSERT_EQ(vg.size(), 3u);
  std::vector<Tensor> up_in = params;
  up_in.insert(up_in.end(), state.begin(), state.end());
  up_in.push_back(vg[1]);
  up_in.push_back(vg[2]);
  up_in.push_back(lr);
  up_in.push_back(step);
  std::vector<Tensor> split = compile(train::build_train_step(train::gradients_as_data({fwd.type(fwd.inputs()[0]), fwd.type(fwd.inputs()[1])}), 2, opt).graph).run(up_in);

  const size_t n = params.size() + state.size();  // new params and slots
  ASSERT_GE(whole.size(), n);
  ASSERT_GE(split.size(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(same_bits(whole[i], split[i])) << "output " << i;
  EXPECT_FALSE(same_bits(whole[0], params[0])) << "the step changed nothing";
}

// Data parallel as one graph (train/data_parallel.h): the parameters wrapped in replicated
// buckets, in reverse order of first use; on one rank the averaged gradients are the gradients
// themselves, bitwise, and the last layer's bucket is all-reduced before the backward reaches
// the first layer (so the executor can send it while the rest of the backward runs).
TEST(TrainStep, ReplicatedBucketsAverageEachGradientOnceDuringTheBackward) {
  runtime::SingleRankGroup one_rank;
  runtime::set_collective_group(&one_rank);
  std::mt19937 rng(9);
  const ir::Graph fwd = two_layers();
  const ir::Graph rep = train::replicate_parameters(fwd, 2, 64);  // w2 (128 B) and w1 (512 B): a bucket each
  int buckets = 0;
  for (int i = 0; i < rep.num_nodes(); ++i) buckets += rep.node(i).op == ir::Op::replicated;
  EXPECT_EQ(buckets, 2);
  std::vector<ValueId> wrt = {fwd.inputs()[0], fwd.inputs()[1]};
  const ir::Graph plain = passes::value_and_grad(fwd, 0, wrt);
  const ir::Graph synced = passes::value_and_grad(rep, 0, {rep.inputs()[0], rep.inputs()[1]});
  // In the gradient graph: w2's all_reduce (4·8 = 32 elements) comes before the product that
  // gives w1's gradient — the one contracting over the batch with x [8, 16].
  int first_reduce = -1, first_reduce_numel = 0, w1_grad_product = -1;
  for (int i = 0; i < synced.num_nodes(); ++i) {
    const ir::Node& n = synced.node(i);
    if (n.op == ir::Op::all_reduce && first_reduce < 0) {
      first_reduce = i;
      first_reduce_numel = static_cast<int>(shape_numel(synced.type(n.outputs[0]).shape).value());
    }
    if (n.op == ir::Op::dot_general && synced.type(n.outputs[0]).shape == Shape{Dim(16), Dim(8)}) w1_grad_product = i;
  }
  ASSERT_GE(first_reduce, 0);
  EXPECT_EQ(first_reduce_numel, 32);
  EXPECT_LT(first_reduce, w1_grad_product);
  std::vector<Tensor> in = {random(rng, {16, 8}), random(rng, {8, 4}), random(rng, {8, 16}), random(rng, {8, 4})};
  std::vector<Tensor> a = compile(plain).run(in), b = compile(synced).run(in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bits(a[k], b[k])) << "output " << k;
  runtime::set_collective_group(nullptr);
}
