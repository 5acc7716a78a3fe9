// Files and models: rlx.load's readers (ONNX, safetensors, GGUF, Hugging Face directories),
// sentence embeddings and streamed text generation. Compute runs without the GIL.
#include <filesystem>
#include <optional>

#include "bindings.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/hf_dir.h"
#include "formats/safetensors.h"
#include "formats/tensor_view.h"
#include "formats/weight_type.h"
#include "frontends/onnx/onnx.h"
#include "models/bert.h"
#include "models/generate.h"
#include "models/qwen3_model.h"
#include "models/sentence_embedder.h"
#include "rlx/error.h"
#include "tensors.h"
#include "text/decode_stream.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

namespace fs = std::filesystem;

// What a path holds: "onnx", "gguf", "safetensors" (weights only), "bert" or "llama" (a Hugging
// Face model directory of that family).
std::string kind_of(const std::string& path) {
  if (!fs::exists(path)) throw Error(ErrorKind::io, cat(path, ": no such file or directory"));
  if (fs::is_directory(path)) {
    formats::HfDirectory dir = formats::scan_hf_directory(path);
    if (!dir.config) {
      if (dir.gguf.size() == 1) return "gguf";
      if (fs::exists(fs::path(path) / "modules.json")) return "bert";  // sentence-transformers layout
      return "safetensors";
    }
    return formats::read_hf_config(*dir.config).family == formats::HfFamily::llama ? "llama" : "bert";
  }
  if (frontends::onnx::is_onnx_file(path)) return "onnx";
  std::string ext = fs::path(path).extension().string();
  if (ext == ".gguf") return "gguf";
  if (ext == ".safetensors" || ext == ".json") return "safetensors";
  throw Error(ErrorKind::invalid_argument, cat(path, ": expected an .onnx, .gguf or .safetensors file or a model directory"));
}

// The tensors of a weight file as NumPy arrays viewing the mapping (packed GGUF blocks as uint8
// rows; their type is in the returned types dict).
py::tuple read_weights(const std::string& path, const std::string& kind) {
  py::dict tensors, types, metadata;
  auto add = [&](const formats::TensorView& v) {
    Tensor t = formats::weight_type_dtype(v.type) ? formats::to_tensor(v)
                                                   : Tensor::wrap(DType::u8, {static_cast<int64_t>(v.nbytes)}, const_cast<uint8_t*>(v.data), v.owner);
    tensors[py::str(v.name)] = from_tensor(t);
    types[py::str(v.name)] = v.type_name();
  };
  if (kind == "gguf") {
    std::string file = path;
    if (fs::is_directory(path)) file = formats::scan_hf_directory(path).gguf.at(0);
    auto g = std::make_shared<formats::GgufFile>(formats::read_gguf(file));
    for (const auto& v : g->tensors) add(v);
    for (const auto& [k, v] : g->metadata) metadata[py::str(k)] = v.summary();
  } else {
    formats::SafetensorsModel st = formats::open_safetensors_model(path);
    for (const auto& v : st.tensors) add(v);
    for (const auto& [k, v] : st.metadata) metadata[py::str(k)] = v;
  }
  return py::make_tuple(tensors, types, metadata);
}

SessionOptions session_options(const std::string& precision, const std::string& activations) {
  SessionOptions o;
  o.precision = PrecisionPolicy(precision);
  o.precision.quantized_activations = activations;
  return o;
}

// A llama-family model and its runner; one generation at a time (a later generate() ends an
// earlier one's iterator).
class Generator {
 public:
  Generator(const std::string& path, const std::string& device, const std::string& precision, const std::string& activations) {
    PrecisionPolicy policy(precision);
    policy.quantized_activations = activations;
    models::LlamaLoadOptions lo;
    lo.precision = policy;
    model_ = models::load_llama_model(path, lo);
    models::LlamaRunnerOptions ro;
    ro.device = device;
    ro.precision = policy;
    runner_ = std::make_unique<models::LlamaRunner>(model_.spec, model_.weights, ro);
  }
  const models::LlamaModel& model() const { return model_; }
  models::LlamaRunner& runner() { return *runner_; }
  int64_t generation = 0;  // counts generate() calls

 private:
  models::LlamaModel model_;
  std::unique_ptr<models::LlamaRunner> runner_;
};

// What generate() returns: an iterator of text pieces (or ids) that runs one decode step per item.
class TokenIterator {
 public:
  TokenIterator(Generator& g, std::vector<int32_t> prompt, const models::GenerateOptions& o, bool text)
      : g_(g), generation_(++g.generation), text_(text && g.model().tokenizer) {
    stream_.emplace(g.runner(), std::move(prompt), o);
    eos_ = o.eos_token_ids;
    if (text_) decode_.emplace(g.model().tokenizer->decode_stream(true));
  }

  py::object next() {
    if (generation_ != g_.generation) throw Error(ErrorKind::invalid_argument, "this generation was superseded by a later generate() on the same Generator");
    while (true) {
      if (finished_) throw py::stop_iteration();
      std::optional<int32_t> id;
      {
        py::gil_scoped_release nogil;
        id = stream_->next();
      }
      if (!id) {
        finished_ = true;
        if (text_) {
          std::string tail = decode_->finish();
          if (!tail.empty()) return py::str(tail);
        }
        continue;
      }
      if (!text_) return py::int_(*id);
      bool eos = std::find(eos_.begin(), eos_.end(), *id) != eos_.end();
      if (eos || static_cast<size_t>(*id) >= g_.model().tokenizer->vocab_size()) continue;
      std::string piece = decode_->step(*id);
      if (!piece.empty()) return py::str(piece);
    }
  }
  const models::GenerateResult& result() const { return stream_->result(); }

 private:
  Generator& g_;
  int64_t generation_;
  bool text_;
  std::optional<models::TokenStream> stream_;
  std::optional<text::DecodeStream> decode_;
  std::vector<int64_t> eos_;
  bool finished_ = false;
};

}  // namespace

void bind_models(py::module_& m) {
  m.def("_kind", &kind_of, "What a path holds: onnx, gguf, safetensors, bert or llama");
  m.def("_read_weights", &read_weights, py::arg("path"), py::arg("kind"));
  m.def("_load_onnx", [](const std::string& path) {
    frontends::onnx::ImportedModel im;
    {
      py::gil_scoped_release nogil;
      im = frontends::onnx::import_model(path);
    }
    return py::make_tuple(Graph(im.graph), im.inputs, im.outputs);
  });
  m.def("_load_bert_graph", [](const std::string& path) {
    py::gil_scoped_release nogil;
    return Graph(std::make_shared<ir::Graph>(models::load_bert(path).graph()));
  });

  py::class_<models::SentenceEmbedder>(m, "_Embedder")
      .def(py::init([](const std::string& path, const std::string& device, const std::string& precision) {
             py::gil_scoped_release nogil;
             return models::SentenceEmbedder::open(path, device, session_options(precision, "auto"));
           }),
           py::arg("path"), py::arg("device") = "cpu", py::arg("precision") = "f32")
      .def_property_readonly("dim", &models::SentenceEmbedder::dim)
      .def("embed", [](const models::SentenceEmbedder& e, const std::vector<std::string>& texts, size_t batch) {
             Tensor t;
             {
               py::gil_scoped_release nogil;
               t = e.embed(texts, batch);
             }
             return from_tensor(t);
           }, py::arg("texts"), py::arg("batch") = 32)
      .def("tokenize", [](const models::SentenceEmbedder& e, const std::string& text) { return e.tokenizer().encode(text).ids; });

  py::class_<TokenIterator>(m, "TokenIterator", "Text pieces (or ids) as they are generated; one decode step per item")
      .def("__iter__", [](TokenIterator& it) -> TokenIterator& { return it; })
      .def("__next__", &TokenIterator::next)
      .def_property_readonly("ids", [](const TokenIterator& it) { return it.result().ids; })
      .def_property_readonly("stop_reason", [](const TokenIterator& it) { return it.result().stop_reason; })
      .def_property_readonly("prefill_ms", [](const TokenIterator& it) { return it.result().prefill_ms; })
      .def_property_readonly("decode_tokens_per_second", [](const TokenIterator& it) { return it.result().decode_tokens_per_second(); });

  py::class_<Generator>(m, "_Generator")
      .def(py::init([](const std::string& path, const std::string& device, const std::string& precision, const std::string& activations) {
             py::gil_scoped_release nogil;
             return std::make_unique<Generator>(path, device, precision, activations);
           }),
           py::arg("path"), py::arg("device") = "cpu", py::arg("precision") = "f32", py::arg("activations") = "auto")
      .def("tokenize", [](const Generator& g, const std::string& text, bool special) {
             if (!g.model().tokenizer) throw Error(ErrorKind::invalid_argument, "this model ships no tokenizer; pass token ids");
             return g.model().tokenizer->encode(text, special).ids;
           }, py::arg("text"), py::arg("add_special_tokens") = true)
      .def("detokenize", [](const Generator& g, const std::vector<int32_t>& ids) {
             if (!g.model().tokenizer) throw Error(ErrorKind::invalid_argument, "this model ships no tokenizer");
             return g.model().tokenizer->decode(ids, true);
           })
      .def("chat_prompt", [](const Generator& g, const std::string& user, bool thinking) { return models::chat_prompt(g.model(), user, thinking); },
           py::arg("user"), py::arg("thinking") = true)
      .def_property_readonly("eos_token_ids", [](const Generator& g) { return g.model().eos_token_ids; })
      .def("_generate", [](Generator& g, const std::vector<int32_t>& ids, int64_t max_tokens, double temperature, int64_t top_k, double top_p,
                           double min_p, double repetition_penalty, uint64_t seed, bool ignore_eos, bool text) {
             models::GenerateOptions o;
             o.max_tokens = max_tokens;
             o.sampling = {temperature, top_k, top_p, min_p, repetition_penalty, seed};
             if (!ignore_eos) o.eos_token_ids = g.model().eos_token_ids;
             return std::make_unique<TokenIterator>(g, ids, o, text);
           }, py::keep_alive<0, 1>());
}

}  // namespace rlx::python
