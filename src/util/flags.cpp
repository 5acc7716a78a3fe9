#include "util/flags.h"

#include <cstdlib>
#include <mutex>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx {

namespace {

void parse_into(int64_t& out, const std::string& name, const std::string& text) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    throw Error(ErrorKind::invalid_argument, cat("flag ", name, " expects an integer, got '", text, "'"));
  out = v;
}
void parse_into(bool& out, const std::string& name, const std::string& text) {
  if (text == "1" || text == "true" || text == "on" || text == "yes") out = true;
  else if (text == "0" || text == "false" || text == "off" || text == "no" || text.empty()) out = false;
  else throw Error(ErrorKind::invalid_argument, cat("flag ", name, " expects 0/1/true/false, got '", text, "'"));
}
void parse_into(std::string& out, const std::string&, const std::string& text) { out = text; }

std::string to_text(int64_t v) { return std::to_string(v); }
std::string to_text(bool v) { return v ? "1" : "0"; }
std::string to_text(const std::string& v) { return v; }

Flags read_environment() {
  Flags f;
#define RLX_FLAG(name, type, def, doc)                                  \
  if (const char* env = std::getenv(#name)) {                           \
    try {                                                               \
      parse_into(f.name, #name, env);                                   \
    } catch (const Error&) { /* a bad environment value keeps the default */ \
    }                                                                   \
  }
#include "util/flags.def"
#undef RLX_FLAG
  return f;
}

Flags& storage() {
  static Flags f = read_environment();
  return f;
}

}  // namespace

const Flags& flags() { return storage(); }
Flags& mutable_flags() { return storage(); }

const std::vector<FlagInfo>& flag_infos() {
  static const std::vector<FlagInfo> infos = {
#define RLX_FLAG(name, type, def, doc) {#name, #type, #def, doc},
#include "util/flags.def"
#undef RLX_FLAG
  };
  return infos;
}

std::string flag_value_text(const std::string& name) {
#define RLX_FLAG(fname, type, def, doc) \
  if (name == #fname) return to_text(flags().fname);
#include "util/flags.def"
#undef RLX_FLAG
  throw Error(ErrorKind::invalid_argument, cat("unknown flag ", name, "; `rlx --list-flags` lists them"));
}

void set_flag(const std::string& name, const std::string& value) {
#define RLX_FLAG(fname, type, def, doc) \
  if (name == #fname) return parse_into(mutable_flags().fname, name, value);
#include "util/flags.def"
#undef RLX_FLAG
  throw Error(ErrorKind::invalid_argument, cat("unknown flag ", name, "; `rlx --list-flags` lists them"));
}

std::string flags_markdown() {
  std::string out =
      "# RLX flags\n\n"
      "Generated from `src/util/flags.def` by `rlx --list-flags --markdown`; do not edit by hand.\n"
      "Every flag is read from the environment variable of the same name.\n\n"
      "| flag | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& f : flag_infos())
    out += cat("| `", f.name, "` | ", f.type, " | `", f.default_text, "` | ", f.doc, " |\n");
  return out;
}

}  // namespace rlx
