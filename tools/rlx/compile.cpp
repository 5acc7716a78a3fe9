// rlx compile FILE.rlx: runs the compiler for a device and prints any stage of it — the IR
// (hir, mir, lir), the dispatch report, or the graph after any pass (--stop-after).
// rlx export --target D FILE -o DIR: the same compilation for a device that emits source, its
// program written to DIR.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "export_web.h"
#include "frontends/onnx/onnx.h"
#include "ir/text.h"
#include "passes/fold_qdq.h"
#include "json.h"
#include "models/bert.h"
#include "text/tokenizer_loader.h"
#include "ops/verify.h"
#include "passes/pipeline.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

// LIR needs concrete shapes; symbols the user did not bind get this value (announced on stderr).
constexpr int kDefaultSymbolValue = 8;

Bindings parse_bindings(const std::string& text) {
  Bindings b;
  if (text.empty()) return b;
  for (const auto& item : split(text, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error(ErrorKind::invalid_argument, cat("--bind expects SYMBOL=VALUE pairs, got '", item, "'"));
    char* end = nullptr;
    std::string v = item.substr(eq + 1);
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 0) throw Error(ErrorKind::invalid_argument, cat("--bind ", item, ": the value must be a non-negative integer"));
    b[std::string(trim(item.substr(0, eq)))] = n;
  }
  return b;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("cannot open ", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

int cmd_compile(Args& args) {
  bool json = args.flag("json");
  bool report = args.flag("report");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string emit = args.value_or("emit", report ? "" : "mir");
  SessionOptions options;
  options.compile_only = true;  // the plans of a device this machine cannot run print too
  options.stop_after = args.value_or("stop-after", "");
  options.policy = args.value_or("policy", flags().RLX_POLICY);
  options.precision = args.value_or("precision", "f32");
  std::string bind = args.value_or("bind", "");
  if (auto dir = args.value("dump-dir")) mutable_flags().RLX_DUMP_DIR = *dir;
  for (const auto& o : args.values("override")) {
    size_t eq = o.find('=');
    if (eq == std::string::npos) throw Error(ErrorKind::invalid_argument, cat("--override expects OP=native|common, got '", o, "'"));
    options.overrides[o.substr(0, eq)] = o.substr(eq + 1);
  }
  std::vector<std::string> files = args.positionals();
  args.finish();
  if (files.size() != 1) throw Error(ErrorKind::invalid_argument, "rlx compile takes exactly one FILE.rlx or MODEL.onnx");
  if (!emit.empty() && emit != "hir" && emit != "mir" && emit != "lir")
    throw Error(ErrorKind::invalid_argument, cat("--emit must be hir, mir or lir, got '", emit, "'"));
  if (!options.stop_after.empty() && !passes::is_stage(options.stop_after))
    throw Error(ErrorKind::invalid_argument, cat("--stop-after: unknown pass '", options.stop_after, "' (passes: ", join(passes::mir_stages(), " "), " ",
                                                 join(passes::lir_stages(), " "), ")"));

  auto g = std::make_shared<ir::Graph>(frontends::onnx::is_onnx_file(files[0]) ? *frontends::onnx::import_model(files[0]).graph
                                                                              : ir::parse_graph(read_file(files[0]), files[0]));
  ops::verify(*g, g->level());
  std::string out_text, report_text, report_json = "null";
  if (emit == "hir") {
    out_text = ir::print_graph(*g);
  } else {
    // Through a Session, as every run is: the plan printed is the plan the device runs.
    CompiledModel m = Session(device, options).compile(Graph(g));
    report_text = m.dispatch_report();
    report_json = m.dispatch_report_json();
    if (emit == "lir") {
      Bindings b = parse_bindings(bind);
      for (const auto& s : g->symbols())
        if (!b.count(s)) {
          b[s] = kDefaultSymbolValue;
          std::fprintf(stderr, "rlx compile: symbol %s is not bound; specializing with %s=%d (use --bind)\n", s.c_str(), s.c_str(),
                       kDefaultSymbolValue);
        }
      out_text = m.lir_text(b);
    } else if (!emit.empty()) {
      out_text = m.mir_text();
    }
  }
  if (json) {
    std::printf("{\"device\":%s,\"level\":%s,\"report\":%s,\"ir\":%s}\n", json_quote(device).c_str(),
                json_quote(emit.empty() ? "mir" : emit).c_str(), report_json.c_str(), json_quote(out_text).c_str());
    return 0;
  }
  std::fputs(out_text.c_str(), stdout);
  if (report) std::fputs(report_text.c_str(), emit.empty() ? stdout : stderr);
  return 0;
}

int cmd_export(Args& args) {
  namespace fs = std::filesystem;
  const bool json = args.flag("json");
  std::string target = args.value_or("target", "");
  std::string out = args.value_or("output", "");
  if (auto o = args.value("o")) out = *o;
  SessionOptions options;
  options.compile_only = true;
  options.precision = args.value_or("precision", "f32");
  const std::string bind = args.value_or("bind", "");
  std::vector<std::string> files = args.positionals();
  args.finish();
  if (target.empty())
    throw Error(ErrorKind::invalid_argument, "rlx export needs --target (webgpu, metal, rocm, cortex-m4, cortex-m7, cortex-m55, fpga[:ice40-up5k|generic])");
  if (target == "fpga") target = "fpga:ice40-up5k";
  if (files.size() != 1) throw Error(ErrorKind::invalid_argument, "rlx export takes exactly one FILE.rlx, MODEL.onnx or BERT model directory");
  if (out.empty()) throw Error(ErrorKind::invalid_argument, "rlx export needs -o DIR");
  // A BERT model directory (sentence-transformers or Hugging Face) is exported for one batch
  // and length (B=4, S=64 unless bound), and for webgpu with its embeddings page.
  std::optional<models::BertModel> bert;
  std::shared_ptr<ir::Graph> g;
  Bindings b = parse_bindings(bind);
  if (fs::is_directory(files[0])) {
    bert = models::load_bert(files[0]);
    g = std::make_shared<ir::Graph>(bert->graph());
    b.emplace("B", 4);
    b.emplace("S", std::min<int64_t>(64, bert->max_tokens));
    if (b.at("S") > bert->max_tokens)
      throw Error(ErrorKind::invalid_argument, cat("rlx export: S=", b.at("S"), " is longer than ", files[0], " takes (", bert->max_tokens, " tokens)"));
  } else {
    // int8 targets take QLinearMatMul in QDQ form, which fold_qdq (below) makes an integer layer
    frontends::onnx::ImportOptions io;
    io.qlinear_matmul_as_qdq = target.rfind("cortex-m", 0) == 0 || target.rfind("fpga:", 0) == 0;
    g = std::make_shared<ir::Graph>(frontends::onnx::is_onnx_file(files[0]) ? *frontends::onnx::import_model(files[0], io).graph
                                                                           : ir::parse_graph(read_file(files[0]), files[0]));
  }
  ops::verify(*g, g->level());
  // A microcontroller or an FPGA runs one inference at a time (every symbol is 1 unless bound), on
  // integer layers: an ONNX model in QDQ form is folded into them first, and the graph the program
  // implements is written beside it (graph.rlx: what the host runs to check the board).
  const bool int8_target = target.rfind("cortex-m", 0) == 0 || target.rfind("fpga:", 0) == 0;
  passes::QdqFoldReport folded;
  if (int8_target) {
    for (const auto& sym : g->symbols()) b.emplace(sym, 1);  // bound ones stay as given
    g = std::make_shared<ir::Graph>(passes::fold_qdq(*g, &folded));
  }
  CompiledModel m = Session(target, options).compile(Graph(g));
  for (const auto& s : g->symbols())
    if (!b.count(s)) throw Error(ErrorKind::invalid_argument, cat("rlx export: symbol ", s, " is not bound; the program is for one shape (--bind ", s, "=N)"));
  std::map<std::string, std::string> program = m.emit_source(b);
  if (int8_target) program["graph.rlx"] = ir::print_graph(*g);
  if (bert && target == "webgpu") {
    const text::Tokenizer tok = text::load_tokenizer(bert->layout.transformer_dir);
    const fs::path dir = fs::path(files[0]).lexically_normal();
    const std::string model_name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
    for (auto& [name, text] : sentence_page_files(tok, model_name, b.at("S"))) program[name] = std::move(text);
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::io, cat("rlx export: cannot create ", out, ": ", ec.message()));
  size_t bytes = 0;
  for (const auto& [name, text] : program) {
    const fs::path p = fs::path(out) / name;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream f(p, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!f) throw Error(ErrorKind::io, cat("rlx export: cannot write ", p.string()));
    bytes += text.size();
  }
  if (json) {
    std::vector<std::string> names;
    for (const auto& [name, text] : program) names.push_back(json_quote(name));
    std::printf("{\"target\":%s,\"dir\":%s,\"files\":[%s],\"bytes\":%zu}\n", json_quote(target).c_str(), json_quote(out).c_str(), join(names, ",").c_str(), bytes);
  } else {
    std::printf("rlx export: %zu files (%zu bytes) for %s in %s\n", program.size(), bytes, target.c_str(), out.c_str());
    if (folded.layers || folded.movements || folded.adds || folded.softmaxes)
      std::printf("rlx export: folded %d QDQ layers into integer layers, %d adds and %d softmaxes into integer ones, and %d QDQ-wrapped movement/max ops onto int8 values\n",
                  folded.layers, folded.adds, folded.softmaxes, folded.movements);
  }
  return 0;
}

}  // namespace rlx::cli
