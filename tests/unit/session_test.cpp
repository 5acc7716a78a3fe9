#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"

using namespace rlx;

namespace {

Graph scaled_softmax() {
  Graph g("scaled_softmax");
  Value x = g.input("x", DType::f32, {Dim::symbol("B"), Dim::symbol("N")});
  g.set_outputs({softmax(x * 2.0)});
  return g;
}

Tensor iota_tensor(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i));
  return Tensor::from_f64(DType::f32, shape, v);
}

}  // namespace

TEST(Session, SymbolicDimsSpecializePerShape) {
  CompiledModel m = Session("cpu").compile(scaled_softmax());
  for (auto shape : {std::vector<int64_t>{2, 5}, {3, 7}, {2, 5}, {1, 1}}) {
    Tensor out = m.run({iota_tensor(shape)})[0];
    ASSERT_EQ(out.shape(), shape);
    for (int64_t r = 0; r < shape[0]; ++r) {
      double s = 0;
      for (int64_t c = 0; c < shape[1]; ++c) s += out.at_f64(r * shape[1] + c);
      EXPECT_NEAR(s, 1.0, 1e-6);
    }
  }
}

TEST(Session, NamedInputsAndClearErrors) {
  CompiledModel m = Session("cpu").compile(scaled_softmax());
  EXPECT_EQ(m.input_names(), std::vector<std::string>{"x"});
  EXPECT_NO_THROW(m.run_named(std::map<std::string, Tensor>{{"x", iota_tensor({2, 3})}}));
  try {
    m.run({Tensor::zeros(DType::f64, {2, 3})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("input 'x' must be f32, got f64"), std::string::npos) << e.what();
  }
  try {
    m.run({Tensor::zeros(DType::f32, {2, 3, 4})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must have rank 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.run_named(std::map<std::string, Tensor>{{"y", iota_tensor({2, 3})}}), Error);
}

TEST(Session, InconsistentSymbolBindingsAreRejected) {
  Graph g;
  Value a = g.input("a", DType::f32, {Dim::symbol("N")});
  Value b = g.input("b", DType::f32, {Dim::symbol("N")});
  g.set_outputs({a + b});
  CompiledModel m = Session("cpu").compile(g);
  try {
    m.run({Tensor::zeros(DType::f32, {3}), Tensor::zeros(DType::f32, {4})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbol N is already 3"), std::string::npos) << e.what();
  }
}

TEST(Session, UnknownDeviceListsTheKnownOnes) {
  try {
    Session s("tpu9000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reference"), std::string::npos) << e.what();
  }
}

TEST(Session, RunIsThreadSafe) {
  CompiledModel m = Session("cpu").compile(scaled_softmax());
  Tensor in = iota_tensor({4, 33});
  Tensor expected = m.run({in})[0];
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (!m.run({in})[0].bytes_equal(expected)) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Session, NonContiguousInputs) {
  Graph g;
  Value x = g.input("x", DType::f32, {3, 2});
  g.set_outputs({x * 1.0});
  Tensor base = iota_tensor({2, 3});
  Tensor view = base.transpose({1, 0});
  Tensor out = Session("cpu").compile(g).run({view})[0];
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(out.at_f64(r * 2 + c), base.at_f64(c * 3 + r));
}

TEST(Session, RuntimeIndexErrorsAreErrorsNotCrashes) {
  Graph g;
  Value table = g.input("table", DType::f32, {4, 2});
  Value ids = g.input("ids", DType::i64, {3});
  g.set_outputs({embedding(table, ids)});
  for (const char* dev : {"cpu", "reference"}) {
    CompiledModel m = Session(dev).compile(g);
    try {
      m.run({Tensor::zeros(DType::f32, {4, 2}), Tensor::from_vector(std::vector<int64_t>{0, 9, 1}, {3})});
      FAIL() << dev;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_NE(std::string(e.what()).find("index 9 is out of range [0, 4)"), std::string::npos) << e.what();
    }
  }
}

TEST(Session, DonatedStateIsUpdatedInPlace) {
  // A cache updated by a scatter at run-time positions: the KV-cache pattern of decoding.
  Graph g;
  Value cache = g.input("cache", DType::f32, {6, 4});
  Value pos = g.input("pos", DType::i64, {1});
  Value row = g.input("row", DType::f32, {1, 4});
  Value updated = op("scatter", {cache, pos, row}, "axis=0")[0];
  g.set_outputs({updated, reduce_sum(updated, {0, 1})});
  g.donate(0, 0);
  for (const char* dev : {"cpu", "reference"}) {
    CompiledModel m = Session(dev).compile(g);
    EXPECT_NE(m.lir_text({}).find("@input[0]"), std::string::npos) << dev << " did not plan the scatter in place:\n" << m.lir_text({});
    Tensor state = Tensor::zeros(DType::f32, {6, 4});
    void* before = state.data();
    std::vector<Tensor> outs = {state};
    for (int64_t p = 0; p < 6; ++p) {
      Tensor r = Tensor::from_f64(DType::f32, {1, 4}, {1.0 * p, 2.0, 3.0, 4.0});
      m.run_into({state, Tensor::from_vector(std::vector<int64_t>{p}, {1}), r}, outs);
      ASSERT_EQ(outs[0].data(), before);
    }
    for (int64_t p = 0; p < 6; ++p) EXPECT_EQ(state.at_f64(p * 4), static_cast<double>(p)) << dev;
    EXPECT_EQ(outs[1].at_f64(0), 15.0 + 6 * 9.0) << dev;
  }
}

// Device memory (what DLPack brings from a CUDA tensor) is never read as host memory: host
// accessors and host devices refuse it with an error naming where it lives. (The cuda device's
// own use of it — kernels reading it in place — is checked on a GPU by python/tests/test_cuda.py.)
TEST(Session, DeviceMemoryIsRefusedWhereHostMemoryIsNeeded) {
  float fake_device_word = 0;  // never dereferenced: the tensor only carries the address
  Tensor t = Tensor::wrap_device(DType::f32, {1}, &fake_device_word, "cuda:0", nullptr);
  EXPECT_FALSE(t.on_host());
  EXPECT_EQ(t.device(), "cuda:0");
  EXPECT_EQ(t.device_data(), &fake_device_word);
  EXPECT_EQ(t.str(), "f32[1] (cuda:0 memory)");
  try {
    t.data();
    ADD_FAILURE() << "host access to device memory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0 memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.at_f64(0), Error);
  EXPECT_TRUE(t.reshape({1, 1}).device() == "cuda:0");  // views keep the device
  EXPECT_THROW(Tensor::wrap_device(DType::f32, {1}, &fake_device_word, "cpu", nullptr), Error);
  EXPECT_TRUE(Tensor::zeros(DType::f32, {2}).on_host());

  Graph g("relu");
  g.set_outputs({relu(g.input("x", DType::f32, {1}))});
  CompiledModel m = Session("cpu").compile(g);
  try {
    m.run({t});
    ADD_FAILURE() << "the cpu device ran on device memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("is in cuda:0 memory"), std::string::npos) << e.what();
  }
}

// A greedy step's argmax over a long f32 row (the cpu device's vectorized path): the first of
// equal maxima wins, and a NaN beats every number (the first NaN) — the reference's order.
TEST(Session, ArgmaxOfALongRowTakesTheFirstMaximumOrTheFirstNaN) {
  Graph g("argmax");
  Value x = g.input("x", DType::f32, {3, 50000});
  g.set_outputs({argmax(x, 1)});
  std::vector<double> v(3 * 50000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 97) - 40.0;  // ties of 56 everywhere
  v[50000 + 30000] = 1e9;                                                         // row 1: one maximum
  v[100000 + 40000] = std::nan(""), v[100000 + 45000] = std::nan(""), v[100000 + 10] = 1e30;  // row 2: NaNs
  Tensor in = Tensor::from_f64(DType::f32, {3, 50000}, v);
  for (const char* device : {"cpu", "reference"}) {
    Tensor out = Session(device).compile(g).run({in})[0];
    EXPECT_EQ(out.at_f64(0), 96) << device;  // the first 56 (96 % 97 − 40)
    EXPECT_EQ(out.at_f64(1), 30000) << device;
    EXPECT_EQ(out.at_f64(2), 40000) << device;
  }
}
