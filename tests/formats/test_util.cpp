#include "test_util.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <gtest/gtest.h>

namespace rlx::formats::test {

namespace fs = std::filesystem;

std::string scratch_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  fs::path p = fs::path(RLX_BINARY_DIR) / "format_test_scratch" / (test + "." + name + "." + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

int run_command(const std::string& cmd, std::string* out, bool with_stderr) {
  std::string full = cmd + (with_stderr ? " 2>&1" : "");
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    if (out) out->append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have_numpy() {
  static int ok = run_command("/usr/bin/python3 -c 'import numpy' 2>/dev/null", nullptr) == 0 ? 1 : 0;
  return ok == 1;
}

std::string source_path(const std::string& relative) { return std::string(RLX_SOURCE_DIR) + "/" + relative; }

std::vector<uint8_t> safetensors_raw(const std::string& header, size_t data_bytes) {
  Bytes b;
  b.put<uint64_t>(header.size()).raw(header);
  for (size_t i = 0; i < data_bytes; ++i) b.put<uint8_t>(static_cast<uint8_t>(i));
  return b.b;
}

}  // namespace rlx::formats::test
