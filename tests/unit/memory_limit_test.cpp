// The memory limit: sizes parse or are refused by name; an allocation past the limit and a model
// whose arena cannot fit fail with out_of_memory errors that say what was needed and what fits.
#include <gtest/gtest.h>

#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "util/host_memory.h"

using namespace rlx;

namespace {

// Restores "no limit" however a test ends.
struct LimitScope {
  explicit LimitScope(size_t bytes) { set_memory_limit(bytes); }
  ~LimitScope() { set_memory_limit(0); }
};

}  // namespace

TEST(MemoryLimit, ParsesSizesAndRefusesOthers) {
  EXPECT_EQ(parse_byte_size("8G", "x"), size_t{8} << 30);
  EXPECT_EQ(parse_byte_size("512M", "x"), size_t{512} << 20);
  EXPECT_EQ(parse_byte_size("1.5K", "x"), size_t{1536});
  EXPECT_EQ(parse_byte_size("4096", "x"), size_t{4096});
  for (const char* bad : {"", "lots", "8Q", "-1G", "G"}) {
    try {
      parse_byte_size(bad, "--memory-limit");
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("--memory-limit"), std::string::npos) << e.what();
    }
  }
}

TEST(MemoryLimit, AnAllocationPastTheLimitFailsCleanly) {
  LimitScope limit(host_bytes_in_use() + (size_t{1} << 20));
  Tensor small = Tensor::zeros(DType::f32, {1024});  // 4 KiB fits
  EXPECT_EQ(small.numel(), 1024);
  try {
    Tensor big = Tensor::zeros(DType::f32, {1 << 20});  // 4 MiB does not
    FAIL() << "allocated past the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    std::string m = e.what();
    EXPECT_NE(m.find("4.00 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("memory limit"), std::string::npos) << m;
  }
}

TEST(MemoryLimit, AModelWhoseActivationsCannotFitFailsWhenItCompiles) {
  auto g = std::make_shared<ir::Graph>();
  g->name = "wide";
  ops::Builder b(*g);
  ir::ValueId x = g->add_input({DType::f32, shape_of({2048, 2048})}, "x");
  ir::ValueId h = b.unary(ir::Op::exp, b.mul(x, x));
  g->set_outputs({b.reduce(b.add(h, b.unary(ir::Op::exp, h)), "sum", {1}, false)});
  Tensor in = Tensor::zeros(DType::f32, {2048, 2048});  // 16 MiB, allocated before the limit
  CompiledModel m = Session("cpu").compile(Graph(g));
  LimitScope limit(host_bytes_in_use() + (size_t{4} << 20));
  try {
    m.run({in});
    FAIL() << "ran past the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    std::string m_text = e.what();
    EXPECT_NE(m_text.find("graph @wide"), std::string::npos) << m_text;
    EXPECT_NE(m_text.find("smaller batch"), std::string::npos) << m_text;
  }
}
