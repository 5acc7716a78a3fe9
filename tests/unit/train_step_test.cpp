// The training step's split for data parallelism: the update graph built from
// train::gradients_as_data, fed the gradients of the value-and-grad graph, gives bitwise the
// parameters and optimizer state of the whole step (tests/cli/dist.sh runs it over two ranks).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ops/builder.h"
#include "passes/autodiff.h"
#include "rlx/session.h"
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
