// Pipeline-parallel training: the schedules (deadlock-free, the in-flight bound that makes 1F1B
// worth having), the stage split (cuts between layers, balanced, tied weights refused) and the
// stages stepped over Gloo ranks in threads of this process against one process on the whole
// batch (tests/cli/dist.sh runs the same through `rlx launch` on Fashion-MNIST).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <thread>

#include "dist/communicator.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "train/pipeline_schedule.h"
#include "train/pipeline_stages.h"
#include "train/pipeline_trainer.h"
#include "train/trainer.h"

using namespace rlx;
using ir::ValueId;

namespace {

// An MLP classifier with `widths` (input first, classes last), as the `rlx train` ones:
// inputs [w0, b0, w1, b1, …, x f32[B, in], labels i64[B]], outputs [mean cross-entropy, correct count].
ir::Graph mlp(const std::vector<int64_t>& widths, bool tie_first_and_last = false) {
  ir::Graph g;
  g.name = "mlp";
  ops::Builder b(g);
  std::vector<ValueId> w, bias;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    w.push_back(g.add_input({DType::f32, {Dim(widths[i]), Dim(widths[i + 1])}}, "w" + std::to_string(i)));
    bias.push_back(g.add_input({DType::f32, {Dim(widths[i + 1])}}, "b" + std::to_string(i)));
  }
  const Dim B = Dim::symbol("B");
  ValueId x = g.add_input({DType::f32, {B, Dim(widths.front())}}, "x");
  ValueId t = g.add_input({DType::i64, {B}}, "labels");
  ValueId h = x;
  for (size_t i = 0; i < w.size(); ++i) {
    ValueId wi = tie_first_and_last && i + 1 == w.size() ? b.transpose(w[0], {1, 0}) : w[i];
    b.set_context("layer" + std::to_string(i), "");
    h = b.add(b.dot_general(h, wi, {{}, {}}, {{1}, {0}}), bias[i]);
    if (i + 1 < w.size()) h = b.max(h, b.scalar(DType::f32, 0));
  }
  ValueId loss = b.emit1(ir::Op::cross_entropy, {h, t});
  ValueId correct = b.reduce(b.cast(b.binary(ir::Op::eq, b.reduce(h, "argmax", {1}, false), t), DType::f32), "sum", {0}, false);
  g.set_outputs({loss, correct});
  return g;
}

Tensor random(std::mt19937& rng, std::vector<int64_t> shape, double sd = 0.5) {
  std::normal_distribution<double> n(0, sd);
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  std::vector<double> v(static_cast<size_t>(count));
  for (auto& e : v) e = n(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

std::vector<train::NamedTensor> init(std::mt19937& rng, const std::vector<int64_t>& widths) {
  std::vector<train::NamedTensor> p;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    p.push_back({"w" + std::to_string(i), random(rng, {widths[i], widths[i + 1]})});
    p.push_back({"b" + std::to_string(i), random(rng, {widths[i + 1]}, 0.1)});
  }
  return p;
}

double max_relative(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 1e-12;
  for (int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::abs(a.at_f64(i) - b.at_f64(i)));
    scale = std::max(scale, std::abs(a.at_f64(i)));
  }
  return diff / scale;
}

}  // namespace

TEST(PipelineSchedule, EveryScheduleRunsAndBoundsWhatIsInFlight) {
  for (auto kind : {train::PipelineScheduleKind::gpipe, train::PipelineScheduleKind::one_f_one_b})
    for (int stages = 1; stages <= 4; ++stages)
      for (int micro = 1; micro <= 8; ++micro) {
        for (int s = 0; s < stages; ++s) {  // each micro-batch forward once, then backward once
          std::vector<int> f(static_cast<size_t>(micro), 0), bw(static_cast<size_t>(micro), 0);
          for (auto a : train::pipeline_schedule(kind, s, stages, micro)) {
            if (a.forward) ++f[static_cast<size_t>(a.micro)];
            else EXPECT_EQ(f[static_cast<size_t>(a.micro)], 1) << "backward before forward";
            if (!a.forward) ++bw[static_cast<size_t>(a.micro)];
          }
          for (int m = 0; m < micro; ++m) EXPECT_EQ(f[static_cast<size_t>(m)] + bw[static_cast<size_t>(m)], 2);
        }
        std::vector<int> peak;
        const int steps = train::simulate_pipeline(kind, stages, micro, &peak);
        EXPECT_EQ(steps, 2 * (micro + stages - 1)) << train::pipeline_schedule_name(kind) << " " << stages << "x" << micro;  // the same bubble
        for (int s = 0; s < stages; ++s)
          EXPECT_EQ(peak[static_cast<size_t>(s)], kind == train::PipelineScheduleKind::gpipe ? micro : std::min(stages - s, micro))
              << train::pipeline_schedule_name(kind) << " stage " << s << " of " << stages << ", " << micro << " micro-batches";
      }
  EXPECT_THROW(train::pipeline_schedule_kind("zero-bubble"), Error);
}

TEST(PipelineStages, CutsBetweenLayersWithTheWorkBalanced) {
  const ir::Graph g = mlp({64, 64, 64, 64, 8});  // three equal layers and a small head
  auto two = train::split_pipeline(g, 8, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].params, (std::vector<size_t>{0, 1, 2, 3}));  // 2 layers | 1 layer + head beats 1 | 2 + head
  EXPECT_EQ(two[1].params, (std::vector<size_t>{4, 5, 6, 7}));
  EXPECT_FALSE(two[0].receives);
  EXPECT_TRUE(two[1].receives);
  EXPECT_EQ(two[0].data, (std::vector<size_t>{0}));  // x only; the targets go to the last stage
  EXPECT_EQ(two[1].data, (std::vector<size_t>{1}));
  // the cut sends the activation after the relu (the latest of the equally good places)
  EXPECT_EQ(two[0].forward.producer(two[0].forward.outputs()[0])->op, ir::Op::max) << two[0].sends;
  EXPECT_EQ(two[1].forward.outputs().size(), 2u);
  auto four = train::split_pipeline(g, 8, 4);
  for (size_t s = 0; s < 4; ++s) EXPECT_EQ(four[s].params, (std::vector<size_t>{2 * s, 2 * s + 1}));
  EXPECT_EQ(four[3].data, (std::vector<size_t>{1}));
  try {
    train::split_pipeline(g, 8, 6);
    FAIL() << "six stages of a four-layer MLP";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline stages need 5"), std::string::npos) << e.what();
  }
  try {
    train::split_pipeline(mlp({16, 16, 16}, true), 4, 2);
    FAIL() << "a tied weight split over two stages";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tied weights"), std::string::npos) << e.what();
  }
}

// Ranks of one job as threads of this process, over Gloo on loopback.
template <class F>
void run_ranks(int n, const std::string& job, F body) {
  if (std::find(dist::backends_built().begin(), dist::backends_built().end(), std::string("gloo")) == dist::backends_built().end()) GTEST_SKIP() << "built without Gloo";
  const std::filesystem::path store = std::filesystem::temp_directory_path() / ("rlx_pipeline_test_" + job + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(store);
  std::filesystem::create_directories(store);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        dist::Rendezvous rv;
        rv.rank = r;
        rv.size = n;
        rv.store = store.string();
        rv.job = job;
        rv.timeout_s = 30;
        auto comm = dist::connect(rv);
        body(*comm);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  std::filesystem::remove_all(store);
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

TEST(PipelineTrainer, StagesOverGlooEqualOneProcessOnTheWholeBatch) {
  const std::vector<int64_t> widths = {12, 16, 16, 16, 4};
  const ir::Graph g = mlp(widths);
  std::mt19937 rng(11);
  const auto params = init(rng, widths);
  std::vector<std::vector<Tensor>> batches;
  for (int s = 0; s < 3; ++s) {  // 10 rows: uneven micro-batches
    std::vector<double> labels;
    for (int i = 0; i < 10; ++i) labels.push_back(static_cast<double>(rng() % 4));
    batches.push_back({random(rng, {10, 12}), Tensor::from_f64(DType::i64, {10}, labels)});
  }
  train::OptimizerConfig opt;
  opt.kind = "adam";
  train::Trainer one("cpu", g, params, opt);
  std::vector<double> losses;
  for (const auto& b : batches) losses.push_back(one.step(b, 0.01));
  const double correct = one.extras()[0].at_f64(0);
  for (int stages : {2, 3})
    for (auto kind : {train::PipelineScheduleKind::gpipe, train::PipelineScheduleKind::one_f_one_b}) {
      SCOPED_TRACE(std::to_string(stages) + " stages, " + train::pipeline_schedule_name(kind));
      std::vector<std::vector<train::NamedTensor>> got(static_cast<size_t>(stages));
      std::vector<std::vector<double>> got_loss(static_cast<size_t>(stages));
      std::vector<double> got_extra(static_cast<size_t>(stages)), eval_loss(static_cast<size_t>(stages));
      run_ranks(stages, std::string("pp") + std::to_string(stages) + train::pipeline_schedule_name(kind), [&](dist::Communicator& comm) {
        train::PipelineTrainer pt("cpu", g, params, opt, {}, comm, {kind, 3});
        const auto r = static_cast<size_t>(comm.rank());
        for (const auto& b : batches) got_loss[r].push_back(pt.step(b, 0.01));
        got_extra[r] = pt.extras()[0].at_f64(0);
        eval_loss[r] = pt.evaluate(batches[0])[0].at_f64(0);
        got[r] = pt.gather_params();
        EXPECT_LE(pt.peak_in_flight(), kind == train::PipelineScheduleKind::gpipe ? 3 : stages - comm.rank());
      });
      const double want_eval = one.evaluate(batches[0])[0].at_f64(0);
      for (size_t r = 0; r < static_cast<size_t>(stages); ++r) {
        ASSERT_EQ(got[r].size(), params.size());
        for (size_t i = 0; i < params.size(); ++i) EXPECT_LT(max_relative(one.params()[i].tensor, got[r][i].tensor), 1e-5) << params[i].name << " on rank " << r;
        for (size_t s = 0; s < losses.size(); ++s) EXPECT_NEAR(got_loss[r][s], losses[s], 1e-5 * std::abs(losses[s]));
        EXPECT_EQ(got_extra[r], correct);  // a count summed over the micro-batches
        EXPECT_NEAR(eval_loss[r], want_eval, 1e-5 * std::abs(want_eval));
      }
    }
}

// Clipping by the global norm (summed over the stages) and dynamic loss scaling (a step skipped
// on every stage when one overflows) give what one process gives on the whole batch.
TEST(PipelineTrainer, ClippingAndLossScalingDecideOverEveryStage) {
  const std::vector<int64_t> widths = {12, 16, 16, 4};
  const ir::Graph g = mlp(widths);
  std::mt19937 rng(5);
  const auto params = init(rng, widths);
  std::vector<std::vector<Tensor>> batches;
  for (int s = 0; s < 4; ++s) {
    std::vector<double> labels;
    for (int i = 0; i < 9; ++i) labels.push_back(static_cast<double>(rng() % 4));
    batches.push_back({random(rng, {9, 12}), Tensor::from_f64(DType::i64, {9}, labels)});
  }
  train::OptimizerConfig opt;
  opt.kind = "adam";
  opt.clip_norm = 0.05;  // far below the gradients' norm: every step clips
  opt.loss_scale.enabled = true;
  opt.loss_scale.init = 3e38;  // the first step overflows in f32 and is skipped; then 1.5e38…
  opt.loss_scale.interval = 2;
  train::Trainer one("cpu", g, params, opt);
  std::vector<double> losses;
  for (const auto& b : batches) losses.push_back(one.step(b, 0.01));
  ASSERT_GE(one.skipped_steps(), 1) << "the test means to skip a step";
  ASSERT_LT(one.skipped_steps(), 4) << "and to apply some";
  std::vector<std::vector<train::NamedTensor>> got(2);
  std::vector<double> scale(2);
  std::vector<int64_t> skipped(2);
  run_ranks(2, "ppclip", [&](dist::Communicator& comm) {
    train::PipelineTrainer pt("cpu", g, params, opt, {}, comm, {train::PipelineScheduleKind::one_f_one_b, 2});
    const auto r = static_cast<size_t>(comm.rank());
    for (const auto& b : batches) pt.step(b, 0.01);
    got[r] = pt.gather_params();
    scale[r] = pt.loss_scale();
    skipped[r] = pt.skipped_steps();
  });
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(skipped[r], one.skipped_steps()) << "rank " << r;
    EXPECT_EQ(scale[r], one.loss_scale()) << "rank " << r;
    ASSERT_EQ(got[r].size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_LT(max_relative(one.params()[i].tensor, got[r][i].tensor), 1e-5) << params[i].name << " on rank " << r;
  }
  // clipping did something: without it the weights move further
  train::OptimizerConfig loose = opt;
  loose.clip_norm = 0;
  train::Trainer unclipped("cpu", g, params, loose);
  for (const auto& b : batches) unclipped.step(b, 0.01);
  EXPECT_GT(max_relative(one.params()[0].tensor, unclipped.params()[0].tensor), 1e-4);
}

// Data parallel × pipeline parallel: 4 ranks as 2 copies of a 2-stage pipeline, each copy on half
// of every batch, a stage's copies averaging their gradients — one process on the whole batch.
TEST(PipelineTrainer, CopiesOfAPipelineTrainAsOneProcess) {
  const std::vector<int64_t> widths = {12, 16, 16, 4};
  const ir::Graph g = mlp(widths);
  std::mt19937 rng(9);
  const auto params = init(rng, widths);
  std::vector<std::vector<Tensor>> batches;
  for (int s = 0; s < 3; ++s) {
    std::vector<double> labels;
    for (int i = 0; i < 12; ++i) labels.push_back(static_cast<double>(rng() % 4));
    batches.push_back({random(rng, {12, 12}), Tensor::from_f64(DType::i64, {12}, labels)});
  }
  train::OptimizerConfig opt;
  opt.kind = "adam";
  opt.clip_norm = 0.1;
  train::Trainer one("cpu", g, params, opt);
  std::vector<double> losses;
  for (const auto& b : batches) losses.push_back(one.step(b, 0.01));
  std::vector<std::vector<train::NamedTensor>> got(4);
  std::vector<std::vector<double>> got_loss(4);
  run_ranks(4, "dpxpp", [&](dist::Communicator& comm) {
    const int r = comm.rank(), copy = r / 2, stage = r % 2;
    auto pipe = comm.split(copy, stage), copies = comm.split(stage, copy);
    train::PipelineTrainer pt("cpu", g, params, opt, {}, *pipe, {train::PipelineScheduleKind::one_f_one_b, 2}, copies.get());
    for (const auto& b : batches) {
      std::vector<Tensor> half;
      for (const Tensor& t : b) half.push_back(t.slice(0, copy * 6, copy * 6 + 6).contiguous());
      got_loss[static_cast<size_t>(r)].push_back(pt.step(half, 0.01));
    }
    got[static_cast<size_t>(r)] = pt.gather_params();
  });
  for (size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(got[r].size(), params.size()) << "rank " << r;
    for (size_t i = 0; i < params.size(); ++i) EXPECT_LT(max_relative(one.params()[i].tensor, got[r][i].tensor), 1e-5) << params[i].name << " on rank " << r;
    for (size_t s = 0; s < losses.size(); ++s) EXPECT_NEAR(got_loss[r][s], losses[s], 1e-5 * std::abs(losses[s])) << "rank " << r;
  }
}

TEST(Communicator, SplitGroupsReduceAmongThemselves) {
  // 4 ranks as 2 groups (a pipeline stage's tensor-parallel ranks): colour rank / 2, keyed in reverse
  std::vector<double> sums(4), ranks(4), sizes(4);
  run_ranks(4, "split", [&](dist::Communicator& comm) {
    const int r = comm.rank();
    auto group = comm.split(r / 2, -r);
    Tensor t = Tensor::from_vector(std::vector<float>{static_cast<float>(r + 1)}, {1});
    group->all_reduce(t, dist::ReduceOp::sum);
    sums[static_cast<size_t>(r)] = t.at_f64(0);
    ranks[static_cast<size_t>(r)] = group->rank();
    sizes[static_cast<size_t>(r)] = group->size();
  });
  EXPECT_EQ(sums, (std::vector<double>{3, 3, 7, 7}));
  EXPECT_EQ(ranks, (std::vector<double>{1, 0, 1, 0}));  // ordered by key: the higher rank first
  EXPECT_EQ(sizes, (std::vector<double>{2, 2, 2, 2}));
}
