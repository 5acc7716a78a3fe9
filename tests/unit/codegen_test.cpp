// src/codegen: every elementwise op has a definition, and what the printers make of it means
// the same as what the host evaluates — the C99 dialect's output compiled by the system C
// compiler and run on sample operands, against codegen::eval_scalar.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "codegen/dialect_c.h"
#include "codegen/host_math.h"
#include "codegen/reduce.h"
#include "ir/op.h"
#include "rlx/error.h"
#include "util/strings.h"

using namespace rlx;
using codegen::ValueClass;
using ir::Op;

namespace {

std::vector<Op> scalar_ops() {
  std::vector<Op> out;
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    if (codegen::is_elementwise(op) && op != Op::cast) out.push_back(op);
  }
  return out;
}

const std::vector<double> kFloats = {-3.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.5, 7.0, NAN, INFINITY};
const std::vector<long long> kInts = {-7, -2, -1, 0, 1, 2, 3, 9, -9223372036854775807LL - 1};

// Operand tuples for an op of arity n from a sample set.
template <class T>
std::vector<std::vector<T>> tuples(const std::vector<T>& s, int n) {
  std::vector<std::vector<T>> out;
  for (T a : s) {
    if (n == 1) out.push_back({a});
    else
      for (T b : s) {
        if (n == 2) out.push_back({a, b});
        else out.push_back({a != T(0) ? T(1) : T(0), b, a});  // select: a condition, two values
      }
  }
  return out;
}

std::string c_double(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // -0 must stay a float
  return s;
}

}  // namespace

TEST(Codegen, EveryElementwiseOpHasAFloatDefinition) {
  for (Op op : scalar_ops()) EXPECT_TRUE(codegen::defines(ValueClass::floating, op)) << ir::op_keyword(op) << " has no scalar definition in src/codegen/scalar.h";
}

TEST(Codegen, IntegerClassCoversTheIntegerOps) {
  for (Op op : {Op::neg, Op::abs, Op::sign, Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::pow, Op::max, Op::min, Op::logical_and, Op::eq, Op::lt, Op::select})
    EXPECT_TRUE(codegen::defines(ValueClass::integer, op)) << ir::op_keyword(op);
  for (Op op : {Op::exp, Op::erf, Op::gelu, Op::sigmoid}) EXPECT_FALSE(codegen::defines(ValueClass::integer, op)) << ir::op_keyword(op);
}

TEST(Codegen, PrinterRefusesWhatAClassDoesNotDefine) {
  EXPECT_THROW(codegen::print_scalar(codegen::c99(), ValueClass::integer, Op::exp, {"a"}), Error);
  EXPECT_THROW(codegen::print_scalar(codegen::c99(), ValueClass::floating, Op::add, {"a"}), Error);
  EXPECT_THROW(codegen::print_scalar(codegen::c99(), ValueClass::floating, Op::cast, {"a"}), Error);
}

TEST(Codegen, IntegerDivisionNeverTraps) {
  long long min = std::numeric_limits<long long>::min();
  EXPECT_EQ(codegen::eval_scalar<long long>(Op::div, 7, 0), 0);
  EXPECT_EQ(codegen::eval_scalar<long long>(Op::div, min, -1), min);  // wraps, as −x does
  EXPECT_EQ(codegen::eval_scalar<long long>(Op::rem, min, -1), 0);
  EXPECT_EQ(codegen::eval_scalar<long long>(Op::div, -7, 2), -3);
  EXPECT_EQ(codegen::eval_scalar<int8_t>(Op::pow, int8_t{3}, int8_t{5}), static_cast<int8_t>(243));
  EXPECT_EQ(codegen::eval_scalar<long long>(Op::pow, -1, -3), -1);
}

// The C99 printer's expressions, compiled and run, against the host machine.
TEST(Codegen, PrintedCMatchesTheHostEvaluation) {
  if (std::system("cc --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no C compiler (cc) to build the printed code";
  std::ostringstream src;
  src << "#include <math.h>\n#include <stdio.h>\n" << codegen::c99().prelude();
  struct Case {
    Op op;
    ValueClass cls;
    std::vector<double> f;
    std::vector<long long> i;
  };
  std::vector<Case> cases;
  for (Op op : scalar_ops()) {
    int n = codegen::arity(op);
    std::vector<std::string> names = {"a", "b", "c"};
    names.resize(static_cast<size_t>(n));
    for (ValueClass cls : {ValueClass::floating, ValueClass::integer}) {
      if (!codegen::defines(cls, op)) continue;
      bool fl = cls == ValueClass::floating;
      std::string t = fl ? "float" : "long long";
      src << "static " << t << " f_" << ir::op_name(op) << (fl ? "_f" : "_i") << "(" << t << " a, " << t << " b, " << t << " c) { (void)b; (void)c; return "
          << codegen::print_scalar(codegen::c99(), cls, op, names) << "; }\n";
      if (fl)
        for (auto& v : tuples(kFloats, n)) cases.push_back({op, cls, v, {}});
      else
        for (auto& v : tuples(kInts, n)) cases.push_back({op, cls, {}, v});
    }
  }
  src << "int main(void) {\n";
  for (const Case& c : cases) {
    bool fl = c.cls == ValueClass::floating;
    std::string args;
    for (size_t k = 0; k < 3; ++k) {
      if (k) args += ", ";
      if (fl) args += k < c.f.size() ? cat("(float)", c_double(c.f[k])) : "0.0f";
      else args += k < c.i.size() ? cat("(", c.i[k], "LL)") : "0LL";
    }
    std::string fn = cat("f_", ir::op_name(c.op), fl ? "_f" : "_i");
    if (fl) src << "  printf(\"%.9g\\n\", (double)" << fn << "(" << args << "));\n";
    else src << "  printf(\"%lld\\n\", " << fn << "(" << args << "));\n";
  }
  src << "  return 0;\n}\n";

  auto dir = std::filesystem::temp_directory_path() / cat("rlx_codegen_test_", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "printed.c") << src.str();
  std::string cmd = cat("cc -std=c99 -O1 -fno-fast-math -o ", (dir / "printed").string(), " ", (dir / "printed.c").string(), " -lm 2>",
                        (dir / "cc.log").string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the printed C does not compile; see " << dir;
  ASSERT_EQ(std::system(cat((dir / "printed").string(), " > ", (dir / "out.txt").string()).c_str()), 0);
  std::ifstream out(dir / "out.txt");
  for (const Case& c : cases) {
    std::string line;
    ASSERT_TRUE(std::getline(out, line)) << "the printed program stopped early";
    std::string what = cat(ir::op_keyword(c.op), c.cls == ValueClass::floating ? " (float)" : " (int)");
    if (c.cls == ValueClass::integer) {
      long long want = codegen::eval_scalar<long long>(c.op, c.i[0], c.i.size() > 1 ? c.i[1] : 0, c.i.size() > 2 ? c.i[2] : 0);
      EXPECT_EQ(std::stoll(line), want) << what << " at " << c.i[0] << (c.i.size() > 1 ? cat(", ", c.i[1]) : "");
      continue;
    }
    float a = static_cast<float>(c.f[0]), b = c.f.size() > 1 ? static_cast<float>(c.f[1]) : 0.0f, cc = c.f.size() > 2 ? static_cast<float>(c.f[2]) : 0.0f;
    double want = codegen::eval_scalar<float>(c.op, a, b, cc);
    double got = std::strtod(line.c_str(), nullptr);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << what << " at " << a << ", " << b << ": printed " << line << ", host NaN";
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << what << " at " << a << ", " << b;
    } else {
      EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << what << " at " << a << ", " << b;  // libm vs vmath ulps
    }
  }
  std::filesystem::remove_all(dir);
}

// codegen/reduce.h: the extremum order (a NaN wins, the first one among NaNs and equals) and
// each kind's fold op.
TEST(Codegen, ReductionOrderAndFolds) {
  codegen::HostFloat<double> m;
  EXPECT_TRUE(codegen::wins(m, true, 1.0, 5, 0.0, -1));    // nothing kept yet
  EXPECT_TRUE(codegen::wins(m, true, 2.0, 5, 1.0, 2));
  EXPECT_FALSE(codegen::wins(m, true, 2.0, 5, 2.0, 2));   // a tie keeps the lower index
  EXPECT_TRUE(codegen::wins(m, true, 2.0, 1, 2.0, 2));
  EXPECT_TRUE(codegen::wins(m, false, NAN, 5, -1e30, 2));  // a NaN wins min and max alike
  EXPECT_FALSE(codegen::wins(m, true, 1e30, 1, NAN, 2));
  EXPECT_FALSE(codegen::wins(m, true, NAN, 5, NAN, 2));    // the first NaN stays
  EXPECT_TRUE(codegen::wins(codegen::HostInt<int64_t>{}, false, int64_t{-3}, 7, int64_t{4}, 0));
  EXPECT_EQ(codegen::fold_op(codegen::Reduction::sum), Op::add);
  EXPECT_EQ(codegen::fold_op(codegen::Reduction::prod), Op::mul);
  EXPECT_TRUE(std::isnan(codegen::eval_scalar<double>(codegen::fold_op(codegen::Reduction::max), 1.0, NAN)));
  EXPECT_TRUE(std::isnan(codegen::eval_scalar<double>(codegen::fold_op(codegen::Reduction::min), NAN, 1.0)));
}
