// Unigram (T5, XLM-R, ALBERT) from tokenizer.json against Hugging Face tokenizers
// (tests/fixtures/text/unigram*, gen_unigram.js): ids, tokens (unknown pieces keep their text),
// masks and both decodes, with fused unknowns and with byte fallback.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "rlx/error.h"
#include "text/model.h"
#include "text/tokenizer_loader.h"
#include "util/strings.h"

namespace rlx::text {
namespace {

class UnigramFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(UnigramFixture, MatchesReference) {
  Tokenizer tok = load_tokenizer(testing::fixture_path(GetParam()));
  EXPECT_STREQ(tok.model_type(), "Unigram");
  auto exp = testing::expected(GetParam());
  ASSERT_GT(exp.at("cases").size(), 100u);
  testing::check_cases(tok, exp);
}

INSTANTIATE_TEST_SUITE_P(Unigram, UnigramFixture, ::testing::Values("unigram", "unigram_bytes"));

// A SentencePiece Unigram trained with nmt_nfkc (gen_precompiled.py), as T5Converter lays it out:
// the Precompiled charsmap normalizer (compatibility forms, full width, ligatures, combining marks
// inside and across grapheme clusters) then collapsed spaces, on the corpus.
TEST(Unigram, PrecompiledCharsmapMatchesReference) {
  Tokenizer tok = load_tokenizer(testing::fixture_path("unigram_nfkc"));
  auto exp = testing::expected("unigram_nfkc");
  ASSERT_GT(exp.at("cases").size(), 50u);
  testing::check_cases(tok, exp);
}

TEST(Unigram, MalformedCharsmapsAreRefused) {
  auto norm = [](const std::string& charsmap_b64) {
    return tokenizer_from_json(cat(R"({"normalizer":{"type":"Precompiled","precompiled_charsmap":")", charsmap_b64,
                                   R"("},"model":{"type":"Unigram","vocab":[["a",-1.0]]}})"),
                               "t.json");
  };
  EXPECT_THROW(norm("AAA"), Error);        // 2 bytes: no trie size
  EXPECT_THROW(norm("QAAAAA=="), Error);   // a 64-byte trie in a 4-byte map
  EXPECT_THROW(norm("not base64!"), Error);
}

TEST(Unigram, MalformedVocabulariesAreRefused) {
  auto model = [](const char* json) { return model_from_json(Json::parse(json), "tokenizer.json:model"); };
  EXPECT_THROW(model(R"({"type": "Unigram", "vocab": []})"), Error);
  EXPECT_THROW(model(R"({"type": "Unigram", "vocab": [["a", -1.0]], "unk_id": 5})"), Error);
  EXPECT_THROW(model(R"({"type": "Unigram", "vocab": [["a", "x"]]})"), Error);
  // no unk_id: a character no piece covers is an error naming it, never a crash
  auto m = model(R"({"type": "Unigram", "vocab": [["a", -1.0], ["b", -2.0]]})");
  std::vector<int32_t> ids;
  m->tokenize("ab", ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1}));
  try {
    m->tokenize("az", ids);
    FAIL() << "tokenized an uncovered character";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"z\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rlx::text
