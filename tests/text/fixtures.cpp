#include "fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rlx::text::testing {

std::string fixture_path(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

nlohmann::json expected(const std::string& dir) { return read_json(fixture_path(dir + "/expected.json")); }

void check_cases(const Tokenizer& tok, const nlohmann::json& exp, int only_add_special) {
  size_t checked = 0;
  for (const auto& c : exp.at("cases")) {
    bool add_special = c.at("add_special_tokens").get<bool>();
    if (only_add_special >= 0 && add_special != (only_add_special == 1)) continue;
    SCOPED_TRACE(c.at("name").get<std::string>() + ": " + c.at("text").dump() + (c.contains("pair") ? " + " + c.at("pair").dump() : ""));
    Encoding e = c.contains("pair") ? tok.encode_pair(c.at("text").get<std::string>(), c.at("pair").get<std::string>(), add_special)
                                    : tok.encode(c.at("text").get<std::string>(), add_special);
    EXPECT_EQ(e.ids, c.at("ids").get<std::vector<int32_t>>());
    EXPECT_EQ(e.tokens, c.at("tokens").get<std::vector<std::string>>());
    EXPECT_EQ(e.type_ids, c.at("type_ids").get<std::vector<int32_t>>());
    EXPECT_EQ(e.attention_mask, c.at("attention_mask").get<std::vector<int32_t>>());
    EXPECT_EQ(e.special_tokens_mask, c.at("special_tokens_mask").get<std::vector<int32_t>>());
    EXPECT_EQ(tok.decode(e.ids, false), c.at("decoded").get<std::string>());
    EXPECT_EQ(tok.decode(e.ids, true), c.at("decoded_skip_special").get<std::string>());
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

namespace {

Direction direction(const nlohmann::json& c) { return c.at("direction").get<std::string>() == "left" ? Direction::left : Direction::right; }

}  // namespace

void check_truncation(Tokenizer& tok, const nlohmann::json& exp) {
  for (const auto& c : exp.at("truncation")) {
    SCOPED_TRACE(c.dump().substr(0, 200));
    TruncationOptions o;
    o.max_length = c.at("max_length").get<size_t>();
    std::string s = c.at("strategy").get<std::string>();
    o.strategy = s == "only_first" ? TruncationStrategy::only_first
                 : s == "only_second" ? TruncationStrategy::only_second
                                      : TruncationStrategy::longest_first;
    o.direction = direction(c);
    tok.set_truncation(o);
    Encoding e = c.contains("pair") ? tok.encode_pair(c.at("text").get<std::string>(), c.at("pair").get<std::string>())
                                    : tok.encode(c.at("text").get<std::string>());
    EXPECT_EQ(e.ids, c.at("ids").get<std::vector<int32_t>>());
    EXPECT_EQ(e.tokens, c.at("tokens").get<std::vector<std::string>>());
    EXPECT_EQ(e.type_ids, c.at("type_ids").get<std::vector<int32_t>>());
  }
  tok.set_truncation(std::nullopt);
}

void check_padding(Tokenizer& tok, const nlohmann::json& exp) {
  for (const auto& c : exp.at("padding")) {
    SCOPED_TRACE(c.dump().substr(0, 200));
    PaddingOptions o;
    if (!c.at("length").is_null()) o.length = c.at("length").get<size_t>();
    o.pad_to_multiple_of = c.at("pad_to_multiple_of").get<size_t>();
    o.direction = direction(c);
    o.pad_id = c.at("pad_id").get<int32_t>();
    o.pad_token = c.at("pad_token").get<std::string>();
    tok.set_padding(o);
    if (c.contains("max_length")) {
      TruncationOptions t;
      t.max_length = c.at("max_length").get<size_t>();
      tok.set_truncation(t);
    }
    auto batch = tok.encode_batch(c.at("texts").get<std::vector<std::string>>());
    ASSERT_EQ(batch.size(), c.at("ids").size());
    for (size_t i = 0; i < batch.size(); ++i) {
      EXPECT_EQ(batch[i].ids, c.at("ids")[i].get<std::vector<int32_t>>()) << "batch item " << i;
      EXPECT_EQ(batch[i].tokens, c.at("tokens")[i].get<std::vector<std::string>>()) << "batch item " << i;
      EXPECT_EQ(batch[i].type_ids, c.at("type_ids")[i].get<std::vector<int32_t>>()) << "batch item " << i;
      EXPECT_EQ(batch[i].attention_mask, c.at("attention_mask")[i].get<std::vector<int32_t>>()) << "batch item " << i;
    }
    tok.set_truncation(std::nullopt);
  }
  tok.set_padding(std::nullopt);
}

}  // namespace rlx::text::testing
