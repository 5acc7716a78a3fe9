#include "args.h"

#include <cstdlib>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::cli {

Args::Args(std::string command, std::vector<std::string> tokens) : command_(std::move(command)) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == "--") {
      after_.assign(tokens.begin() + static_cast<std::ptrdiff_t>(i) + 1, tokens.end());
      tokens.resize(i);
      break;
    }
  tokens_ = std::move(tokens);
  used_.assign(tokens_.size(), false);
}

std::vector<std::string> Args::values(const std::string& key) {
  std::vector<std::string> out;
  std::string opt = "--" + key, eq = opt + "=";
  // a one-letter key also reads as -k (`rlx export … -o DIR`)
  const std::string short_opt = key.size() == 1 ? "-" + key : opt;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (used_[i]) continue;
    if (tokens_[i] == opt || tokens_[i] == short_opt) {
      if (i + 1 >= tokens_.size())
        throw Error(ErrorKind::invalid_argument, cat("rlx ", command_, ": option ", opt, " needs a value"));
      used_[i] = used_[i + 1] = true;
      out.push_back(tokens_[i + 1]);
      ++i;
    } else if (starts_with(tokens_[i], eq)) {
      used_[i] = true;
      out.push_back(tokens_[i].substr(eq.size()));
    }
  }
  return out;
}

std::optional<std::string> Args::value(const std::string& key) {
  auto v = values(key);
  if (v.empty()) return std::nullopt;
  if (v.size() > 1) throw Error(ErrorKind::invalid_argument, cat("rlx ", command_, ": option --", key, " is given ", v.size(), " times"));
  return v[0];
}

std::string Args::value_or(const std::string& key, const std::string& def) { return value(key).value_or(def); }

int64_t Args::int_or(const std::string& key, int64_t def) {
  auto v = value(key);
  if (!v) return def;
  char* end = nullptr;
  long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end) throw Error(ErrorKind::invalid_argument, cat("rlx ", command_, ": --", key, " expects an integer, got '", *v, "'"));
  return x;
}

double Args::float_or(const std::string& key, double def) {
  auto v = value(key);
  if (!v) return def;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end) throw Error(ErrorKind::invalid_argument, cat("rlx ", command_, ": --", key, " expects a number, got '", *v, "'"));
  return x;
}

bool Args::flag(const std::string& key) {
  bool found = false;
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!used_[i] && tokens_[i] == "--" + key) used_[i] = found = true;
  return found;
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> out;
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!used_[i] && !starts_with(tokens_[i], "--")) {
      used_[i] = true;
      out.push_back(tokens_[i]);
    }
  return out;
}

std::optional<std::string> Args::subcommand() {
  if (tokens_.empty() || used_[0] || starts_with(tokens_[0], "--")) return std::nullopt;
  used_[0] = true;
  return tokens_[0];
}

void Args::finish() {
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!used_[i])
      throw Error(ErrorKind::invalid_argument,
                  cat("rlx ", command_, ": unknown option or extra argument '", tokens_[i], "' (see `rlx ", command_, " --help`)"));
}

}  // namespace rlx::cli
