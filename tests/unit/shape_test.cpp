#include <gtest/gtest.h>

#include "rlx/error.h"
#include "rlx/shape.h"

using namespace rlx;

TEST(Dim, ArithmeticIsCanonical) {
  Dim S = Dim::symbol("S"), B = Dim::symbol("B");
  EXPECT_EQ((S + Dim(1)).str(), "S+1");
  EXPECT_EQ((Dim(2) * S).str(), "2*S");
  EXPECT_EQ((B * S).str(), "B*S");
  EXPECT_EQ((S * B), (B * S));
  EXPECT_EQ((S + S), Dim(2) * S);
  EXPECT_EQ((S - S), Dim(0));
  EXPECT_TRUE((S - S).is_static());
  EXPECT_EQ(((S + Dim(1)) * (S - Dim(1))).str(), "S*S-1");
  EXPECT_EQ((Dim(3) - S).str(), "-S+3");
}

TEST(Dim, ParsePrintsBack) {
  for (const char* t : {"384", "S", "S+1", "2*S", "B*S", "S*S-1", "-S+3", "2*B*S+4*S"}) EXPECT_EQ(Dim::parse(t).str(), t) << t;
  EXPECT_EQ(Dim::parse("(S+1)*2").str(), "2*S+2");
  EXPECT_EQ(Dim::parse(" B * 3 ").str(), "3*B");
}

TEST(Dim, ParseErrorsNameTheColumn) {
  try {
    Dim::parse("S+*2");
    FAIL() << "expected a parse error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::parse);
    EXPECT_NE(std::string(e.what()).find("column 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Dim::parse("S+"), Error);
  EXPECT_THROW(Dim::parse("(S"), Error);
  EXPECT_THROW(Dim::parse("99999999999999999999"), Error);
}

TEST(Dim, ExactDivision) {
  Dim S = Dim::symbol("S"), B = Dim::symbol("B");
  EXPECT_EQ(*(B * S * Dim(384)).exact_div(Dim(384)), B * S);
  EXPECT_EQ(*(B * S * Dim(384)).exact_div(B * Dim(12)), S * Dim(32));
  EXPECT_FALSE((S + Dim(1)).exact_div(Dim(2)).has_value());
  EXPECT_FALSE(S.exact_div(B).has_value());
  EXPECT_EQ(*(S + Dim(1)).exact_div(S + Dim(1)), Dim(1));
}

TEST(Dim, Substitution) {
  Dim d = Dim::parse("2*B*S+1");
  EXPECT_EQ(d.substitute({{"B", 3}, {"S", 5}}).value(), 31);
  EXPECT_EQ(d.substitute({{"B", 3}}).str(), "6*S+1");
  EXPECT_THROW(d.value(), Error);
}

TEST(Shape, Helpers) {
  Shape s = {Dim::symbol("B"), Dim(4), Dim(8)};
  EXPECT_EQ(shape_str(s), "[B,4,8]");
  EXPECT_EQ(shape_numel(s).str(), "32*B");
  EXPECT_FALSE(shape_is_static(s));
  EXPECT_EQ(shape_values(shape_substitute(s, {{"B", 2}})), (std::vector<int64_t>{2, 4, 8}));
}
