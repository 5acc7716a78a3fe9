// rlx quantize end to end on the trained hidden-256 Qwen3: a gate the quantization meets lets
// the GGUF file through; one it breaks refuses it (exit 3, nothing written, the reason said).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wide_fixture.h"

namespace rlx::models {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Ran {
  int code = -1;
  std::string out, err;
};

std::string cat_args(std::initializer_list<std::string> args) {
  std::string s;
  for (const std::string& a : args) s += " '" + a + "'";  // the paths and values here hold no quote
  return s;
}

Ran run(const std::string& args) {
  const fs::path err = fs::temp_directory_path() / "rlx_quantize_cli.err";
  FILE* p = popen((std::string(RLX_CLI) + " " + args + " 2>" + err.string()).c_str(), "r");
  Ran r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(err);
  r.err.assign(std::istreambuf_iterator<char>(f), {});
  return r;
}

// The corpus the model was trained on (its domain), as text
std::string eval_file() {
  std::ifstream f(std::string(RLX_FIXTURE_DIR) + "/../text/qwen2/expected.json");
  const json cases = json::parse(f)["cases"];
  const fs::path path = fs::temp_directory_path() / "rlx_quantize_eval.txt";
  std::ofstream o(path);
  for (size_t i = 0; i < 12 && i < cases.size(); ++i) o << cases[i]["text"].get<std::string>() << "\n";
  return path.string();
}

TEST(QuantizeCli, GatePassesAGoodQuantizationAndRefusesABadOne) {
  const std::string dir = trained_wide_model();
  if (dir.empty()) GTEST_SKIP() << "needs Debian's PyTorch (/usr/bin/python3 with torch) to train the wide fixture";
  const std::string eval = eval_file();
  const fs::path good = fs::temp_directory_path() / "rlx_wide_q8.gguf", bad = fs::temp_directory_path() / "rlx_wide_q4_0.gguf";
  fs::remove(good);
  fs::remove(bad);

  Ran q8 = run(cat_args({"quantize", dir, "--to", "gguf:Q8_0", "-o", good.string(), "--eval", eval, "--tokens", "192", "--gate", "kld=0.002,top1=95", "--json"}));
  ASSERT_EQ(q8.code, 0) << q8.out << q8.err;
  const json a = json::parse(q8.out);
  std::printf("[quantize] trained hidden-256 Qwen3 Q8_0: KLD mean %.6f p99 %.6f, top-1 %.2f%%, ppl %.4f → %.4f, %.2f MB\n", a["kld_mean"].get<double>(),
              a["kld_p99"].get<double>(), 100 * a["top1"].get<double>(), a["ppl_reference"].get<double>(), a["ppl_quantized"].get<double>(),
              a["bytes"].get<double>() / 1e6);
  EXPECT_TRUE(a["passed"].get<bool>());
  EXPECT_EQ(a["tokens"].get<int>(), 192);
  EXPECT_LT(a["kld_mean"].get<double>(), 0.002);
  EXPECT_TRUE(fs::exists(good));
  EXPECT_FALSE(fs::exists(good.string() + ".pending.gguf"));

  // Q4_0 costs this model far more than Q8_0: a gate at Q8_0's level refuses it
  Ran q4 = run(cat_args({"quantize", dir, "--to", "gguf:Q4_0", "-o", bad.string(), "--eval", eval, "--tokens", "192", "--gate", "kld=0.002"}));
  EXPECT_EQ(q4.code, 3) << q4.out << q4.err;
  EXPECT_NE(q4.err.find("refused: mean KLD"), std::string::npos) << q4.err;
  EXPECT_FALSE(fs::exists(bad));
  EXPECT_FALSE(fs::exists(bad.string() + ".pending.gguf"));

  // bad arguments are errors that say what was wrong
  Ran wrong = run(cat_args({"quantize", dir, "--to", "gguf:Q3_X", "-o", bad.string()}));
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.err.find("Q3_X"), std::string::npos) << wrong.err;
  Ran gate = run(cat_args({"quantize", dir, "--to", "gguf:Q8_0", "-o", bad.string(), "--gate", "accuracy=0.9"}));
  EXPECT_NE(gate.code, 0);
  EXPECT_NE(gate.err.find("accuracy"), std::string::npos) << gate.err;
  EXPECT_FALSE(fs::exists(bad));
  fs::remove(good);
}

}  // namespace
}  // namespace rlx::models
