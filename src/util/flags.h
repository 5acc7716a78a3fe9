// The flags registry: every tunable read from the environment lives in flags.def.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

struct Flags {
#define RLX_FLAG_int int64_t
#define RLX_FLAG_bool bool
#define RLX_FLAG_string std::string
#define RLX_FLAG(name, type, def, doc) RLX_FLAG_##type name = def;
#include "util/flags.def"
#undef RLX_FLAG
#undef RLX_FLAG_int
#undef RLX_FLAG_bool
#undef RLX_FLAG_string
};

// Values from the environment, read once on first use; mutable_flags() lets the CLI override.
const Flags& flags();
Flags& mutable_flags();

struct FlagInfo {
  const char* name;
  const char* type;
  const char* default_text;
  const char* doc;
};
const std::vector<FlagInfo>& flag_infos();
// The current value of a flag as text (for `rlx --list-flags`).
std::string flag_value_text(const std::string& name);
// Sets a flag from text; throws rlx::Error naming the flag on a bad value.
void set_flag(const std::string& name, const std::string& value);
// docs/flags.md
std::string flags_markdown();

}  // namespace rlx
