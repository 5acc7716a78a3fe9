// rlx quantize end to end on the trained hidden-256 Qwen3: a gate the quantization meets lets
// the GGUF file through; one it breaks refuses it (exit 3, nothing written, the reason said).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "formats/gguf.h"
#include "models/qwen3_model.h"
#include "quant/importance.h"
#include "rlx/error.h"
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

  // a llama.cpp mix: Q3_K_M's types in the file (2 layers: ffn_down below n/16 = 0 layers gets Q4_K)
  {
    const fs::path mixed = fs::temp_directory_path() / "rlx_wide_q3_k_m.gguf";
    Ran q3 = run(cat_args({"quantize", dir, "--to", "gguf:Q3_K_M", "-o", mixed.string(), "--eval", eval, "--tokens", "64", "--json"}));
    ASSERT_EQ(q3.code, 0) << q3.out << q3.err;
    formats::GgufFile f = formats::read_gguf(mixed.string());
    std::map<std::string, std::string> types;
    for (const auto& t : f.tensors) types[t.name] = t.type_name();
    EXPECT_EQ(types["token_embd.weight"], "Q6_K");  // tied: the output matrix
    EXPECT_EQ(types["blk.0.attn_v.weight"], "Q5_K");
    EXPECT_EQ(types["blk.1.attn_v.weight"], "Q5_K");
    EXPECT_EQ(types["blk.0.ffn_down.weight"], "Q4_K");
    EXPECT_EQ(types["blk.1.attn_output.weight"], "Q4_K");
    EXPECT_EQ(types["blk.1.attn_q.weight"], "Q3_K");
    EXPECT_EQ(types["blk.0.ffn_gate.weight"], "Q3_K");
    fs::remove(mixed);
  }

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

namespace rlx::models {
namespace {

// The importance of layer 0's q/k/v columns is the mean square of their input — the embeddings
// RMS-normalized and scaled by input_layernorm — which the host computes here directly.
TEST(Importance, FirstLayerInputStatisticsMatchAHostComputation) {
  LlamaModel m = load_llama_model(std::string(RLX_FIXTURE_DIR) + "/qwen3_tiny");
  const std::vector<int32_t> ids = {494, 17, 3, 250, 42, 42, 7, 300, 11};
  quant::ImportanceOptions o;
  o.chunk = 4;  // three sequences: 4 + 4 + 1 tokens
  const auto imp = quant::llama_matmul_importance(m.spec, m.weights, ids, o);
  const int64_t H = m.spec.hidden_size;
  const Tensor emb = m.weights.at("model.embed_tokens.weight").dense.contiguous();
  const Tensor norm = m.weights.at("model.layers.0.input_layernorm.weight").dense.contiguous();
  std::vector<double> want(static_cast<size_t>(H), 0.0);
  for (int32_t id : ids) {
    const float* e = emb.data_as<float>() + static_cast<int64_t>(id) * H;
    double ms = 0;
    for (int64_t j = 0; j < H; ++j) ms += static_cast<double>(e[j]) * e[j];
    const double r = 1.0 / std::sqrt(ms / static_cast<double>(H) + m.spec.rms_norm_eps);
    for (int64_t j = 0; j < H; ++j) {
      const double x = e[j] * r * norm.data_as<float>()[j];
      want[static_cast<size_t>(j)] += x * x / static_cast<double>(ids.size());
    }
  }
  for (const char* name : {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.v_proj.weight", "model.layers.0.mlp.gate_proj.weight"}) {
    ASSERT_TRUE(imp.count(name)) << name;
    ASSERT_EQ(imp.at(name).size(), static_cast<size_t>(H)) << name;
  }
  double worst = 0;
  for (int64_t j = 0; j < H; ++j)
    worst = std::max(worst, std::fabs(imp.at("model.layers.0.self_attn.q_proj.weight")[static_cast<size_t>(j)] - want[static_cast<size_t>(j)]) /
                                std::max(want[static_cast<size_t>(j)], 1e-3));
  EXPECT_LT(worst, 1e-4);
  EXPECT_EQ(imp.at("model.layers.0.mlp.down_proj.weight").size(), static_cast<size_t>(m.spec.intermediate_size));
  EXPECT_EQ(imp.count("lm_head.weight") + imp.count("model.embed_tokens.weight"), 0u);  // the head sees one row: not measured
  EXPECT_THROW(quant::llama_matmul_importance(m.spec, m.weights, {}), Error);
}

}  // namespace
}  // namespace rlx::models
