// `rlx compile --emit lir` prints the plan a session runs: the CLI compiles through a Session,
// and a session's lir_text is the LIR its executable was built from. Checked for every built
// device that has a plan (cpu runs it here; cuda runs it where a GPU is, and is compiled for
// inspection elsewhere — its plan keeps concurrent branches apart, which only the session
// knows to ask for).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ir/text.h"
#include "rlx/session.h"
#include "runtime/registry.h"
#include "util/strings.h"

using namespace rlx;

namespace {

std::string run_cli(const std::string& args) {
  std::string out;
  FILE* p = popen(cat(RLX_CLI, " ", args, " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) out = "(rlx compile failed)";
  return out;
}

// Seeded inputs of the graph's input types at these symbol values.
std::vector<Tensor> inputs_for(const ir::Graph& g, const std::map<std::string, int64_t>& b) {
  std::vector<Tensor> out;
  int seed = 1;
  for (ir::ValueId v : g.inputs()) {
    const ir::Type& t = g.type(v);
    std::vector<int64_t> shape;
    for (const Dim& d : t.shape) shape.push_back(d.substitute(b).value());
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> vals(static_cast<size_t>(n));
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = is_float(t.dtype) ? 0.1 * std::sin(static_cast<double>(i + seed)) : static_cast<double>(i % 4);
    out.push_back(Tensor::from_f64(t.dtype, shape, vals));
    ++seed;
  }
  return out;
}

}  // namespace

TEST(CompilePlan, CliPrintsThePlanTheSessionRuns) {
  std::string path = cat(RLX_SOURCE_DIR, "/examples/llama_block.rlx");
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  auto g = std::make_shared<ir::Graph>(ir::parse_graph(text.str(), path));
  std::map<std::string, int64_t> b = {{"S", 3}, {"P", 5}};
  int checked = 0;
  for (const char* device : {"cpu", "cuda"}) {
    runtime::Backend* be = runtime::find_backend(device);
    if (!be) continue;  // not built here
    bool runs = be->availability().available;
    SessionOptions o;
    o.compile_only = !runs;
    CompiledModel m = Session(device, o).compile(Graph(g));
    if (runs) m.run(inputs_for(*g, b));  // builds the executable: lir_text is then what it was built from
    std::string plan = m.lir_text(b);
    EXPECT_EQ(plan.rfind("lir @", 0), 0u) << device << ": not a plan:\n" << plan;
    EXPECT_EQ(run_cli(cat("compile ", path, " --device ", device, " --emit lir --bind S=3,P=5")), plan)
        << device << (runs ? " (run)" : " (compiled for inspection)");
    ++checked;
  }
  EXPECT_GE(checked, 1);
}
