#include "frontends/onnx/backend_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <onnx/onnx-data_pb.h>

#include "frontends/onnx/onnx.h"
#include "frontends/onnx/proto.h"
#include "frontends/onnx/support.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) == 0 && f.size() > prefix.size() + 3 && f.compare(f.size() - 3, 3, ".pb") == 0)
      files.emplace_back(std::atoi(f.c_str() + prefix.size()), e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& [i, p] : files) out.push_back(p);
  return out;
}

}  // namespace

std::string compare_tensors(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) return cat("dtype ", dtype_name(got.dtype()), ", expected ", dtype_name(want.dtype()));
  if (got.shape() != want.shape()) return cat("shape [", join(got.shape()), "], expected [", join(want.shape()), "]");
  double worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double u = got.at_f64(i), v = want.at_f64(i);
    if (std::isnan(u) && std::isnan(v)) continue;
    if (u == v) continue;
    double err = std::fabs(u - v);
    if (!(err <= atol + rtol * std::fabs(v))) {
      if (std::isnan(err) || err > worst || at < 0) {
        worst = std::isnan(err) ? INFINITY : err;
        at = i;
      }
    }
  }
  if (at < 0) return "";
  return cat("mismatch: max abs error ", worst, " at element ", at, " (got ", got.at_f64(at), ", expected ", want.at_f64(at), ")");
}

// ONNX 1.12's generator wrote bfloat16 test tensors as UINT16 bits: read them as the model's type.
static Tensor tensor_of(::onnx::TensorProto tp, const ::onnx::TypeProto* declared, const std::string& path) {
  if (declared && declared->has_tensor_type() && declared->tensor_type().elem_type() == ::onnx::TensorProto::BFLOAT16 &&
      tp.data_type() == ::onnx::TensorProto::UINT16)
    tp.set_data_type(::onnx::TensorProto::BFLOAT16);
  return tensor_from_proto(tp, fs::path(path).parent_path().string(), path);
}

namespace {

// A test value read as the type the model declares: TensorProto, SequenceProto or OptionalProto.
struct TestValue {
  enum class Kind { tensor, sequence, none } kind = Kind::tensor;
  Tensor t;
  std::vector<Tensor> items;
};

TestValue load_value(const std::string& path, const ::onnx::TypeProto* type) {
  auto file_bytes = [&] {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(ErrorKind::io, cat("cannot read ", path));
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const ::onnx::TypeProto* t = type;
  if (t && t->has_optional_type()) {
    ::onnx::OptionalProto op;
    if (!op.ParseFromString(file_bytes())) throw Error(ErrorKind::format, cat(path, ": not an OptionalProto"));
    TestValue v;
    const ::onnx::TypeProto* inner = &t->optional_type().elem_type();
    if (op.has_tensor_value()) {
      v.t = tensor_of(op.tensor_value(), inner, path);
    } else if (op.has_sequence_value()) {
      v.kind = TestValue::Kind::sequence;
      for (const auto& tp : op.sequence_value().tensor_values()) v.items.push_back(tensor_of(tp, &inner->sequence_type().elem_type(), path));
    } else {
      v.kind = TestValue::Kind::none;
    }
    return v;
  }
  if (t && t->has_sequence_type()) {
    ::onnx::SequenceProto sp;
    if (!sp.ParseFromString(file_bytes())) throw Error(ErrorKind::format, cat(path, ": not a SequenceProto"));
    TestValue v;
    v.kind = TestValue::Kind::sequence;
    for (const auto& tp : sp.tensor_values()) v.items.push_back(tensor_of(tp, &t->sequence_type().elem_type(), path));
    return v;
  }
  TestValue v;
  v.t = tensor_of(read_tensor_file(path), t, path);
  return v;
}

}  // namespace

namespace {

BackendTestResult run_test(const fs::path& dir, const std::string& device) {
  BackendTestResult o{dir.filename().string(), "passed", ""};
  std::string model_path = (dir / "model.onnx").string();
  auto model = load_model(model_path);
  auto problems = find_unsupported(*model);
  if (!problems.empty()) {
    std::vector<std::string> dtypes, ops;
    for (const auto& p : problems) {
      for (const auto& d : p.dtypes)
        if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
      std::string op = cat(p.domain.empty() ? "" : p.domain + ".", p.op, " (opset ", p.opset, ")");
      if (p.no_converter && std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
    if (!dtypes.empty()) return {o.name, "skipped", cat("needs dtype ", join(dtypes), " (RLX has no such dtype)")};
    return {o.name, "failed", cat("unsupported op ", join(ops))};
  }
  // Graph inputs that the test feeds: the non-initializer ones, in order.
  std::vector<std::string> input_names;
  std::vector<const ::onnx::TypeProto*> input_info;
  {
    std::set<std::string> inits;
    for (const auto& t : model->graph().initializer()) inits.insert(t.name());
    for (const auto& v : model->graph().input())
      if (!inits.count(v.name())) {
        input_names.push_back(v.name());
        input_info.push_back(&v.type());
      }
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {o.name, "skipped", "no test_data_set_* folder"};
  for (const auto& set : sets) {
    ImportOptions opts;
    auto ins = numbered(set, "input_");
    if (ins.size() > input_names.size()) return {o.name, "failed", cat("error: ", ins.size(), " inputs for a model taking ", input_names.size())};
    for (size_t i = 0; i < ins.size(); ++i) {
      TestValue v = load_value(ins[i], input_info[i]);
      if (v.kind == TestValue::Kind::tensor) opts.inputs[input_names[i]] = v.t;
      else if (v.kind == TestValue::Kind::sequence) opts.sequence_inputs[input_names[i]] = v.items;
    }
    ImportedModel m = import_model(model, dir.string(), opts);
    CompiledModel cm = Session(device).compile(Graph(m.graph));
    std::vector<Tensor> feed;
    feed = m.feed(opts);
    std::vector<Tensor> got = cm.run(feed);
    auto outs = numbered(set, "output_");
    size_t k = 0;  // position in the flattened outputs
    for (size_t i = 0; i < outs.size() && i < m.output_groups.size(); ++i) {
      const auto& group = m.output_groups[i];
      const ::onnx::TypeProto* type = static_cast<int>(i) < model->graph().output_size() ? &model->graph().output(static_cast<int>(i)).type() : nullptr;
      TestValue want = load_value(outs[i], type);
      std::string label = cat("output ", i, " '", group.name, "' ");
      using Kind = ImportedModel::OutputGroup::Kind;
      if ((want.kind == TestValue::Kind::none) != (group.kind == Kind::none))
        return {o.name, "failed", cat(label, want.kind == TestValue::Kind::none ? "is present, expected an empty optional" : "is an empty optional")};
      if (want.kind == TestValue::Kind::sequence) {
        if (group.kind != Kind::sequence || static_cast<size_t>(group.count) != want.items.size())
          return {o.name, "failed", cat(label, "has ", group.count, " items, expected a sequence of ", want.items.size())};
        for (size_t j = 0; j < want.items.size(); ++j) {
          std::string why = compare_tensors(got[k + j], want.items[j]);
          if (!why.empty()) return {o.name, "failed", cat(label, "item ", j, " ", why)};
        }
      } else if (want.kind == TestValue::Kind::tensor) {
        if (group.kind != Kind::tensor) return {o.name, "failed", cat(label, "is a sequence, expected a tensor")};
        std::string why = compare_tensors(got[k], want.t);
        if (!why.empty()) return {o.name, "failed", cat(label, why)};
      }
      k += static_cast<size_t>(group.count);
    }
  }
  return o;
}

}  // namespace

std::vector<std::string> backend_test_dirs(const std::string& root) {
  std::vector<std::string> dirs;
  if (fs::exists(fs::path(root) / "model.onnx")) return {root};
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error(ErrorKind::io, cat(root, " is not a directory of ONNX backend tests"));
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}


BackendTestResult run_backend_test(const std::string& dir, const std::string& device) {
  std::string name = fs::path(dir).filename().string();
  try {
    return run_test(fs::path(dir), device);
  } catch (const Error& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    return {name, "failed", cat(e.kind() == ErrorKind::unsupported ? "unsupported: " : "error: ", msg)};
  } catch (const std::exception& e) {
    return {name, "failed", cat("error: ", e.what())};
  }
}

}  // namespace rlx::frontends::onnx
