// The FPGA generator (src/codegen/fpga): what it plans for a part — the parallelism of each layer
// within the part's multipliers, weights in block RAM or SPRAM — and what it refuses, naming the
// layer: a model too large for the part, and steps it has no hardware for. (tests/cli/fpga.sh runs
// the generated hardware in Verilator and takes it to a bitstream.)
#include <gtest/gtest.h>

#include <random>

#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;
using ir::Op;
using ir::ValueId;

namespace {

// x f32[1, sizes[0]] → quantize → integer layers sizes[i] → sizes[i+1] (ReLU between) → dequantize.
ir::Graph int8_mlp(const std::vector<int64_t>& sizes) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> wd(-127, 127);
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(1), Dim(sizes[0])}}, "x");
  ValueId zp = b.constant(Tensor::from_f64(DType::i8, {}, {-3}));
  ValueId h = b.emit1(Op::quantize_linear, {x, b.scalar(DType::f32, 0.05), zp});
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    std::vector<double> w(static_cast<size_t>(sizes[i] * sizes[i + 1]));
    for (double& v : w) v = wd(rng);
    b.set_context("fc" + std::to_string(i + 1), "hir.linear");
    ValueId acc = b.emit1(Op::dot_general, {h, b.constant(Tensor::from_f64(DType::i8, {sizes[i + 1], sizes[i]}, w))},
                          ir::Attrs{{"batch", ir::Intss{{}, {}}}, {"contract", ir::Intss{{1}, {1}}}, {"out", DType::i32}});
    const bool last = i + 2 == sizes.size();
    h = b.emit1(Op::requantize, {acc, b.constant(Tensor::from_f64(DType::i32, {}, {1 << 30})), b.constant(Tensor::from_f64(DType::i32, {}, {44}))},
                ir::Attrs{{"zero_point", int64_t{-3}}, {"lo", last ? int64_t{-128} : int64_t{-3}}});
  }
  g.set_outputs({b.emit1(Op::dequantize_linear, {h, b.scalar(DType::f32, 0.1), zp})});
  return g;
}

std::map<std::string, std::string> emit(const ir::Graph& g, const std::string& device) {
  SessionOptions o;
  o.compile_only = true;
  return Session(device, o).compile(Graph(std::make_shared<ir::Graph>(g))).emit_source({});
}

std::string error_of(const ir::Graph& g, const std::string& device) {
  try {
    emit(g, device);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Fpga, PlansTheParallelismWithinTheMultipliersAndLoadsLargeWeightsIntoSpram) {
  auto files = emit(int8_mlp({784, 64, 10}), "fpga:ice40-up5k");
  for (const char* f : {"model.sv", "rlx_fpga.sv", "tb.cpp", "Makefile", "model_io.h", "report.sh", "l0_q.hex", "l1_q.hex", "l1_w.hex", "cfg.bin"})
    EXPECT_TRUE(files.count(f)) << f << " was not written";
  const std::string& json = files.at("model.json");
  // 784·64 bytes do not fit the UP5K's block RAM: SPRAM, loaded through the cfg stream
  EXPECT_NE(json.find("\"in\":784,\"out\":64,\"parallel\":4,\"weights\":\"spram\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"in\":64,\"out\":10,\"parallel\":4,\"weights\":\"rom\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"multipliers\":8"), std::string::npos) << json;
  EXPECT_EQ(files.at("cfg.bin").size(), 784u * 64u);
  EXPECT_EQ(files.count("l0_w.hex"), 0u) << "SPRAM weights have no ROM file";
  // the generic part has no SPRAM and no multiplier limit: wider arrays, every weight a ROM
  auto generic = emit(int8_mlp({256, 64, 10}), "fpga:generic");
  EXPECT_NE(generic.at("model.json").find("\"in\":64,\"out\":10,\"parallel\":16,\"weights\":\"rom\""), std::string::npos) << generic.at("model.json");
  EXPECT_NE(generic.at("model.json").find("\"architecture\":\"mac-arrays\""), std::string::npos) << generic.at("model.json");
  EXPECT_EQ(generic.count("cfg.bin"), 0u);
}

// A network of at most 16,384 products (the jet tagger's shape) gets the fully parallel datapath
// on the generic part: a module per neuron, weights in the logic as shifted adds (no multiply
// operator, no weight files), five registered stages a layer (the argmax follows beside the stream).
TEST(Fpga, SmallNetworksGetTheFullyParallelDatapath) {
  auto files = emit(int8_mlp({16, 64, 32, 32, 5}), "fpga:generic");
  const std::string& json = files.at("model.json");
  EXPECT_NE(json.find("\"architecture\":\"fully-parallel\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"pipeline_cycles\":20"), std::string::npos) << json;
  for (const auto& [name, text] : files) EXPECT_EQ(name.find(".hex"), std::string::npos) << name << ": weights live in the logic";
  const std::string& sv = files.at("model.sv");
  EXPECT_NE(sv.find("module rlx_l1_n31 "), std::string::npos);
  EXPECT_EQ(sv.find("module rlx_l1_n32 "), std::string::npos);
  EXPECT_NE(sv.find("module rlx_argmax"), std::string::npos);
  EXPECT_EQ(sv.find(" * "), std::string::npos) << "a multiply operator: constant products should be shifted adds";
  EXPECT_NE(files.at("Makefile").find("TIMING_TOP = rlx_timing_sample"), std::string::npos);
  EXPECT_NE(sv.find("module rlx_timing_sample"), std::string::npos);
  // the UP5K builds no fully parallel datapath (it has 5,280 LUTs): the same network as MAC arrays
  EXPECT_NE(emit(int8_mlp({16, 64, 32, 32, 5}), "fpga:ice40-up5k").at("model.json").find("\"architecture\":\"mac-arrays\""), std::string::npos);
}

TEST(Fpga, ThreeLayersShareTheUp5kMultipliers) {
  auto files = emit(int8_mlp({64, 32, 32, 8}), "fpga:ice40-up5k");
  const std::string& json = files.at("model.json");
  // 4 + 4 + 4 is more than its 8 SB_MAC16: the layers with the fewest products are halved, 4 + 2 + 1
  EXPECT_NE(json.find("\"multipliers\":7"), std::string::npos) << json;
}

TEST(Fpga, RefusesAModelTooLargeForThePartNamingTheLayer) {
  const std::string e = error_of(int8_mlp({4096, 128, 10}), "fpga:ice40-up5k");
  EXPECT_NE(e.find("does not fit the ice40-up5k"), std::string::npos) << e;
  EXPECT_NE(e.find("fc1"), std::string::npos) << e;
}

TEST(Fpga, RefusesStepsItHasNoHardwareFor) {
  // an integer convolution of two images at once: the hardware takes one input at a time
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::i8, {Dim(2), Dim(1), Dim(6), Dim(6)}}, "x");
  b.set_context("conv1", "hir.conv2d");
  ValueId acc = b.emit1(Op::conv, {x, b.constant(Tensor::from_f64(DType::i8, {2, 1, 3, 3}, std::vector<double>(18, 1)))},
                        ir::Attrs{{"strides", ir::Ints{1, 1}}, {"padding", ir::Intss{{0, 0}, {0, 0}}}, {"dilation", ir::Ints{1, 1}}, {"groups", int64_t{1}}, {"out", DType::i32}});
  g.set_outputs({b.emit1(Op::requantize, {acc, b.constant(Tensor::from_f64(DType::i32, {}, {1 << 30})), b.constant(Tensor::from_f64(DType::i32, {}, {36}))},
                         ir::Attrs{{"zero_point", int64_t{0}}})});
  const std::string e = error_of(g, "fpga:ice40-up5k");
  EXPECT_NE(e.find("conv1"), std::string::npos) << e;
  EXPECT_NE(e.find("2 images"), std::string::npos) << e;
}
