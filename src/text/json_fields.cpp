#include "text/json_fields.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

void json_fail(std::string_view where, std::string_view what) { throw Error(ErrorKind::format, cat(where, ": ", what)); }

const char* json_type_name(const Json& j) { return j.type_name(); }

const Json* json_member(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

const Json& json_required(const Json& j, std::string_view key, std::string_view where) {
  if (!j.is_object()) json_fail(where, cat("expected an object, found ", j.type_name()));
  const Json* v = json_member(j, key);
  if (!v) json_fail(where, cat("missing field '", key, "'"));
  return *v;
}

bool json_bool(const Json& j, std::string_view key, bool def, std::string_view where) {
  return json_opt_bool(j, key, where).value_or(def);
}

std::optional<bool> json_opt_bool(const Json& j, std::string_view key, std::string_view where) {
  const Json* v = json_member(j, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) json_fail(where, cat("field '", key, "': expected true/false, found ", v->type_name()));
  return v->get<bool>();
}

std::string json_string(const Json& j, std::string_view key, std::string_view where) {
  const Json& v = json_required(j, key, where);
  if (!v.is_string()) json_fail(where, cat("field '", key, "': expected a string, found ", v.type_name()));
  return v.get<std::string>();
}

std::optional<std::string> json_opt_string(const Json& j, std::string_view key, std::string_view where) {
  const Json* v = json_member(j, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) json_fail(where, cat("field '", key, "': expected a string, found ", v->type_name()));
  return v->get<std::string>();
}

int64_t json_int(const Json& j, std::string_view key, int64_t def, std::string_view where) {
  const Json* v = json_member(j, key);
  if (!v) return def;
  if (!v->is_number_integer()) json_fail(where, cat("field '", key, "': expected an integer, found ", v->type_name()));
  return v->get<int64_t>();
}

}  // namespace rlx::text
