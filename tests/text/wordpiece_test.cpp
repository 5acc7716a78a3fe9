// WordPiece (BERT) parity with Hugging Face tokenizers: uncased and cased vocabularies on a
// multilingual corpus (accents, CJK, punctuation, long words, whitespace and control characters),
// sentence pairs, truncation and padding — loaded from tokenizer.json and from vocab.txt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "text/tokenizer_loader.h"

namespace rlx::text {
namespace {

using testing::check_cases;
using testing::expected;
using testing::fixture_path;

class WordPieceFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(WordPieceFixture, TokenizerJsonMatchesReference) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  EXPECT_STREQ(tok.model_type(), "WordPiece");
  check_cases(tok, expected(GetParam()));
}

TEST_P(WordPieceFixture, VocabTxtMatchesReference) {
  // A directory with only vocab.txt and tokenizer_config.json (the classic BERT layout).
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("rlx_text_vocab_" + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"vocab.txt", "tokenizer_config.json"})
    fs::copy_file(fixture_path(GetParam() + "/" + f), dir / f);
  Tokenizer tok = load_tokenizer(dir.string());
  fs::remove_all(dir);
  check_cases(tok, expected(GetParam()));
  EXPECT_EQ(tok.model_max_length(), std::optional<size_t>(512));
}

TEST_P(WordPieceFixture, Truncation) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  testing::check_truncation(tok, expected(GetParam()));
}

TEST_P(WordPieceFixture, PaddingAndBatches) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  testing::check_padding(tok, expected(GetParam()));
}

TEST_P(WordPieceFixture, SpecialIds) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  const auto& ids = tok.special_ids();
  EXPECT_EQ(ids.cls, tok.token_to_id("[CLS]"));
  EXPECT_EQ(ids.sep, tok.token_to_id("[SEP]"));
  EXPECT_EQ(ids.pad, tok.token_to_id("[PAD]"));
  EXPECT_EQ(ids.unk, tok.token_to_id("[UNK]"));
  EXPECT_TRUE(ids.cls.has_value());
  EXPECT_EQ(tok.id_to_token(*ids.cls), std::optional<std::string>("[CLS]"));
  EXPECT_TRUE(tok.is_special_id(*ids.sep));
}

INSTANTIATE_TEST_SUITE_P(Bert, WordPieceFixture, ::testing::Values("bert_uncased", "bert_cased"));

TEST(WordPiece, OtherPipelinePartsMatchReference) {
  // NFD/StripAccents/Lowercase/Strip normalizers, Whitespace + Digits pre-tokenizers,
  // BertProcessing, a decoder without cleanup and max_input_chars_per_word = 12.
  Tokenizer tok = load_tokenizer(fixture_path("wordpiece_features"));
  check_cases(tok, expected("wordpiece_features"));
}

TEST(WordPiece, TokenizerJsonTruncationAndPaddingApply) {
  // max_length 10 and Fixed(12) padding from tokenizer.json itself, as tokenizers applies them.
  Tokenizer tok = load_tokenizer(fixture_path("bert_padded"));
  ASSERT_TRUE(tok.truncation().has_value());
  ASSERT_TRUE(tok.padding().has_value());
  check_cases(tok, expected("bert_padded"));
}

TEST(WordPiece, ConfigOverridesLowercaseOfTokenizerJson) {
  // transformers rebuilds BertNormalizer from tokenizer_config.json's do_lower_case: the cased
  // tokenizer.json with do_lower_case=true must tokenize like the uncased normalizer would.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "rlx_text_override";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fixture_path("bert_cased/tokenizer.json"), dir / "tokenizer.json");
  {
    std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": true})";
  }
  Tokenizer lowered = load_tokenizer(dir.string());
  fs::remove_all(dir);
  Tokenizer cased = load_tokenizer(fixture_path("bert_cased"));
  std::string upper = "Die GRÖSSE der Straße", lower = "die grosse der straße";
  EXPECT_NE(cased.encode(upper).ids, cased.encode(lower).ids);
  EXPECT_EQ(lowered.encode(upper).ids, lowered.encode(lower).ids);
}

}  // namespace
}  // namespace rlx::text
