// rlx diff MODEL [--device D] [--against reference|onnxruntime] [--input NAME=FILE.npy …]
// [--bind S=N,…] [--rtol R] [--atol A] [--top N] [--flip-weight NAME] [--json]: runs a model
// (ONNX or a .rlx graph) with every intermediate value exposed on a device and on the reference
// — or, for ONNX, on onnxruntime-node with every node's output added to the model's outputs —
// and names the first node whose output differs beyond tolerance, with a table of the largest
// errors. Inputs not given are seeded random values. --flip-weight changes one element of a named
// weight on the device's side only: a self-check that the report finds what was changed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "commands.h"
#include "formats/npy.h"
#include "frontends/onnx/expose.h"
#include "frontends/onnx/onnx.h"
#include "ort_run_js.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "rlx/error.h"
#include "runtime/diff.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

namespace ox = rlx::frontends::onnx;

double number(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x >= 0)) throw Error(ErrorKind::invalid_argument, cat("--", opt, " expects a non-negative number, got '", v, "'"));
  return x;
}

// Seeded values for an input nobody gave: normal floats, small non-negative integers, booleans.
Tensor random_input(const ir::Type& t, const Bindings& b, std::mt19937& rng, const std::string& name) {
  std::vector<int64_t> shape;
  for (const Dim& d : t.shape) {
    Dim s = d.substitute(b);
    if (!s.is_static())
      throw Error(ErrorKind::invalid_argument, cat("input '", name, "' has the symbolic dim ", d.str(), "; give --bind ", d.str(), "=N or --input ", name, "=FILE.npy"));
    shape.push_back(s.value());
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 1);
  for (double& x : v) x = is_float(t.dtype) ? normal(rng) : small(rng);
  return Tensor::from_f64(t.dtype, shape, v);
}

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// onnxruntime-node's values of every tensor the model's nodes produce, by name: the model with
// all of them as outputs, run by tools/rlx/ort_run.js (embedded) on the same inputs.
std::map<std::string, Tensor> onnxruntime_values(const std::string& model, const std::vector<std::string>& input_names, const std::vector<Tensor>& feed) {
  std::string pkg = flags().RLX_ORT_NODE;
  if (pkg.empty()) {
    const char* home = std::getenv("HOME");
    pkg = cat(home ? home : "", "/.cache/rlx-npm/node_modules/onnxruntime-node");
  }
  if (!fs::exists(fs::path(pkg) / "package.json"))
    throw Error(ErrorKind::unsupported, cat("--against onnxruntime needs onnxruntime-node: none at ", pkg,
                                            " (`make setup` installs it with npm; RLX_ORT_NODE names another place)"));
  fs::path dir = fs::temp_directory_path() / cat("rlx_diff_", ::getpid());
  fs::create_directories(dir / "out");
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  frontends::onnx::write_with_every_output(model, (dir / "model.onnx").string());
  std::ofstream(dir / "ort_run.js") << kOrtRunJs;
  std::string cmd = cat("ORT_NODE=", shell_quote(pkg), " RLX_ORT_BY_INDEX=1 node ", shell_quote((dir / "ort_run.js").string()), " ",
                        shell_quote((dir / "model.onnx").string()), " ", shell_quote((dir / "out").string()));
  for (size_t i = 0; i < input_names.size(); ++i) {
    fs::path f = dir / cat("input_", i, ".npy");
    formats::write_npy(f.string(), feed[i]);
    cmd += " " + shell_quote(cat(input_names[i], "=", f.string()));
  }
  cmd += cat(" > ", shell_quote((dir / "ort.log").string()), " 2>&1");
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir / "ort.log");
    std::stringstream ss;
    ss << log.rdbuf();
    throw Error(ErrorKind::runtime, cat("onnxruntime-node failed on ", model, ": ", ss.str()));
  }
  std::map<std::string, Tensor> out;
  std::ifstream names(dir / "out" / "names.txt");
  std::string name;
  for (int i = 0; std::getline(names, name); ++i)
    if (fs::exists(dir / "out" / cat(i, ".npy"))) out[name] = formats::read_npy((dir / "out" / cat(i, ".npy")).string());
  return out;
}

}  // namespace

int cmd_diff(Args& args) {
  bool json = args.flag("json");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string against = args.value_or("against", "reference");
  std::vector<std::string> given = args.values("input");
  std::string bind = args.value_or("bind", "");
  auto flip = args.value("flip-weight");
  runtime::DiffTolerance tol;
  if (auto r = args.value("rtol")) tol.rtol = number("rtol", *r);
  if (auto a = args.value("atol")) tol.atol = number("atol", *a);
  int top = static_cast<int>(number("top", args.value_or("top", "10")));
  uint32_t seed = static_cast<uint32_t>(number("seed", args.value_or("seed", "0")));
  auto pos = args.positionals();
  args.finish();
  if (pos.size() != 1) throw Error(ErrorKind::invalid_argument, "rlx diff takes one MODEL (.onnx or .rlx)");
  if (against != "reference" && against != "onnxruntime")
    throw Error(ErrorKind::invalid_argument, cat("--against must be reference or onnxruntime, got '", against, "'"));
  bool onnx = ox::is_onnx_file(pos[0]);
  if (against == "onnxruntime" && !onnx) throw Error(ErrorKind::invalid_argument, cat("--against onnxruntime compares ONNX models; ", pos[0], " is not one"));
  if (against == "onnxruntime" && flip) throw Error(ErrorKind::invalid_argument, "--flip-weight checks a device against the reference (--against reference)");

  std::map<std::string, Tensor> inputs;
  for (const auto& item : given) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::invalid_argument, cat("--input expects NAME=FILE.npy, got '", item, "'"));
    inputs[item.substr(0, eq)] = formats::read_npy(item.substr(eq + 1));
  }
  Bindings bindings;
  for (const auto& item : split(bind, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error(ErrorKind::invalid_argument, cat("--bind expects SYMBOL=N pairs, got '", item, "'"));
    bindings[std::string(trim(item.substr(0, eq)))] = static_cast<int64_t>(number("bind", item.substr(eq + 1)));
  }

  std::shared_ptr<ir::Graph> g;
  ox::ImportedModel imported;
  if (onnx) {
    ox::ImportOptions o;
    o.inputs = inputs;
    imported = ox::import_model(pos[0], o);
    g = imported.graph;
  } else {
    std::ifstream f(pos[0], std::ios::binary);
    if (!f) throw Error(ErrorKind::io, cat("cannot open ", pos[0]));
    std::stringstream text;
    text << f.rdbuf();
    g = std::make_shared<ir::Graph>(ir::parse_graph(text.str(), pos[0]));
  }
  ops::verify(*g, g->level());
  std::mt19937 rng(seed);
  std::vector<Tensor> feed;
  for (ir::ValueId v : g->inputs()) {
    const std::string& name = g->value(v).name;
    auto it = inputs.find(name);
    feed.push_back(it != inputs.end() ? it->second : random_input(g->type(v), bindings, rng, name));
  }
  if (against == "onnxruntime") {
    std::vector<std::string> names;
    for (ir::ValueId v : g->inputs()) names.push_back(g->value(v).name);
    std::map<std::string, Tensor> ort = onnxruntime_values(pos[0], names, feed);
    std::vector<ir::ValueId> values;
    std::vector<Tensor> expected;
    for (const auto& [name, v] : imported.node_tensors) {
      auto it = ort.find(name);
      DType d = g->type(v).dtype;
      if (it == ort.end() || d == DType::i4 || d == DType::c64) continue;  // a type onnxruntime's side cannot write
      values.push_back(v);
      expected.push_back(it->second);
    }
    runtime::DiffReport r = runtime::diff_values(*g, feed, device, values, expected, "onnxruntime", tol);
    if (json) std::printf("%s\n", r.json(top).c_str());
    else std::fputs(r.str(top).c_str(), stdout);
    return r.first < 0 ? 0 : 3;
  }
  runtime::UnderTest under_test;
  ir::Graph flipped_graph;
  std::vector<Tensor> flipped_feed;
  if (flip) {
    flipped_graph = *g;
    flipped_feed = feed;
    runtime::flip_weight(flipped_graph, flipped_feed, *flip);
    under_test = {&flipped_graph, &flipped_feed};
  }
  runtime::DiffReport r = runtime::diff_runs(*g, feed, device, against, tol, under_test);
  if (json) std::printf("%s\n", r.json(top).c_str());
  else std::fputs(r.str(top).c_str(), stdout);
  return r.first < 0 ? 0 : 3;  // a divergence is a finding (errors exit 1 or 2): scripts can test for it
}

}  // namespace rlx::cli
