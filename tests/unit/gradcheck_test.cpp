// Gradient checks: for every differentiable op, the autodiff gradient of a random projection
// of its outputs against central finite differences, in f64 on the reference backend.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/op_cases.h"
#include "ops/builder.h"
#include "ops/rules.h"
#include "passes/autodiff.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "runtime/collective.h"
#include "util/scalar.h"

using namespace rlx;
using ir::ValueId;

namespace {

bool differentiable(ir::Op op) {
  const auto& r = ops::op_rule(op);
  // fake_quant's gradient is a chosen surrogate (straight-through, LSQ), not the derivative of a
  // staircase: quant_linear_test checks it against its formula instead
  return !r.no_gradient && (r.vjp || r.decompose) && op != ir::Op::fake_quant;
}

// The rasterizer's cut-offs (α below 1/255, the transmittance floor, the footprint box) make
// its loss piecewise smooth.
bool splat(ir::Op op) { return op == ir::Op::splat_rasterize || op == ir::Op::splat_project; }

// f64 and c128 cases: a complex value's gradient is ∂L/∂re + i·∂L/∂im, probed part by part.
bool checked_dtype(DType d) { return d == DType::f64 || d == DType::c128; }

// loss = Σ_k Σ_i out_k[i] · r_k[i] over the float outputs of the case's graph (Re and Im of
// complex outputs with a weight each).
ir::Graph with_loss(const ir::Graph& g, std::mt19937& rng) {
  ir::Graph l = g;
  ops::Builder b(l);
  ValueId total = ir::kNoValue;
  auto term = [&](ValueId o) {
    std::vector<int64_t> shape = shape_values(l.type(o).shape);
    int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<double> r(static_cast<size_t>(n));
    std::normal_distribution<double> dist;
    for (auto& v : r) v = dist(rng);
    ValueId w = b.constant(Tensor::from_f64(l.type(o).dtype, shape, r));
    ir::Ints axes;
    for (size_t i = 0; i < shape.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    ValueId s = b.reduce(b.mul(o, w), "sum", axes, false);
    total = total == ir::kNoValue ? s : b.add(total, s);
  };
  for (ValueId o : g.outputs()) {
    if (is_float(l.type(o).dtype)) term(o);
    if (is_complex(l.type(o).dtype)) {
      term(b.unary(ir::Op::real, o));
      term(b.unary(ir::Op::imag, o));
    }
  }
  l.set_outputs({total});
  return l;
}

double loss_of(const CompiledModel& m, const std::vector<Tensor>& in) { return m.run(in)[0].at_f64(0); }

}  // namespace

class GradCheck : public ::testing::TestWithParam<int> {};

// Collectives' gradient rules (hir.replicated's all_reduce) run as a job of one rank here.
struct OneRankJob {
  runtime::SingleRankGroup group;
  OneRankJob() { runtime::set_collective_group(&group); }
  ~OneRankJob() { runtime::set_collective_group(nullptr); }
};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  OneRankJob one_rank;
  auto op = static_cast<ir::Op>(GetParam());
  std::mt19937 rng(5);
  int checked = 0;
  for (auto& c : rlx::testing::op_cases(op, 4)) {
    if (!checked_dtype(c.dtype)) continue;
    // Finite differences need every float output in f64 too (casts to f32 would drown them).
    bool float_out = false, all_f64 = true;
    for (ValueId o : c.graph.outputs()) {
      DType d = c.graph.type(o).dtype;
      bool inexact = is_float(d) || is_complex(d);
      float_out = float_out || inexact;
      all_f64 = all_f64 && (!inexact || checked_dtype(d));
    }
    if (!float_out || !all_f64) continue;
    ir::Graph lg = with_loss(c.graph, rng);
    std::vector<ValueId> wrt;
    for (ValueId v : lg.inputs())
      if (is_float(lg.type(v).dtype) || is_complex(lg.type(v).dtype)) wrt.push_back(v);
    if (wrt.empty()) continue;
    ir::Graph gg = rlx::passes::value_and_grad(lg, 0, wrt);
    Session ref("reference");
    CompiledModel fwd = ref.compile(Graph(std::make_shared<ir::Graph>(lg)));
    CompiledModel grad = ref.compile(Graph(std::make_shared<ir::Graph>(gg)));
    std::vector<Tensor> in;
    for (const auto& t : c.inputs) in.push_back(t.clone());
    std::vector<Tensor> res = grad.run(in);
    ASSERT_NEAR(res[0].at_f64(0), loss_of(fwd, in), 1e-9 * (1 + std::fabs(res[0].at_f64(0)))) << c.name;
    for (size_t k = 0; k < wrt.size(); ++k) {
      size_t input_index = static_cast<size_t>(lg.value(wrt[k]).index);
      Tensor analytic = res[1 + k].contiguous();
      bool cplx = is_complex(in[input_index].dtype());
      int64_t n = in[input_index].numel() * (cplx ? 2 : 1);  // the doubles to probe: parts of complex ones
      int rough = 0;
      for (int probe = 0; probe < 8 && probe < n; ++probe) {
        int64_t i = static_cast<int64_t>(rng() % static_cast<uint32_t>(n));
        double* p = static_cast<double*>(in[input_index].data()) + i;
        double x0 = *p;
        auto central = [&](double eps) {
          *p = x0 + eps;
          double up = loss_of(fwd, in);
          *p = x0 - eps;
          double down = loss_of(fwd, in);
          *p = x0;
          return (up - down) / (2 * eps);
        };
        double eps = 1e-6 * std::max(1.0, std::fabs(x0)), numeric = central(eps);
        // A loss with cut-offs (a splat's α below 1/255) has steps: a difference across one grows
        // as 1/eps, where a derivative's does not. Such a probe says nothing; too many is a failure.
        if (splat(op) && std::fabs(central(eps / 4) - numeric) > 1e-4 * (1 + std::fabs(numeric))) {
          EXPECT_LT(++rough, 3) << c.name << ": the loss is not smooth around most probes of in" << input_index;
          continue;
        }
        double got = cplx ? (i % 2 ? load_c128(analytic.data(), analytic.dtype(), i / 2).imag() : load_c128(analytic.data(), analytic.dtype(), i / 2).real())
                          : analytic.at_f64(i);
        EXPECT_NEAR(got, numeric, 1e-5 * (1 + std::fabs(numeric))) << c.name << ": d loss / d in" << input_index << "[" << i << "]";
        ++checked;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << ir::op_keyword(op) << " has no f64 case with float inputs";
}

std::vector<int> differentiable_ops() {
  std::vector<int> out;
  for (int i = 0; i < ir::kNumOps; ++i)
    if (differentiable(static_cast<ir::Op>(i))) out.push_back(i);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, GradCheck, ::testing::ValuesIn(differentiable_ops()),
                         [](const ::testing::TestParamInfo<int>& info) { return std::string(ir::op_name(static_cast<ir::Op>(info.param))); });

TEST(Autodiff, NonDifferentiableOpsAreNamed) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f64, {Dim(5)}}, "x");
  auto sorted = b.emit(ir::Op::sort, {x});
  g.set_outputs({b.reduce(sorted[0], "sum", {0}, false)});
  try {
    rlx::passes::value_and_grad(g, 0, {x});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mir.sort"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not differentiable"), std::string::npos) << e.what();
  }
}

// The conv gradient is itself built from convolutions (flipped kernels, swapped roles,
// crops for negative pads): check every element of dx and dw on the small conv cases.
TEST(GradCheckConv, EveryElementMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  int checked = 0;
  for (auto& c : rlx::testing::op_cases(ir::Op::conv, 4)) {
    if (c.dtype != DType::f64 || c.inputs[0].numel() > 800 || c.inputs[1].numel() > 800) continue;
    ir::Graph lg = with_loss(c.graph, rng);
    std::vector<ValueId> wrt = lg.inputs();
    ir::Graph gg = rlx::passes::value_and_grad(lg, 0, wrt);
    Session ref("reference");
    CompiledModel fwd = ref.compile(Graph(std::make_shared<ir::Graph>(lg)));
    CompiledModel grad = ref.compile(Graph(std::make_shared<ir::Graph>(gg)));
    std::vector<Tensor> in;
    for (const auto& t : c.inputs) in.push_back(t.clone());
    std::vector<Tensor> res = grad.run(in);
    for (size_t k = 0; k < wrt.size(); ++k) {
      for (int64_t i = 0; i < in[k].numel(); ++i) {
        double* p = in[k].data_as<double>() + i;
        double x0 = *p;
        *p = x0 + 1e-6;
        double up = loss_of(fwd, in);
        *p = x0 - 1e-6;
        double down = loss_of(fwd, in);
        *p = x0;
        double numeric = (up - down) / 2e-6;
        ASSERT_NEAR(res[1 + k].at_f64(i), numeric, 1e-5 * (1 + std::fabs(numeric))) << c.name << ": d loss / d in" << k << "[" << i << "]";
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}
