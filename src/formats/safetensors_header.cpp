#include "formats/safetensors_header.h"

#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

// An input iterator that records how far the JSON lexer has read, so SAX events (which carry
// no position) can report a byte offset.
struct TrackingIter {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** last = nullptr;
  reference operator*() const { return *p; }
  TrackingIter& operator++() {
    ++p;
    if (last && p > *last) *last = p;
    return *this;
  }
  TrackingIter operator++(int) {
    TrackingIter t = *this;
    ++*this;
    return t;
  }
  bool operator==(const TrackingIter& o) const { return p == o.p; }
  bool operator!=(const TrackingIter& o) const { return p != o.p; }
};

using json = nlohmann::json;

class HeaderSax {
 public:
  HeaderSax(const char* begin, const char** pos, const std::string& source, uint64_t base, const SafetensorsLimits& lim)
      : begin_(begin), pos_(pos), source_(source), base_(base), limits_(lim) {}

  SafetensorsHeader result;

  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t v) {
    if (depth_ == 3) fail(cat("'", key_, "' of tensor '", entry_.name, "' holds ", v, "; values must be >= 0"));
    return scalar("a number");
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (depth_ != 3) return scalar("a number");
    if (field_ == Field::shape) {
      if (entry_.shape.size() >= limits_.max_rank)
        fail(cat("tensor '", entry_.name, "' has more than ", limits_.max_rank, " dims"));
      entry_.shape.push_back(v);
    } else {
      if (n_offsets_ >= 2) fail(cat("data_offsets of tensor '", entry_.name, "' has more than 2 values"));
      (n_offsets_++ == 0 ? entry_.begin : entry_.end) = v;
    }
    return true;
  }
  bool number_float(json::number_float_t, const std::string& text) {
    if (depth_ == 3) fail(cat("'", key_, "' of tensor '", entry_.name, "' holds ", text, "; values must be integers"));
    return scalar("a number");
  }
  bool binary(json::binary_t&) { return scalar("binary"); }
  bool string(std::string& s) {
    if (depth_ == 2 && in_metadata_) {
      result.metadata[key_] = s;
      return true;
    }
    if (depth_ == 2 && field_ == Field::dtype) {
      entry_.dtype = s;
      return true;
    }
    return scalar("a string");
  }
  bool start_object(std::size_t) {
    if (depth_ == 0) {
      depth_ = 1;
      return true;
    }
    if (depth_ == 1) {
      depth_ = 2;
      in_metadata_ = key_ == "__metadata__";
      if (!in_metadata_) {
        if (result.entries.size() >= limits_.max_tensors)
          fail(cat("more than ", limits_.max_tensors, " tensors; the header is corrupt or hostile"));
        entry_ = HeaderEntry{};
        entry_.name = key_;
        entry_.at = key_at_;
        seen_fields_ = 0;
      }
      seen_keys_.clear();
      return true;
    }
    return scalar("an object");
  }
  bool key(std::string& k) {
    key_ = k;
    key_at_ = offset();
    if (depth_ == 1) {
      if (!names_.insert(k).second) fail(cat("tensor '", k, "' appears twice in the header"));
      return true;
    }
    if (in_metadata_) {
      if (!seen_keys_.insert(k).second) fail(cat("__metadata__ key '", k, "' appears twice"));
      return true;
    }
    Field f = k == "dtype" ? Field::dtype : k == "shape" ? Field::shape : k == "data_offsets" ? Field::offsets : Field::none;
    if (f == Field::none)
      fail(cat("tensor '", entry_.name, "' has unknown field '", k, "'; expected dtype, shape and data_offsets"));
    if (seen_fields_ & (1u << static_cast<int>(f))) fail(cat("tensor '", entry_.name, "' repeats field '", k, "'"));
    seen_fields_ |= 1u << static_cast<int>(f);
    field_ = f;
    return true;
  }
  bool end_object() {
    if (depth_ == 2 && !in_metadata_) {
      const std::pair<Field, const char*> fields[] = {
          {Field::dtype, "dtype"}, {Field::shape, "shape"}, {Field::offsets, "data_offsets"}};
      for (const auto& [f, name] : fields)
        if (!(seen_fields_ & (1u << static_cast<int>(f)))) fail(cat("tensor '", entry_.name, "' has no '", name, "' field"));
      result.entries.push_back(std::move(entry_));
    }
    in_metadata_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 2 && !in_metadata_ && (field_ == Field::shape || field_ == Field::offsets)) {
      depth_ = 3;
      n_offsets_ = 0;
      return true;
    }
    return scalar("an array");
  }
  bool end_array() {
    if (field_ == Field::offsets && n_offsets_ != 2)
      fail(cat("data_offsets of tensor '", entry_.name, "' has ", n_offsets_, " values; expected [begin, end]"));
    depth_ = 2;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    throw Error(ErrorKind::format, cat(source_, ": header JSON at byte offset ", base_ + (position ? position - 1 : 0),
                                       ": malformed JSON: ", what));
  }

 private:
  enum class Field { none, dtype, shape, offsets };

  uint64_t offset() const { return base_ + static_cast<uint64_t>(*pos_ - begin_); }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(ErrorKind::format, cat(source_, ": header at byte offset ", offset(), ": ", msg));
  }
  // A value where the layout allows none of its kind.
  bool scalar(const char* what) {
    if (depth_ == 0) fail(cat("the header must be a JSON object, found ", what));
    if (depth_ == 1) fail(cat("entry '", key_, "' must be an object, found ", what));
    if (in_metadata_) fail(cat("__metadata__ value '", key_, "' must be a string, found ", what));
    if (depth_ == 3) fail(cat("'", key_, "' of tensor '", entry_.name, "' must hold integers, found ", what));
    const char* expect = field_ == Field::dtype ? "a string" : "an array of integers";
    fail(cat("field '", key_, "' of tensor '", entry_.name, "' must be ", expect, ", found ", what));
  }

  const char* begin_;
  const char** pos_;
  const std::string& source_;
  uint64_t base_;
  const SafetensorsLimits& limits_;
  int depth_ = 0;
  bool in_metadata_ = false;
  std::string key_;
  uint64_t key_at_ = 0;
  Field field_ = Field::none;
  unsigned seen_fields_ = 0;
  int n_offsets_ = 0;
  HeaderEntry entry_;
  std::set<std::string> names_, seen_keys_;
};

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view text, const std::string& source, uint64_t base_offset,
                                           const SafetensorsLimits& limits) {
  const char* pos = text.data();
  HeaderSax sax(text.data(), &pos, source, base_offset, limits);
  TrackingIter first{text.data(), &pos}, last{text.data() + text.size(), nullptr};
  // The parser is iterative (an explicit state stack), and the handler rejects any nesting
  // beyond the 3 levels the layout has, so deep input cannot recurse or grow memory.
  nlohmann::json::sax_parse(first, last, &sax);
  return std::move(sax.result);
}

}  // namespace rlx::formats
