// The Jinja interpreter against Python's jinja2 configured as transformers' apply_chat_template
// (tests/fixtures/chat_templates: templates written for these tests, expected prompts and
// errors rendered by jinja2), and its behaviour on broken or hostile templates.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rlx/error.h"
#include "text/chat_template.h"
#include "fixtures.h"

namespace rlx::text {
namespace {

using nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string chat_fixture(const std::string& name) { return testing::fixture_path("../chat_templates/" + name); }

TEST(ChatTemplate, EveryCaseRendersAsJinja2Does) {
  ordered_json cases = ordered_json::parse(read_file(chat_fixture("cases.json")));
  ASSERT_GE(cases.size(), 50u);
  int rendered = 0, refused = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    ChatTemplate tpl(read_file(chat_fixture("templates/" + c["template"].get<std::string>())));
    if (c.contains("expected")) {
      EXPECT_EQ(tpl.render(c["context"]), c["expected"].get<std::string>());
      ++rendered;
      continue;
    }
    std::string want = c["error"].get<std::string>();
    try {
      std::string out = tpl.render(c["context"]);
      ADD_FAILURE() << "rendered instead of failing with '" << want << "':\n" << out;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << "message: " << e.what();
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      ++refused;
    }
  }
  EXPECT_GT(rendered, 30);
  EXPECT_GT(refused, 10);
}

// The templates twenty-two popular models publish (llama.cpp's collection), each with five
// conversations (one turn, system + several turns, no generation prompt, thinking off, tools):
// the prompts Python jinja2 renders as transformers does (regen_models.py; @huggingface/jinja
// agrees on 103 of them), and the templates' own refusals (Gemma 2 has no system role).
TEST(ChatTemplate, PublishedModelTemplatesRenderAsTransformersDoes) {
  ordered_json cases = ordered_json::parse(read_file(chat_fixture("model_cases.json")));
  ASSERT_GE(cases.size(), 100u);
  const int64_t kJuly26th2026Noon = 1785067200;  // regen_models.py's strftime_now
  int rendered = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    ChatTemplate tpl(read_file(chat_fixture(c["template"].get<std::string>())));
    if (c.contains("expected")) {
      try {
        EXPECT_EQ(tpl.render(c["context"], kJuly26th2026Noon), c["expected"].get<std::string>());
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
      ++rendered;
    } else {
      try {
        tpl.render(c["context"], kJuly26th2026Noon);
        ADD_FAILURE() << "rendered where the template refuses: " << c["error"];
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), c["error"].get<std::string>());
      }
    }
  }
  EXPECT_GE(rendered, 100);
}

std::string render(const std::string& src, const ordered_json& ctx = ordered_json::object()) { return ChatTemplate(src).render(ctx); }

void expect_error(const std::string& src, const std::string& part, ErrorKind kind = ErrorKind::invalid_argument) {
  try {
    render(src);
    ADD_FAILURE() << "no error for: " << src;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << src << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << src << ": " << e.what();
  }
}

TEST(ChatTemplate, SyntaxErrorsNameTheLine) {
  expect_error("a\n{% if x %}\nb", "missing {% endif %}", ErrorKind::parse);
  expect_error("{{ x ", "unterminated {{", ErrorKind::parse);
  expect_error("line one\n{{ 'abc }}", "line 2: unterminated string", ErrorKind::parse);
  expect_error("{% frobnicate %}", "unknown or unsupported tag", ErrorKind::parse);
  expect_error("{{ 1 + }}", "expected an expression", ErrorKind::parse);
  expect_error("{% for %}{% endfor %}", "expected a name", ErrorKind::parse);
  expect_error("{% raw %}never closed", "without {% endraw %}", ErrorKind::parse);
  expect_error("{# never closed", "unterminated comment", ErrorKind::parse);
  expect_error(std::string("bad \xff byte"), "invalid UTF-8", ErrorKind::parse);
  expect_error("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}", "nesting too deep", ErrorKind::parse);
  // chains parse in a loop but evaluate recursively: their depth is bounded too
  std::string chain = "{{ 1", attrs = "{{ x", filters = "{{ x";
  for (int i = 0; i < 100000; ++i) chain += " + 1", attrs += ".a", filters += "|trim";
  for (std::string* t : {&chain, &attrs, &filters}) expect_error(*t + " }}", "nested too deep", ErrorKind::parse);
}

TEST(ChatTemplate, RuntimeErrorsNameTheLine) {
  expect_error("\n\n{{ missing.attr }}", "line 3: 'missing' is undefined");
  expect_error("{{ 1 // 0 }}", "by zero");
  expect_error("{{ 'a' < 1 }}", "not supported between");
  expect_error("{{ x | nosuchfilter }}", "no filter named 'nosuchfilter'");
  expect_error("{{ 1 is nosuchtest }}", "no test named 'nosuchtest'");
  expect_error("{% set d = {} %}{% set d.a = 1 %}", "non-namespace object");
  expect_error("{{ [1].append(2) }}", "unsafe");
  expect_error("{{ raise_exception('the template says no') }}", "the template says no");
}

TEST(ChatTemplate, HostileTemplatesAreBounded) {
  expect_error("{% for i in range(100000000) %}{% endfor %}", "loop iterations");
  expect_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "nested too deep");
  expect_error("{% set s = 'x' * 100000 %}{% for i in range(1000) %}{{ s }}{% endfor %}", "the output passes");
  expect_error("{{ 'ab' * 100000000000 }}", "too large");
  expect_error("{{ 9223372036854775807 + 1 }}", "integer overflow");
  // values built deeper and deeper, or holding themselves, never recurse without bound
  expect_error("{% set ns = namespace(x=1) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}", "nested deeper");
  expect_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}", "not JSON serializable");
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me == ns }} {{ ns }}"), "True <Namespace>");
}

TEST(ChatTemplate, ContextValuesKeepTheirTypesAndOrder) {
  ordered_json ctx = ordered_json::parse(R"({"tools": [{"name": "f", "parameters": {"z": 1, "a": 2.0}}], "flag": true})");
  EXPECT_EQ(render("{{ tools[0] | tojson }}|{{ tools[0].parameters.a }}|{{ flag }}|{{ flag is number }}", ctx),
            "{\"name\": \"f\", \"parameters\": {\"z\": 1, \"a\": 2.0}}|2.0|True|True");
  EXPECT_THROW(ChatTemplate("x").render(ordered_json::array()), Error);
  // a request's JSON reaches the template: nesting is bounded, with an error instead of a crash
  ordered_json deep = ordered_json::array();
  for (int i = 0; i < 1000; ++i) deep = ordered_json::array({deep});
  EXPECT_THROW(ChatTemplate("{{ x }}").render({{"x", deep}}), Error);
}

}  // namespace
}  // namespace rlx::text
