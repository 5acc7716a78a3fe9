#include "frontends/onnx/expose.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "frontends/onnx/proto.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

void write_with_every_output(const std::string& path, const std::string& out_path) {
  auto model = load_model(path);
  ::onnx::GraphProto* g = model->mutable_graph();
  std::filesystem::path dir = std::filesystem::absolute(std::filesystem::path(path)).parent_path();
  for (auto& init : *g->mutable_initializer())
    if (init.has_data_location() && init.data_location() == ::onnx::TensorProto::EXTERNAL)
      for (auto& kv : *init.mutable_external_data())
        if (kv.key() == "location" && !std::filesystem::path(kv.value()).is_absolute()) kv.set_value((dir / kv.value()).string());
  std::set<std::string> outputs;
  for (const auto& o : g->output()) outputs.insert(o.name());
  // No types: the runtime infers them (a graph output may leave its type out).
  for (const auto& n : g->node())
    for (const auto& o : n.output())
      if (!o.empty() && outputs.insert(o).second) g->add_output()->set_name(o);
  std::ofstream f(out_path, std::ios::binary);
  if (!f || !model->SerializeToOstream(&f)) throw Error(ErrorKind::io, cat("cannot write ", out_path));
}

}  // namespace rlx::frontends::onnx
