// `rlx tokenize` prints the reference's ids and tokens ({"ids":[…],"tokens":[…]}) for the fixture
// tokenizers: BERT adds [CLS]/[SEP] by default, BPE models add specials only with --special.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// Runs the CLI without a shell (texts hold quotes, tabs and newlines); returns stdout and the
// exit code.
std::pair<std::string, int> run(std::vector<std::string> argv) {
  int fds[2];
  if (pipe(fds) != 0) return {"", -1};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// `model_dir` defaults to `dir`; the expectations always come from `dir`.
void check_cli(const std::string& dir, bool add_special, const std::vector<std::string>& flags, std::string model_dir = "") {
  std::string model = std::string(RLX_FIXTURE_DIR) + "/" + (model_dir.empty() ? dir : model_dir);
  auto exp = read_json(std::string(RLX_FIXTURE_DIR) + "/" + dir + "/expected.json");
  size_t checked = 0;
  for (const auto& c : exp.at("cases")) {
    std::string text = c.at("text").get<std::string>();
    // argv cannot carry NUL bytes; BERT's CLI truncates at 512, which no case reaches.
    if (c.contains("pair") || c.at("add_special_tokens").get<bool>() != add_special || text.find('\0') != std::string::npos)
      continue;
    SCOPED_TRACE(dir + " " + c.at("name").get<std::string>());
    std::vector<std::string> argv = {RLX_CLI, "tokenize", "--model", model, "--text=" + text, "--json"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto [out, rc] = run(argv);
    ASSERT_EQ(rc, 0) << out;
    auto j = nlohmann::json::parse(out);
    EXPECT_EQ(j.size(), 2u);
    EXPECT_EQ(j.at("ids"), c.at("ids"));
    EXPECT_EQ(j.at("tokens"), c.at("tokens"));
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

TEST(TokenizeCli, BertAddsClsSepByDefault) { check_cli("bert_uncased", true, {}); }
TEST(TokenizeCli, IgnoresTokenizerJsonPadding) {
  // bert_padded's tokenizer.json pads to 12 and truncates to 10; the CLI prints plain ids.
  check_cli("bert_uncased", true, {}, "bert_padded");
}
TEST(TokenizeCli, BertNoSpecial) { check_cli("bert_cased", false, {"--no-special"}); }
TEST(TokenizeCli, Qwen2PlainByDefault) { check_cli("qwen2", true, {}); }  // its post-processor adds nothing
TEST(TokenizeCli, Llama3BosOnlyWithSpecial) {
  check_cli("llama3", true, {"--special"});
  check_cli("llama3", false, {});
}

TEST(TokenizeCli, PairAndErrors) {
  std::string model = std::string(RLX_FIXTURE_DIR) + "/bert_uncased";
  auto exp = read_json(model + "/expected.json");
  for (const auto& c : exp.at("cases"))
    if (c.contains("pair") && c.at("add_special_tokens").get<bool>()) {
      auto [out, rc] = run({RLX_CLI, "tokenize", "--model", model, "--text=" + c.at("text").get<std::string>(),
                            "--pair=" + c.at("pair").get<std::string>(), "--json"});
      ASSERT_EQ(rc, 0);
      EXPECT_EQ(nlohmann::json::parse(out).at("ids"), c.at("ids"));
    }
  EXPECT_EQ(run({RLX_CLI, "tokenize", "--text", "x"}).second, 2);                                  // no --model
  EXPECT_EQ(run({RLX_CLI, "tokenize", "--model", "/nonexistent", "--text", "x"}).second, 1);        // i/o error
  EXPECT_EQ(run({RLX_CLI, "tokenize", "--model", model, "--text", "x", "--bogus"}).second, 2);      // unknown option
}

}  // namespace
