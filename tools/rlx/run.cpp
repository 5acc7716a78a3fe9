// rlx run MODEL.onnx|GRAPH.rlx --input NAME=FILE.npy … [--output DIR] [--device D] [--precision P]
// [--threads N] [--json]: imports an ONNX model specialised to the given inputs (or parses a
// graph in the text form, whose symbols the inputs' shapes bind), runs it on a device and writes
// each output as DIR/<output name>.npy.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "formats/npy.h"
#include "frontends/onnx/onnx.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "json.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::cli {

namespace fs = std::filesystem;
namespace ox = rlx::frontends::onnx;

namespace {

// An output name as a file name: path separators and odd characters become '_'.
std::string file_stem(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  if (s.empty() || s == "." || s == "..") s = "output";
  return s;
}

// Writes each output as DIR/<name>.npy (when DIR is given) and prints it, or returns its JSON row.
std::vector<std::string> write_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outs, const std::string& out_dir, bool json) {
  if (!out_dir.empty()) fs::create_directories(out_dir);
  std::vector<std::string> rows;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = outs[i];
    std::string path;
    if (!out_dir.empty()) {
      path = (fs::path(out_dir) / (file_stem(names[i]) + ".npy")).string();
      formats::write_npy(path, t);
    }
    if (json) {
      rows.push_back(cat("{\"name\":", json_quote(names[i]), ",\"dtype\":", json_quote(dtype_name(t.dtype())), ",\"shape\":[", join(t.shape()), "]",
                         path.empty() ? "" : cat(",\"file\":", json_quote(path)), "}"));
    } else {
      std::printf("%s: %s%s\n", names[i].c_str(), t.str(8).c_str(), path.empty() ? "" : cat(" → ", path).c_str());
    }
  }
  return rows;
}

}  // namespace

int cmd_run(Args& args) {
  bool json = args.flag("json");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string out_dir = args.value_or("output", "");
  std::string precision = args.value_or("precision", "f32");
  auto threads = args.value("threads");
  std::vector<std::string> inputs = args.values("input");
  auto pos = args.positionals();
  args.finish();
  if (pos.size() != 1) throw Error(ErrorKind::invalid_argument, "rlx run takes one MODEL.onnx or GRAPH.rlx and --input NAME=FILE.npy for each input");
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  ox::ImportOptions opts;
  for (const auto& item : inputs) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorKind::invalid_argument, cat("--input expects NAME=FILE.npy, got '", item, "'"));
    std::string name = item.substr(0, eq);
    if (opts.inputs.count(name)) throw Error(ErrorKind::invalid_argument, cat("--input ", name, " is given twice"));
    opts.inputs[name] = formats::read_npy(item.substr(eq + 1));
  }
  if (!ox::is_onnx_file(pos[0])) {  // a .rlx graph
    std::ifstream f(pos[0], std::ios::binary);
    if (!f) throw Error(ErrorKind::io, cat("cannot open ", pos[0]));
    std::stringstream text;
    text << f.rdbuf();
    auto g = std::make_shared<ir::Graph>(ir::parse_graph(text.str(), pos[0]));
    ops::verify(*g, g->level());
    std::map<std::string, Tensor> feed;
    std::vector<std::string> missing;
    for (ir::ValueId v : g->inputs()) {
      const std::string& name = g->value(v).name;
      auto it = opts.inputs.find(name);
      if (it == opts.inputs.end()) missing.push_back(cat(name, " ", ir::type_str(g->type(v))));
      else feed[name] = it->second;
    }
    if (!missing.empty()) throw Error(ErrorKind::invalid_argument, cat(pos[0], ": missing --input for ", join(missing), " (give NAME=FILE.npy for every input)"));
    for (const auto& [name, t] : opts.inputs)
      if (!feed.count(name)) throw Error(ErrorKind::invalid_argument, cat(pos[0], " has no input named ", name));
    SessionOptions so;
    so.precision = precision;
    CompiledModel cm = Session(device, so).compile(Graph(g));
    std::vector<Tensor> outs = cm.run_named(feed);
    std::vector<std::string> names;
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string& vname = g->value(g->outputs()[i]).name;
      names.push_back(vname.empty() || std::isdigit(static_cast<unsigned char>(vname[0])) ? cat("output", i) : vname);
    }
    std::vector<std::string> rows = write_outputs(names, outs, out_dir, json);
    if (json) std::printf("{\"model\":%s,\"device\":%s,\"outputs\":%s}\n", json_quote(pos[0]).c_str(), json_quote(device).c_str(), json_array(rows).c_str());
    return 0;
  }
  ox::ModelSummary summary = ox::summarize_model(pos[0]);
  std::vector<std::string> missing;
  for (const auto& in : summary.inputs)
    if (!opts.inputs.count(in.name)) missing.push_back(cat(in.name, " ", in.dtype, "[", join(in.shape), "]"));
  if (!missing.empty())
    throw Error(ErrorKind::invalid_argument, cat(pos[0], ": missing --input for ", join(missing), " (give NAME=FILE.npy for every input)"));
  auto t0 = std::chrono::steady_clock::now();
  ox::ImportedModel m = ox::import_model(pos[0], opts);
  auto t1 = std::chrono::steady_clock::now();
  SessionOptions session_options;
  session_options.precision = precision;  // the session rejects names it does not know
  CompiledModel cm = Session(device, session_options).compile(Graph(m.graph));
  std::vector<Tensor> feed;
  feed = m.feed(opts);
  auto t2 = std::chrono::steady_clock::now();
  std::vector<Tensor> outs = cm.run(feed);
  auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  if (debug_at(1)) log_line(cat("rlx run: import ", ms(t0, t1), " ms, compile ", ms(t1, t2), " ms, run ", ms(t2, t3), " ms"));
  std::vector<std::string> rows = write_outputs(m.outputs, outs, out_dir, json);
  if (json)
    std::printf("{\"model\":%s,\"device\":%s,\"specialized_inputs\":[%s],\"outputs\":%s}\n", json_quote(pos[0]).c_str(), json_quote(device).c_str(),
                join(m.specialized_inputs, ",", [](const std::string& s) { return json_quote(s); }).c_str(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
