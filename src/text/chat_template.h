// A model's own chat template (tokenizer_config.json's `chat_template`, GGUF's
// `tokenizer.chat_template`): Jinja rendered as Hugging Face's apply_chat_template renders it,
// so the prompt RLX feeds the model is the one it was trained on, byte for byte.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace rlx::text {

namespace jinja {
struct Template;
}

class ChatTemplate {
 public:
  // Parses once; throws rlx::Error(parse) naming the line of a syntax error.
  explicit ChatTemplate(const std::string& source);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // `context`: the template's variables — messages, add_generation_prompt, tools, bos_token,
  // eos_token and any extra ones (enable_thinking, …), as transformers passes them. Throws
  // rlx::Error(invalid_argument) with the template's own message for raise_exception and with
  // the line for any other failure.
  // `now`: the time strftime_now reports (seconds since the epoch, UTC) — for reproducible
  // prompts and tests; unset, the local clock as transformers reads it.
  std::string render(const nlohmann::ordered_json& context, std::optional<int64_t> now = std::nullopt) const;

 private:
  std::unique_ptr<jinja::Template> tpl_;
};

}  // namespace rlx::text
