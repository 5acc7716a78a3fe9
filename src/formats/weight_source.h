// The tensors of a model file by the names model builders use — Hugging Face's — whatever
// container holds them: safetensors (a file, shards and their index), GGUF (llama.cpp's names,
// mapped), and later ONNX initializers and rten. A model builder is written once per
// architecture against this interface, not once per format.
#pragma once
#include <string>

#include "formats/gguf.h"
#include "formats/safetensors.h"

namespace rlx::formats {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const std::string& path() const = 0;
  virtual const char* format() const = 0;  // "safetensors", "gguf"
  // The tensor Hugging Face calls `name`, or null. Views are zero-copy where the file is mapped.
  virtual const TensorView* find(const std::string& name) const = 0;
  // What the file itself calls it (errors name what a user can look for in the file).
  virtual std::string stored_name(const std::string& name) const { return name; }
  virtual size_t count() const = 0;  // tensors in the file
  // The file's own name of its i-th tensor (i < count()), for messages that list some.
  virtual const std::string& stored_name_at(size_t i) const = 0;
};

// Views of an open model; the model must outlive the source.
class SafetensorsSource : public WeightSource {
 public:
  explicit SafetensorsSource(const SafetensorsModel& model) : model_(model) {}
  const std::string& path() const override { return model_.path; }
  const char* format() const override { return "safetensors"; }
  const TensorView* find(const std::string& name) const override { return model_.find(name); }
  size_t count() const override { return model_.tensors.size(); }
  const std::string& stored_name_at(size_t i) const override { return model_.tensors[i].name; }

 private:
  const SafetensorsModel& model_;
};

// llama.cpp's name for a Hugging Face decoder tensor (model.layers.3.self_attn.q_proj.weight →
// blk.3.attn_q.weight, model.embed_tokens.weight → token_embd.weight, …) in a file of
// general.architecture `arch` (Gemma 2/3 name their norms differently); empty when it has none.
std::string gguf_tensor_name(const std::string& hf_name, const std::string& arch = "");

// A GGUF file's tensors under their Hugging Face names; the file must outlive the source.
class GgufSource : public WeightSource {
 public:
  explicit GgufSource(const GgufFile& file);
  const std::string& path() const override { return file_.path; }
  const char* format() const override { return "gguf"; }
  const TensorView* find(const std::string& name) const override;
  std::string stored_name(const std::string& name) const override;
  size_t count() const override { return file_.tensors.size(); }
  const std::string& stored_name_at(size_t i) const override { return file_.tensors[i].name; }

 private:
  const GgufFile& file_;
  std::string arch_;  // general.architecture
};

}  // namespace rlx::formats
