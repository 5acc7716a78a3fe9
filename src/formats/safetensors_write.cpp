#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "formats/byte_reader.h"
#include "formats/file_write.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

struct Layout {
  std::string header;          // padded JSON
  std::vector<size_t> order;   // tensor indices in data order
  uint64_t data_bytes = 0;
};

Layout plan(const std::vector<TensorView>& tensors, const std::map<std::string, std::string>& metadata) {
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (!weight_type_in_safetensors(t.type))
      throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' is ", t.type_name(),
                                                   ", which safetensors cannot store; write it to GGUF"));
    if (t.name.empty() || t.name == "__metadata__" || !is_valid_utf8(t.name))
      throw Error(ErrorKind::invalid_argument, cat("tensor name '", t.name, "' cannot be stored in safetensors"));
    if (!names.insert(t.name).second)
      throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' is given twice"));
    for (int64_t d : t.shape)
      if (d < 0) throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' has a negative dim"));
    auto need = weight_type_bytes(t.type, static_cast<uint64_t>(t.numel()));
    if (!need || *need != t.nbytes)
      throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' has ", t.nbytes, " bytes, but ",
                                                   t.type_name(), " [", join(t.shape), "] needs ", need ? *need : 0));
  }
  for (const auto& [k, v] : metadata)
    if (!is_valid_utf8(k) || !is_valid_utf8(v))
      throw Error(ErrorKind::invalid_argument, cat("metadata '", k, "' is not valid UTF-8"));
  Layout l;
  l.order.resize(tensors.size());
  std::iota(l.order.begin(), l.order.end(), 0);
  // Larger elements first: every offset is then a multiple of its own element size, so
  // readers can view the data in place (the reference writer orders by alignment the same way).
  auto elem = [&](size_t i) {
    WeightType t = tensors[i].type;
    return weight_type_block_elems(t) == 1 ? weight_type_block_bytes(t) : 0;
  };
  std::stable_sort(l.order.begin(), l.order.end(), [&](size_t a, size_t b) { return elem(a) > elem(b); });
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  for (size_t i : l.order) {
    const auto& t = tensors[i];
    h[t.name] = {{"dtype", weight_type_name(t.type)},
                 {"shape", t.shape},
                 {"data_offsets", {l.data_bytes, l.data_bytes + t.nbytes}}};
    l.data_bytes += t.nbytes;
  }
  l.header = h.dump();
  l.header.append((8 - l.header.size() % 8) % 8, ' ');  // data starts 8-aligned in the file
  return l;
}

template <class Put>
void emit(const Layout& l, const std::vector<TensorView>& tensors, Put&& put) {
  uint64_t n = l.header.size();
  uint8_t len[8];
  std::memcpy(len, &n, 8);
  put(len, 8);
  put(l.header.data(), l.header.size());
  for (size_t i : l.order) put(tensors[i].data, tensors[i].nbytes);
}

}  // namespace

std::vector<uint8_t> safetensors_bytes(const std::vector<TensorView>& tensors,
                                       const std::map<std::string, std::string>& metadata) {
  Layout l = plan(tensors, metadata);
  std::vector<uint8_t> out;
  out.resize(8 + l.header.size() + l.data_bytes);
  size_t at = 0;
  emit(l, tensors, [&](const void* p, size_t n) {
    if (n) std::memcpy(out.data() + at, p, n);
    at += n;
  });
  return out;
}

void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Layout l = plan(tensors, metadata);
  write_file_atomic(path, [&](const auto& put) { emit(l, tensors, put); });
}

}  // namespace rlx::formats
