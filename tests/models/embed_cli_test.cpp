// `rlx embed` end to end — real text through the model directory's tokenizer, batched, against
// the PyTorch reference's embeddings in fixtures/bert — and `rlx bench minilm --json`'s shape.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity.h"

namespace {

using json = nlohmann::json;
constexpr double kTol = 1e-5;

std::string fixture(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

json expected(const std::string& model) {
  std::ifstream f(fixture(model) + "/expected.json");
  return json::parse(f);
}

struct Result {
  std::string out, err;
  int code = -1;
};

// Runs the CLI without a shell (texts hold quotes, tabs and newlines).
Result run(std::vector<std::string> argv) {
  argv.insert(argv.begin(), RLX_CLI);
  std::string err_path = (std::filesystem::temp_directory_path() / ("rlx_embed_cli_" + std::to_string(getpid()) + ".err")).string();
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    if (FILE* e = std::fopen(err_path.c_str(), "w")) dup2(fileno(e), 2);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  Result r;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::filesystem::remove(err_path);
  return r;
}

double max_abs_diff(const json& got, const json& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    worst = std::max(worst, std::abs(got[i].get<double>() - want[i].get<double>()));
  rlx::test::record_error(worst);
  return worst;
}

void expect_embeddings(const json& out, const json& e, const std::vector<size_t>& cases) {
  ASSERT_EQ(out["embeddings"].size(), cases.size());
  EXPECT_EQ(out["dim"], e["dim"]);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_LE(max_abs_diff(out["embeddings"][i], e["cases"][cases[i]]["embedding"]), kTol) << e["cases"][cases[i]]["name"];
}

TEST(EmbedCli, SentenceTransformersDirectory) {
  json e = expected("st_mean");
  std::vector<std::string> argv = {"embed", "--model", fixture("st_mean"), "--batch", "4", "--json"};
  std::vector<size_t> cases;
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    argv.push_back("--text=" + e["cases"][i]["text"].get<std::string>());
    cases.push_back(i);
  }
  Result r = run(argv);
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["pooling"], "mean");
  EXPECT_EQ(out["normalize"], true);
  EXPECT_EQ(out["pooling_source"], "modules.json");
  EXPECT_EQ(out["max_tokens"], 40);
  EXPECT_EQ(r.err.find("note"), std::string::npos) << r.err;
  expect_embeddings(out, e, cases);
}

TEST(EmbedCli, PlainDirectorySaysItDefaults) {
  json e = expected("bert_plain");
  std::vector<std::string> argv = {"embed", "--model", fixture("bert_plain"), "--json"};
  std::vector<size_t> cases;
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    argv.push_back("--text=" + e["cases"][i]["text"].get<std::string>());
    cases.push_back(i);
  }
  Result r = run(argv);
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["pooling_source"], "default");
  EXPECT_NE(r.err.find("mean pooling + L2 normalize by default"), std::string::npos) << r.err;
  expect_embeddings(out, e, cases);
}

TEST(EmbedCli, TextsFromAFile) {
  json e = expected("st_mean");
  std::string path = (std::filesystem::temp_directory_path() / ("rlx_embed_texts_" + std::to_string(getpid()) + ".txt")).string();
  std::vector<size_t> cases;
  {
    std::ofstream f(path);
    for (size_t i = 0; i < e["cases"].size(); ++i) {
      std::string t = e["cases"][i]["text"].get<std::string>();
      if (t.find_first_of("\r\n") != std::string::npos) continue;  // one text per line
      f << t << "\n";
      cases.push_back(i);
    }
  }
  Result r = run({"embed", "--model", fixture("st_mean"), "--file", path, "--batch", "2", "--json"});
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_embeddings(json::parse(r.out), e, cases);
}

TEST(EmbedCli, ErrorsAreOneParagraphAndNonZero) {
  Result r = run({"embed", "--text", "hi"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--model DIR is required"), std::string::npos) << r.err;
  r = run({"embed", "--model", fixture("st_mean")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no texts"), std::string::npos) << r.err;
  r = run({"embed", "--model", fixture("does_not_exist"), "--text", "hi"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
  r = run({"embed", "--model", fixture("st_mean"), "--text", "hi", "--precision", "int3"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("int3"), std::string::npos) << r.err;
}

TEST(BenchCli, MinilmJsonShape) {
  Result r = run({"bench", "minilm", "--batch", "1,2", "--seq", "8", "--runs", "2", "--warmup", "0", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["workload"], "minilm");
  EXPECT_EQ(out["device"], "cpu");
  EXPECT_EQ(out["precision"], "f32");
  ASSERT_EQ(out["results"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json& res = out["results"][i];
    EXPECT_EQ(res["batch"], i + 1);
    EXPECT_EQ(res["seq"], 8);
    EXPECT_EQ(res["runs"], 2);
    EXPECT_GT(res["p50_ms"].get<double>(), 0);
    EXPECT_GE(res["p90_ms"].get<double>(), res["p50_ms"].get<double>());
  }
}

TEST(BenchCli, UnknownWorkloadListsTheKnownOnes) {
  Result r = run({"bench", "nope"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("minilm"), std::string::npos) << r.err;
}

}  // namespace
