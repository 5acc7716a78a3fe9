// A bounds-checked little-endian cursor over untrusted bytes. Every read names its field, so a
// short or malformed file fails with "SOURCE: FIELD at byte offset N: what was wrong".
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rlx::formats {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string source)
      : data_(data), size_(size), source_(std::move(source)) {}

  size_t offset() const { return pos_; }
  size_t size() const { return size_; }
  size_t remaining() const { return size_ - pos_; }
  const std::string& source() const { return source_; }
  const uint8_t* data() const { return data_; }

  uint8_t u8(std::string_view field) { return load<uint8_t>(field); }
  uint16_t u16(std::string_view field) { return load<uint16_t>(field); }
  uint32_t u32(std::string_view field) { return load<uint32_t>(field); }
  uint64_t u64(std::string_view field) { return load<uint64_t>(field); }
  // `n` raw bytes; the view points into the underlying buffer.
  std::string_view bytes(uint64_t n, std::string_view field);
  void seek(uint64_t offset, std::string_view field);

  // Throws rlx::Error(format) "SOURCE: FIELD at byte offset OFFSET: MESSAGE".
  [[noreturn]] void fail(size_t offset, std::string_view field, const std::string& message) const;
  void require(uint64_t n, std::string_view field) const;

 private:
  template <class T>
  T load(std::string_view field) {
    require(sizeof(T), field);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));  // files are little-endian, like every host we build for
    pos_ += sizeof(T);
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string source_;
};

// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF);
// on failure *bad_at is the offset of the first bad byte.
bool is_valid_utf8(std::string_view s, size_t* bad_at = nullptr);

}  // namespace rlx::formats
