// Parses a chat template's tokens into a syntax tree: the statements HF chat templates use
// (if/elif/else, for with loop filters and else, set and block set, macro, break/continue,
// filter blocks, generation blocks) and Jinja's full expression grammar and precedence.
#pragma once
#include <string>

#include "text/jinja/ast.h"

namespace rlx::text::jinja {

// Throws rlx::Error(parse) naming the line and what was expected.
Template parse(const std::string& source);

}  // namespace rlx::text::jinja
