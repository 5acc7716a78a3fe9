// Dequantization against an independent implementation of the ggml block formats: the numpy
// script tests/fixtures/formats/gguf_reference.py (its own GGUF reader and writer too).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "formats/gguf.h"
#include "formats/quant.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

const std::string kScript = "tests/fixtures/formats/gguf_reference.py";

// Largest difference in units of the value's magnitude; the two implementations do the same
// float32 operations in the same order, so they agree to rounding (bit-exact without FMA).
void expect_close(const Tensor& got, const Tensor& want, const std::string& what, int* exact, int* total) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    ++*total;
    if (g[i] == w[i]) {
      ++*exact;
      continue;
    }
    ASSERT_LE(std::fabs(g[i] - w[i]), 1e-6 * std::fabs(w[i]) + 1e-30) << what << " element " << i;
  }
}

TEST(Reference, DequantizationMatchesAnIndependentNumpyImplementation) {
  if (!test::have_numpy()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy (make setup installs python3-numpy)";
  std::string dir = test::scratch_dir("ref");
  std::string out;
  ASSERT_EQ(0, test::run_command("/usr/bin/python3 " + test::source_path(kScript) + " make " + dir + " 20261202", &out, true))
      << out;
  GgufFile ref = read_gguf(dir + "/reference.gguf");
  GgufFile expected = read_gguf(dir + "/expected.gguf");
  const char* names[] = {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0",
                         "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "iq4_nl", "iq4_xs", "arange_2x3x4"};
  int exact = 0, total = 0;
  for (const char* n : names) {
    const TensorView* t = ref.find_tensor(n);
    const TensorView* e = expected.find_tensor(n);
    ASSERT_TRUE(t && e) << n;
    expect_close(dequantize(*t), dequantize(*e), n, &exact, &total);
  }
  EXPECT_EQ(ref.find_tensor("arange_2x3x4")->shape, (std::vector<int64_t>{2, 3, 4}));
  std::printf("[reference] %d of %d dequantized values bit-identical to numpy\n", exact, total);

  // The metadata the script wrote, read back value for value.
  std::ifstream mf(dir + "/metadata.json");
  nlohmann::json want = nlohmann::json::parse(mf);
  ASSERT_EQ(ref.metadata.size(), want.size());
  for (const auto& [k, v] : ref.metadata) EXPECT_EQ(v.to_json(), want.at(k)) << k;
}

TEST(Reference, RlxQuantizedFilesDecodeTheSameInNumpy) {
  if (!test::have_numpy()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy (make setup installs python3-numpy)";
  std::mt19937 rng(9);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(4 * 512);
  for (auto& v : x) v = g(rng);
  GgufWriter w;
  w.set("general.architecture", GgufValue("test"));
  for (WeightType t : {WeightType::f32, WeightType::f16, WeightType::bf16, WeightType::q8_0, WeightType::q4_0,
                       WeightType::q4_k, WeightType::q6_k, WeightType::iq4_nl, WeightType::iq4_xs})
    w.add_tensor_f32(weight_type_name(t), {4, 512}, x.data(), t);
  std::string dir = test::scratch_dir("rlx");
  w.write(dir + "/rlx.gguf");
  std::string out;
  ASSERT_EQ(0, test::run_command("/usr/bin/python3 " + test::source_path(kScript) + " dequant " + dir + "/rlx.gguf " +
                                     dir + "/numpy.gguf", &out, true))
      << out;
  GgufFile mine = read_gguf(dir + "/rlx.gguf"), theirs = read_gguf(dir + "/numpy.gguf");
  ASSERT_EQ(mine.tensors.size(), theirs.tensors.size());
  int exact = 0, total = 0;
  for (size_t i = 0; i < mine.tensors.size(); ++i)
    expect_close(dequantize(mine.tensors[i]), dequantize(theirs.tensors[i]), mine.tensors[i].name, &exact, &total);
  std::printf("[reference] RLX-written: %d of %d values bit-identical when numpy decodes them\n", exact, total);
}

}  // namespace
}  // namespace rlx::formats
