#include "text/chat_template.h"

#include "rlx/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/parser.h"

namespace rlx::text {

ChatTemplate::ChatTemplate(const std::string& source) : tpl_(std::make_unique<jinja::Template>(jinja::parse(source))) {}
ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const nlohmann::ordered_json& context, std::optional<int64_t> now) const {
  if (!context.is_object()) throw Error(ErrorKind::invalid_argument, "a chat template's context must be a JSON object");
  jinja::Value v = jinja::Value::from_json(context);
  jinja::Limits limits;
  limits.now = now;
  jinja::Interpreter in(*tpl_, *v.dict, limits);
  return in.render();
}

}  // namespace rlx::text
