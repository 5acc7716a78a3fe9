// Command-line options: `--key value`, `--key=value`, boolean `--flag`, and positionals.
// Query every option first, then positionals(); finish() rejects anything left unread.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlx::cli {

class Args {
 public:
  Args(std::string command, std::vector<std::string> tokens);

  const std::string& command() const { return command_; }
  std::optional<std::string> value(const std::string& key);
  std::vector<std::string> values(const std::string& key);  // repeated --key a --key b
  std::string value_or(const std::string& key, const std::string& def);
  int64_t int_or(const std::string& key, int64_t def);
  double float_or(const std::string& key, double def);
  bool flag(const std::string& key);
  // Tokens not consumed by value()/flag(); call after every option query.
  std::vector<std::string> positionals();
  // The first token when it is not an option (`rlx bench minilm --batch 8`), consumed; lets a
  // command dispatch on a sub-command before its options are queried.
  std::optional<std::string> subcommand();
  // Throws rlx::Error(invalid_argument) naming the first unknown option.
  void finish();
  // The tokens after a bare `--`, untouched (`rlx launch -n 2 -- rlx bench …`: another command's).
  const std::vector<std::string>& after_separator() const { return after_; }

 private:
  std::string command_;
  std::vector<std::string> tokens_, after_;
  std::vector<bool> used_;
};

}  // namespace rlx::cli
