// Typed access to tokenizer.json / tokenizer_config.json fields. Errors name the file and the
// field path (`tokenizer.json: model.vocab["a"]: expected integer, found string`).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rlx::text {

using Json = nlohmann::json;

[[noreturn]] void json_fail(std::string_view where, std::string_view what);
const char* json_type_name(const Json& j);

// The member `key` of object `j`, or nullptr when absent or null.
const Json* json_member(const Json& j, std::string_view key);
bool json_bool(const Json& j, std::string_view key, bool def, std::string_view where);
std::optional<bool> json_opt_bool(const Json& j, std::string_view key, std::string_view where);
std::string json_string(const Json& j, std::string_view key, std::string_view where);  // required
std::optional<std::string> json_opt_string(const Json& j, std::string_view key, std::string_view where);
int64_t json_int(const Json& j, std::string_view key, int64_t def, std::string_view where);
const Json& json_required(const Json& j, std::string_view key, std::string_view where);

}  // namespace rlx::text
