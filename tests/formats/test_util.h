// Helpers shared by the format tests: scratch directories, files, subprocesses, and a raw
// little-endian byte builder for hand-made (often malformed) files.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rlx::formats::test {

// A fresh empty directory under the build tree, named after the test.
std::string scratch_dir(const std::string& name);
std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text(const std::string& path, const std::string& text);
// Runs a shell command; returns its exit status and puts stdout (and stderr when asked) in *out.
int run_command(const std::string& cmd, std::string* out, bool with_stderr = false);
// Debian's python3 with numpy (the pyenv python3 on PATH has no numpy).
bool have_numpy();
std::string source_path(const std::string& relative);  // under the repository root

class Bytes {
 public:
  std::vector<uint8_t> b;
  template <class T>
  Bytes& put(T v) {
    size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
    return *this;
  }
  Bytes& raw(const std::string& s) {
    size_t at = b.size();
    b.resize(at + s.size());
    if (!s.empty()) std::memcpy(b.data() + at, s.data(), s.size());
    return *this;
  }
  Bytes& str(const std::string& s) { return put<uint64_t>(s.size()).raw(s); }  // GGUF string
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  Bytes& pad(size_t alignment) { return zeros((alignment - b.size() % alignment) % alignment); }
  size_t size() const { return b.size(); }
};

// A safetensors file from a header text and `data_bytes` bytes of data (values 0..255 repeating).
std::vector<uint8_t> safetensors_raw(const std::string& header, size_t data_bytes);

}  // namespace rlx::formats::test
