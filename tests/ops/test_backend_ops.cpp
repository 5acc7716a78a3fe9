// test_backend_ops: every op × dtype × device against the reference backend.
//   --mode test     compile each sample node for each device and compare with the reference
//   --mode support  print (or --output) the op × device support table, docs/ops.md
//   --mode emit     for a device that emits source (metal, rocm): export each sample node and
//                   write every distinct kernel into --output DIR, for that language's compiler
// A device that cannot run a case says "not supported"; it never fails silently.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "common/op_cases.h"
#include "passes/legalize.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "runtime/collective.h"
#include "runtime/registry.h"
#include "util/strings.h"

using namespace rlx;

namespace {

struct Options {
  std::string mode = "test";
  std::vector<std::string> devices, excluded;  // excluded: left out of the default (every available device)
  std::string op_filter;
  std::string output;
  std::string policy = "prefer-native";
  uint32_t seed = 1;
  bool verbose = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(ErrorKind::invalid_argument, cat(a, " needs a value"));
      return argv[++i];
    };
    if (a == "--mode") o.mode = next();
    else if (a == "--device") o.devices.push_back(next());
    else if (a == "--exclude") o.excluded.push_back(next());
    else if (a == "--op") o.op_filter = next();
    else if (a == "--output") o.output = next();
    else if (a == "--policy") o.policy = next();
    else if (a == "--seed") o.seed = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "-v" || a == "--verbose") o.verbose = true;
    else if (a == "--help") {
      std::printf("usage: test_backend_ops [--mode test|support|emit] [--device D]… [--exclude D]… [--op REGEX] [--policy P] [--seed N] [--output FILE] [-v]\n");
      std::exit(0);
    } else throw Error(ErrorKind::invalid_argument, cat("unknown option ", a));
  }
  if (o.mode != "test" && o.mode != "support" && o.mode != "emit") throw Error(ErrorKind::invalid_argument, "--mode must be test, support or emit");
  if (o.mode == "emit" && (o.devices.size() != 1 || o.output.empty())) throw Error(ErrorKind::invalid_argument, "--mode emit needs one --device and --output DIR");
  return o;
}

std::vector<ir::Op> selected_ops(const Options& o) {
  std::vector<ir::Op> ops;
  std::regex re(o.op_filter.empty() ? ".*" : o.op_filter);
  for (int i = 0; i < ir::kNumOps; ++i) {
    auto op = static_cast<ir::Op>(i);
    if (std::regex_search(std::string(ir::op_name(op)), re)) ops.push_back(op);
  }
  return ops;
}

int run_tests(const Options& o) {
  std::vector<std::string> devs = o.devices;
  if (devs.empty())
    for (const auto& d : devices())
      if (d.name != "reference" && d.available && d.native_ops > 0 && std::find(o.excluded.begin(), o.excluded.end(), d.name) == o.excluded.end())
        devs.push_back(d.name);
  // a device named but not here (webgpu without its npm package): skipped, saying why (exit 77,
  // ctest's SKIP_RETURN_CODE where the test sets it)
  for (const auto& d : devices())
    if (!o.devices.empty() && !d.available && std::find(devs.begin(), devs.end(), d.name) != devs.end()) {
      std::printf("SKIP: the %s device is unavailable here: %s\n", d.name.c_str(), d.reason.c_str());
      devs.erase(std::find(devs.begin(), devs.end(), d.name));
      if (devs.empty()) return 77;
    }
  int failed = 0, passed = 0, unsupported = 0;
  SessionOptions so;
  so.policy = o.policy;
  for (ir::Op op : selected_ops(o)) {
    std::map<std::string, std::array<int, 3>> per_device;  // passed, failed, not supported
    for (auto& c : rlx::testing::op_cases(op, o.seed)) {
      Graph g(std::make_shared<ir::Graph>(c.graph));
      std::vector<Tensor> expected;
      try {
        expected = Session("reference").compile(g).run(c.inputs);
      } catch (const Error& e) {
        std::printf("  FAIL %s on reference: %s\n", c.name.c_str(), e.what());
        ++failed;
        continue;
      }
      for (const auto& dev : devs) {
        auto& counts = per_device[dev];
        try {
          CompiledModel m = Session(dev, so).compile(g);
          std::vector<Tensor> got = m.run(c.inputs);
          std::string diff;
          for (size_t k = 0; k < got.size() && diff.empty(); ++k) diff = rlx::testing::compare_tensors(expected[k], got[k], c.tolerance_dtype);
          if (diff.empty()) {
            ++counts[0];
            ++passed;
            if (o.verbose) std::printf("  ok   %s on %s\n", c.name.c_str(), dev.c_str());
          } else {
            ++counts[1];
            ++failed;
            std::printf("  FAIL %s on %s: %s\n", c.name.c_str(), dev.c_str(), diff.c_str());
          }
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::unsupported) {
            ++counts[2];
            ++unsupported;
            if (o.verbose) std::printf("  not supported: %s on %s\n", c.name.c_str(), dev.c_str());
          } else {
            ++counts[1];
            ++failed;
            std::printf("  FAIL %s on %s: %s\n", c.name.c_str(), dev.c_str(), e.what());
          }
        }
      }
    }
    for (const auto& [dev, c] : per_device)
      std::printf("%-16s %-10s %4d passed  %3d failed  %3d not supported\n", ir::op_keyword(op).c_str(), dev.c_str(), c[0], c[1], c[2]);
  }
  std::printf("\n%d passed, %d failed, %d not supported (devices: %s)\n", passed, failed, unsupported, join(devs).c_str());
  return failed ? 1 : 0;
}

std::string support_cell(ir::Op op, runtime::Backend& dev, const std::vector<testing::OpCase>& cases) {
  // dtype → path of the op's node on this device
  std::map<std::string, std::set<std::string>> by_path;
  for (const auto& c : cases) {
    passes::DispatchReport rep;
    bool legal = true;
    try {
      passes::legalize(c.graph, dev, {}, rep);
    } catch (const Error&) {
      legal = false;  // some node of the op's lowering has no path on this device
    }
    const auto& row = rep.rows[ir::op_keyword(op)];
    std::string path = !legal ? "—" : row.rewritten ? "rewritten" : row.common_ir ? "common-ir" : row.native ? "native" : "—";
    by_path[path].insert(dtype_name(c.dtype));
  }
  if (by_path.size() == 1 && by_path.begin()->first == "—") return "—";
  std::string cell;
  for (const char* p : {"native", "common-ir", "rewritten", "—"}) {
    auto it = by_path.find(p);
    if (it == by_path.end()) continue;
    cell += cat(cell.empty() ? "" : "; ", p, " ", join(std::vector<std::string>(it->second.begin(), it->second.end()), " "));
  }
  return cell;
}

int run_support(const Options& o) {
  std::vector<runtime::Backend*> devs;
  if (o.devices.empty()) devs = runtime::backends();
  else
    for (const auto& d : o.devices) devs.push_back(&runtime::backend(d));
  std::string out =
      "# Op support by device\n\n"
      "Generated by `test_backend_ops --mode support` (`make docs`); do not edit by hand.\n"
      "Each cell lists the sample dtypes of the op by dispatch path: **native** (the device has a kernel),\n"
      "**common-ir** (decomposed into MIR ops the device runs), **rewritten** (made legal by a registered\n"
      "rewrite such as dtype promotion), — (unsupported: compilation fails and names the op).\n\n";
  out += "| op | level |";
  for (auto* d : devs) out += cat(" ", d->name(), " |");
  out += "\n|---|---|";
  for (size_t i = 0; i < devs.size(); ++i) out += "---|";
  out += "\n";
  for (ir::Op op : selected_ops(o)) {
    auto cases = rlx::testing::op_cases(op, o.seed);
    out += cat("| `", ir::op_keyword(op), "` | ", ir::level_name(ir::op_info(op).level), " |");
    for (auto* d : devs) out += cat(" ", support_cell(op, *d, cases), " |");
    out += "\n";
  }
  if (o.output.empty()) {
    std::fputs(out.c_str(), stdout);
  } else {
    std::ofstream(o.output) << out;
    std::printf("wrote %s\n", o.output.c_str());
  }
  return 0;
}

// Every distinct kernel (its text after the first line, which names the node it was first
// printed for) of every case the device claims, one file each in o.output.
int run_emit(const Options& o) {
  const std::string dev = o.devices[0];
  SessionOptions so;
  so.policy = o.policy;
  so.compile_only = true;
  std::map<std::string, std::pair<std::string, std::string>> kernels;  // body → (file name, text)
  int cases = 0, unsupported = 0, failed = 0;
  for (ir::Op op : selected_ops(o)) {
    for (auto& c : rlx::testing::op_cases(op, o.seed)) {
      try {
        const std::map<std::string, std::string> files = Session(dev, so).compile(Graph(std::make_shared<ir::Graph>(c.graph))).emit_source({});
        ++cases;
        for (const auto& [name, text] : files) {
          if (name.rfind("kernels/", 0) != 0) continue;
          const std::string body = text.substr(text.find('\n') + 1), ext = name.substr(name.rfind('.'));
          if (!kernels.count(body)) kernels[body] = {cat("k", kernels.size(), ext), text};
        }
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::unsupported) {
          ++unsupported;
          if (o.verbose) std::printf("  not supported: %s on %s\n", c.name.c_str(), dev.c_str());
        } else {
          ++failed;
          std::printf("  FAIL %s on %s: %s\n", c.name.c_str(), dev.c_str(), e.what());
        }
      }
    }
  }
  for (const auto& [body, file] : kernels) {
    std::ofstream f(o.output + "/" + file.first);
    f << file.second;
    if (!f) throw Error(ErrorKind::io, cat("cannot write ", o.output, "/", file.first));
  }
  std::printf("%s: %d cases emitted (%zu distinct kernels in %s), %d not supported, %d failed\n", dev.c_str(), cases, kernels.size(), o.output.c_str(), unsupported, failed);
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  rlx::runtime::SingleRankGroup one_rank;  // collective nodes run as a job of one rank
  rlx::runtime::set_collective_group(&one_rank);
  try {
    Options o = parse(argc, argv);
    return o.mode == "test" ? run_tests(o) : o.mode == "emit" ? run_emit(o) : run_support(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "test_backend_ops: %s\n", e.what());
    return 2;
  }
}
