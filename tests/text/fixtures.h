// Access to the tokenizer fixtures in tests/fixtures/text (made by gen_fixtures.js with Hugging
// Face tokenizers; see the README there).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "text/encoding.h"
#include "text/tokenizer.h"

namespace rlx::text::testing {

std::string fixture_path(const std::string& name);
nlohmann::json read_json(const std::string& path);
// A fixture directory's expected.json.
nlohmann::json expected(const std::string& dir);

// Checks every case of expected["cases"] (ids, tokens, type ids, attention mask, both decodes).
// `only_add_special`: -1 all cases, 0/1 only those with add_special_tokens false/true.
void check_cases(const Tokenizer& tok, const nlohmann::json& exp, int only_add_special = -1);
// Checks expected["truncation"] and expected["padding"] (each case sets its own options).
void check_truncation(Tokenizer& tok, const nlohmann::json& exp);
void check_padding(Tokenizer& tok, const nlohmann::json& exp);

}  // namespace rlx::text::testing
