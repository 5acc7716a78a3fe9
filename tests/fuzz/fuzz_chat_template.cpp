// libFuzzer target: chat templates (they arrive inside model files written by strangers) —
// lexing, parsing and rendering under tight limits. The input is the template, optionally
// followed by a NUL byte and a JSON context; without one a conversation with tools is used.
#include <string>

#include <nlohmann/json.hpp>

#include "rlx/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/parser.h"

namespace {

const char* kContext = R"({"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi ü 世界"},
  {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
  {"role": "tool", "content": "{\"y\": 2}"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
  "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  size_t nul = in.find('\0');
  std::string src = in.substr(0, nul);
  nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(nul == std::string::npos ? std::string(kContext) : in.substr(nul + 1), nullptr, false);
  if (!ctx.is_object()) ctx = nlohmann::ordered_json::parse(kContext);
  try {
    rlx::text::jinja::Template tpl = rlx::text::jinja::parse(src);
    rlx::text::jinja::Value v = rlx::text::jinja::Value::from_json(ctx);
    rlx::text::jinja::Limits limits;
    limits.now = 0;
    limits.max_output_bytes = 1 << 20;
    limits.max_iterations = 100000;
    limits.max_call_depth = 50;
    rlx::text::jinja::Interpreter(tpl, *v.dict, limits).render();
  } catch (const rlx::Error&) {
  }
  return 0;
}
