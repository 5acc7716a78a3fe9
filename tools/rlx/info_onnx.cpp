// `rlx info model.onnx`: IR version and producer, opsets per domain, inputs and outputs with
// their (symbolic) dims, the operator histogram, initializer count and bytes, and the nodes the
// importer cannot map — all without reading a weight.
#include "info_onnx.h"

#include <cstdio>

#include "frontends/onnx/onnx.h"
#include "frontends/rten/rten.h"
#include "json.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

std::string io_json(const frontends::onnx::ModelSummary::Io& io) {
  return cat("{\"name\":", json_quote(io.name), ",\"dtype\":", json_quote(io.dtype), ",\"shape\":[",
             join(io.shape, ",", [](const std::string& d) { return json_quote(d); }), "]}");
}

}  // namespace

int print_onnx_info(const std::string& path, bool json) {
  frontends::onnx::ModelSummary s = frontends::onnx::summarize_model(path);
  // .rten models are read as the ONNX they came from (frontends/rten)
  const bool rten = frontends::rten::is_rten_file(path);
  const char* format = rten ? "rten" : "onnx";
  if (json) {
    std::vector<std::string> opsets, ins, outs, hist, unsup;
    for (const auto& [d, v] : s.opsets) opsets.push_back(cat(json_quote(d), ":", v));
    for (const auto& io : s.inputs) ins.push_back(io_json(io));
    for (const auto& io : s.outputs) outs.push_back(io_json(io));
    for (const auto& [op, n] : s.op_histogram) hist.push_back(cat(json_quote(op), ":", n));
    for (const auto& u : s.unsupported) unsup.push_back(json_quote(u));
    std::printf("{\"format\":\"%s\",\"path\":%s,\"ir_version\":%lld,\"producer\":%s,\"opsets\":{%s},\"inputs\":%s,\"outputs\":%s,"
                "\"nodes\":%lld,\"ops\":{%s},\"initializers\":%lld,\"initializer_bytes\":%lld,\"parameters\":%lld,\"unsupported\":%s}\n",
                format, json_quote(path).c_str(), static_cast<long long>(s.ir_version), json_quote(s.producer).c_str(), join(opsets, ",").c_str(),
                json_array(ins).c_str(), json_array(outs).c_str(), static_cast<long long>(s.nodes), join(hist, ",").c_str(),
                static_cast<long long>(s.initializers), static_cast<long long>(s.initializer_bytes), static_cast<long long>(s.parameters),
                json_array(unsup).c_str());
    return 0;
  }
  if (rten)
    std::printf("format: rten (read as ONNX: every rten operator is its ONNX namesake, int32 widened to int64)\n");
  else
    std::printf("format: onnx (IR version %lld%s)\n", static_cast<long long>(s.ir_version), s.producer.empty() ? "" : cat(", producer ", s.producer).c_str());
  std::vector<std::string> opsets;
  for (const auto& [d, v] : s.opsets) opsets.push_back(cat(d, " ", v));
  std::printf("opsets: %s\n", join(opsets).c_str());
  auto print_io = [](const char* title, const std::vector<frontends::onnx::ModelSummary::Io>& v) {
    std::printf("%s (%zu):\n", title, v.size());
    for (const auto& io : v) std::printf("  %-30s %-8s [%s]\n", io.name.c_str(), io.dtype.c_str(), join(io.shape).c_str());
  };
  print_io("inputs", s.inputs);
  print_io("outputs", s.outputs);
  std::printf("operators (%lld nodes, %zu kinds):\n", static_cast<long long>(s.nodes), s.op_histogram.size());
  for (const auto& [op, n] : s.op_histogram) std::printf("  %-36s %lld\n", op.c_str(), static_cast<long long>(n));
  std::printf("initializers: %lld tensors, %lld parameters, %lld bytes\n", static_cast<long long>(s.initializers),
              static_cast<long long>(s.parameters), static_cast<long long>(s.initializer_bytes));
  if (s.unsupported.empty()) {
    std::printf("import: every node maps to the RLX IR\n");
  } else {
    std::printf("import: %zu nodes cannot be imported:\n", s.unsupported.size());
    for (const auto& u : s.unsupported) std::printf("  %s\n", u.c_str());
  }
  return 0;
}

}  // namespace rlx::cli
