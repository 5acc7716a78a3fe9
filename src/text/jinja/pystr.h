// Python's str as jinja2's filters and a template's str methods see it — whitespace, case
// mappings and classes per code point (Unicode), split/strip/replace, str.format — and the
// helpers they share: call arguments, iteration, attribute paths.
#pragma once
#include <cstdint>
#include <string>

#include "text/jinja/interpreter.h"

namespace rlx::text::jinja {

bool is_int(const Value& v);  // int or bool, as Python counts them
int64_t as_int(const Value& v);
// Argument k of a call: positional, else by keyword, else the default.
Value arg(const List& args, const KwArgs& kw, size_t k, const char* name, Value def = Value::undefined());

bool py_space(unsigned char c);
bool py_space_cp(const std::string& cp);  // str.isspace of one code point (UTF-8)
std::string strip(const std::string& s, const Value& chars, bool left, bool right);
char32_t cp_lower(char32_t c);
char32_t cp_upper(char32_t c);
char32_t cp_title(char32_t c);
bool cp_cased(char32_t c);
bool cp_alpha(char32_t c);
bool cp_alnum(char32_t c);
bool cp_digit(char32_t c);
std::string lower(const std::string& s);
std::string upper(const std::string& s);
std::string capitalize(const std::string& s);
std::string title(const std::string& s);
bool istitle(const std::string& s);
bool all_cps(const std::string& s, bool (*p)(char32_t));  // non-empty and every code point passes
std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
List split(const std::string& s, const Value& sep, int64_t maxsplit);
List splitlines(const std::string& s);
int64_t cp_index(const std::string& s, size_t byte);  // the code point index of a byte offset

List iterate(Interpreter& in, const Value& v);  // for-loop items of a list, dict (keys) or string
Value attribute(Interpreter& in, Value v, const std::string& path);  // attribute="a.b.0"
// str.format with {} / {0} / {name} fields (no format specs).
std::string py_format(Interpreter& in, const std::string& f, const List& args, const KwArgs& kw);

}  // namespace rlx::text::jinja
