// Dense linear algebra: the reference backend's factorizations (the oracle test_backend_ops judges
// the cpu device's LAPACK path by) checked against their defining properties, hand-computed
// values, and the errors a singular or indefinite matrix must give on every device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"

using namespace rlx;

namespace {

Tensor random_matrix(int64_t m, int64_t n, uint32_t seed, double diagonal = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<size_t>(m * n));
  for (auto& x : v) x = normal(rng);
  for (int64_t i = 0; i < std::min(m, n); ++i) v[static_cast<size_t>(i * n + i)] += diagonal;
  return Tensor::from_f64(DType::f64, {m, n}, v);
}

double at(const Tensor& t, int64_t i, int64_t j) { return t.at_f64(i * t.shape().back() + j); }

// max |A − B| over the matrices (B given as a function of the indices).
template <class F>
double max_diff(const Tensor& a, F b) {
  double worst = 0;
  for (int64_t i = 0; i < a.shape()[0]; ++i)
    for (int64_t j = 0; j < a.shape()[1]; ++j) worst = std::max(worst, std::fabs(at(a, i, j) - b(i, j)));
  return worst;
}

std::vector<Tensor> run_op(const std::string& device, const std::string& name, const std::vector<Tensor>& in) {
  Graph g(name);
  std::vector<Value> args;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<Dim> shape;
    for (int64_t d : in[i].shape()) shape.push_back(Dim(d));
    args.push_back(g.input("in" + std::to_string(i), in[i].dtype(), shape));
  }
  g.set_outputs(op(name, args));
  return Session(device).compile(g).run(in);
}

const char* kDevices[] = {"reference", "cpu"};

}  // namespace

TEST(Linalg, QrIsOrthogonalTimesUpperWithPositiveDiagonal) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{7, 4}, {4, 4}, {3, 6}}) {
    Tensor a = random_matrix(m, n, 1);
    for (const char* dev : kDevices) {
      auto out = run_op(dev, "qr", {a});
      const Tensor &q = out[0], &r = out[1];
      int64_t k = std::min(m, n);
      EXPECT_LT(max_diff(a, [&](int64_t i, int64_t j) {
                  double s = 0;
                  for (int64_t p = 0; p < k; ++p) s += at(q, i, p) * at(r, p, j);
                  return s;
                }), 1e-12) << dev << " Q R = A";
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_GE(at(r, i, i), 0) << dev;
        for (int64_t j = 0; j < i; ++j) EXPECT_EQ(at(r, i, j), 0) << dev << " R is upper triangular";
        for (int64_t j = 0; j < k; ++j) {
          double s = 0;
          for (int64_t p = 0; p < m; ++p) s += at(q, p, i) * at(q, p, j);
          EXPECT_NEAR(s, i == j ? 1 : 0, 1e-12) << dev << " QᵀQ = I";
        }
      }
    }
  }
}

TEST(Linalg, EighAndSvdReconstructTheirMatrix) {
  Tensor a = random_matrix(6, 6, 2), b = random_matrix(6, 4, 3);
  for (const char* dev : kDevices) {
    auto e = run_op(dev, "eigh", {a});
    const Tensor &w = e[0], &v = e[1];
    for (int64_t i = 1; i < 6; ++i) EXPECT_LT(w.at_f64(i - 1), w.at_f64(i)) << dev << " ascending";
    // V diag(w) Vᵀ is the symmetric matrix read from a's lower triangle
    EXPECT_LT(max_diff(a, [&](int64_t i, int64_t j) {
                if (i < j) return at(a, i, j);  // the upper triangle is never read
                double s = 0;
                for (int64_t p = 0; p < 6; ++p) s += at(v, i, p) * w.at_f64(p) * at(v, j, p);
                return s;
              }), 1e-12) << dev;
    auto s = run_op(dev, "svd", {b});
    for (int64_t i = 1; i < 4; ++i) EXPECT_GT(s[1].at_f64(i - 1), s[1].at_f64(i)) << dev << " descending";
    EXPECT_LT(max_diff(b, [&](int64_t i, int64_t j) {
                double t = 0;
                for (int64_t p = 0; p < 4; ++p) t += at(s[0], i, p) * s[1].at_f64(p) * at(s[2], p, j);
                return t;
              }), 1e-12) << dev;
  }
}

TEST(Linalg, HandComputedValues) {
  Tensor a = Tensor::from_f64(DType::f64, {2, 2}, {4, 2, 2, 3});  // det 8, inverse [[3, −2], [−2, 4]] / 8
  Tensor rhs = Tensor::from_f64(DType::f64, {2, 1}, {2, 1});        // x = (0.5, 0)
  for (const char* dev : kDevices) {
    EXPECT_NEAR(run_op(dev, "det", {a})[0].at_f64(0), 8, 1e-14) << dev;
    auto sl = run_op(dev, "slogdet", {a});
    EXPECT_EQ(sl[0].at_f64(0), 1) << dev;
    EXPECT_NEAR(sl[1].at_f64(0), std::log(8.0), 1e-14) << dev;
    Tensor inv = run_op(dev, "inv", {a})[0];
    EXPECT_NEAR(at(inv, 0, 0), 3.0 / 8, 1e-15) << dev;
    EXPECT_NEAR(at(inv, 0, 1), -2.0 / 8, 1e-15) << dev;
    Tensor x = run_op(dev, "solve", {a, rhs})[0];
    EXPECT_NEAR(x.at_f64(0), 0.5, 1e-15) << dev;
    EXPECT_NEAR(x.at_f64(1), 0, 1e-15) << dev;
    Tensor l = run_op(dev, "cholesky", {a})[0];  // [[2, 0], [1, √2]]
    EXPECT_NEAR(at(l, 0, 0), 2, 1e-15) << dev;
    EXPECT_NEAR(at(l, 1, 0), 1, 1e-15) << dev;
    EXPECT_NEAR(at(l, 1, 1), std::sqrt(2.0), 1e-15) << dev;
    EXPECT_EQ(at(l, 0, 1), 0) << dev;
    // exp([[0, 1], [−1, 0]]) is the rotation by one radian
    Tensor e = run_op(dev, "matrix_exp", {Tensor::from_f64(DType::f64, {2, 2}, {0, 1, -1, 0})})[0];
    EXPECT_NEAR(at(e, 0, 0), std::cos(1.0), 1e-14) << dev;
    EXPECT_NEAR(at(e, 0, 1), std::sin(1.0), 1e-14) << dev;
    // the least-squares line through (0, 1), (1, 3), (2, 4): y = 1.1667 + 1.5 t
    Tensor design = Tensor::from_f64(DType::f64, {3, 2}, {1, 0, 1, 1, 1, 2});
    Tensor ys = Tensor::from_f64(DType::f64, {3, 1}, {1, 3, 4});
    Tensor fit = run_op(dev, "lstsq", {design, ys})[0];
    EXPECT_NEAR(fit.at_f64(0), 7.0 / 6, 1e-14) << dev;
    EXPECT_NEAR(fit.at_f64(1), 1.5, 1e-14) << dev;
  }
}

TEST(Linalg, LuPermutesRowsByLargestPivot) {
  Tensor a = Tensor::from_f64(DType::f64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 10});
  for (const char* dev : kDevices) {
    auto out = run_op(dev, "lu", {a});
    EXPECT_EQ(out[1].dtype(), DType::i32);
    EXPECT_EQ(out[1].at_f64(0), 2) << dev << " row 2 holds the largest first entry";
    EXPECT_EQ(out[2].at_f64(0), 2) << dev;
    // L U = P A
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double s = 0;
        for (int64_t p = 0; p <= std::min(i, j); ++p) s += (p == i ? 1.0 : at(out[0], i, p)) * at(out[0], p, j);
        EXPECT_NEAR(s, at(a, static_cast<int64_t>(out[2].at_f64(i)), j), 1e-13) << dev << " (L U)[" << i << "][" << j << "]";
      }
  }
}

TEST(Linalg, SingularAndIndefiniteMatricesAreNamedErrors) {
  Tensor singular = Tensor::from_f64(DType::f64, {2, 2}, {1, 2, 2, 4});
  Tensor rhs = Tensor::from_f64(DType::f64, {2, 1}, {1, 1});
  for (const char* dev : kDevices) {
    auto sl = run_op(dev, "slogdet", {singular});
    EXPECT_EQ(sl[0].at_f64(0), 0) << dev;
    EXPECT_TRUE(std::isinf(sl[1].at_f64(0)) && sl[1].at_f64(0) < 0) << dev;
    for (const char* name : {"solve", "inv", "cholesky"}) {
      try {
        run_op(dev, name, std::string(name) == "solve" ? std::vector<Tensor>{singular, rhs} : std::vector<Tensor>{singular});
        ADD_FAILURE() << dev << " " << name << " of a singular matrix did not fail";
      } catch (const Error& e) {
        std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::runtime) << what;
        EXPECT_NE(what.find(std::string(name) == "cholesky" ? "not positive definite" : "singular"), std::string::npos) << dev << ": " << what;
        EXPECT_NE(what.find("matrix 0 of the batch"), std::string::npos) << what;
      }
    }
  }
}

TEST(Linalg, TypeErrorsSayWhatIsWrong) {
  Graph g("bad");
  Value x = g.input("x", DType::f64, {Dim(3), Dim(4)});
  Value h = g.input("h", DType::f16, {Dim(3), Dim(3)});
  EXPECT_THROW(
      {
        try {
          op("cholesky", {x});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("must be square"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          op("inv", {h});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("f32 or f64"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  Value wide = g.input("w", DType::f64, {Dim(2), Dim(5)});
  Value b = g.input("b", DType::f64, {Dim(2), Dim(1)});
  EXPECT_THROW(op("lstsq", {wide, b}), Error);
}
