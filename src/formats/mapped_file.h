// A whole file mapped into memory, copy-on-write: tensors view it without copying, writes to a
// view stay private to the process, and the mapping lives as long as any view's owner.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace rlx::formats {

class MappedFile {
 public:
  // Throws rlx::Error(io) naming the path and the system's reason.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a small text file whole (config.json, index.json); refuses files above `max_bytes`.
std::string read_text_file(const std::string& path, size_t max_bytes);

}  // namespace rlx::formats
