// The trained hidden-256 Qwen3 of fixtures/qwen3/train_wide.py, made once per build tree.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace rlx::models {

// Q4_K needs rows of 256, and random weights give near-flat logits whose argmax any
// quantization flips: a wider Qwen3 *trained* on the tokenizer corpus by the PyTorch reference
// (train_wide.py), made once per build tree when Debian's torch is present. "" without it.
inline std::string trained_wide_model() {
  namespace fs = std::filesystem;
  std::string dir = std::string(RLX_BINARY_DIR) + "/llm_fixtures/wide_trained";
  if (fs::exists(dir + "/expected.json")) return dir;
  if (!fs::exists("/usr/bin/python3")) return "";
  std::string log = (fs::temp_directory_path() / "rlx_llm_test_train_wide.log").string();
  std::string cmd = "cd " + std::string(RLX_FIXTURE_DIR) + " && OMP_NUM_THREADS=1 /usr/bin/python3 train_wide.py " + dir + " > " + log + " 2>&1";
  if (std::system(cmd.c_str()) != 0 || !fs::exists(dir + "/expected.json")) return "";
  return dir;
}

}  // namespace rlx::models
