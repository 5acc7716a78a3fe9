// Byte-level BPE parity with Hugging Face tokenizers: a Qwen2-style tokenizer (NFC, the Qwen2
// Split regex, "a b" merges, <|im_start|>-style special tokens), a Llama-3-style one ([a, b]
// merges, ignore_merges, BOS template), GPT-2's ByteLevel regex with add_prefix_space, and one
// exercising normalizer/pre-tokenizer variety and the added-token flags, and a SentencePiece-style
// BPE (Llama-2 layout: "▁" spaces, byte_fallback, fuse_unk, Replace/ByteFallback/Fuse/Strip).
#include <gtest/gtest.h>

#include "fixtures.h"
#include "text/tokenizer_loader.h"

namespace rlx::text {
namespace {

using testing::check_cases;
using testing::expected;
using testing::fixture_path;

class BpeFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(BpeFixture, MatchesReference) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  EXPECT_STREQ(tok.model_type(), "BPE");
  check_cases(tok, expected(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Bpe, BpeFixture, ::testing::Values("qwen2", "llama3", "gpt2", "bpe_features", "spm_bpe", "spm_metaspace", "spm_metaspace_split"));

TEST(Bpe, Qwen2TruncationAndLeftPadding) {
  Tokenizer tok = load_tokenizer(fixture_path("qwen2"));
  testing::check_truncation(tok, expected("qwen2"));
  testing::check_padding(tok, expected("qwen2"));
}

TEST(Bpe, Llama3Truncation) {
  Tokenizer tok = load_tokenizer(fixture_path("llama3"));
  testing::check_truncation(tok, expected("llama3"));
}

TEST(Bpe, SpecialIdsFromTokenizerConfig) {
  Tokenizer qwen = load_tokenizer(fixture_path("qwen2"));
  EXPECT_EQ(qwen.special_ids().eos, qwen.token_to_id("<|im_end|>"));
  EXPECT_EQ(qwen.special_ids().pad, qwen.token_to_id("<|endoftext|>"));
  EXPECT_FALSE(qwen.special_ids().bos.has_value());
  EXPECT_TRUE(qwen.special_ids().eos.has_value());
  EXPECT_TRUE(qwen.is_special_id(*qwen.token_to_id("<|im_start|>")));
  EXPECT_FALSE(qwen.is_special_id(*qwen.token_to_id("<think>")));  // added but not special
  Tokenizer llama = load_tokenizer(fixture_path("llama3"));
  EXPECT_EQ(llama.special_ids().bos, llama.token_to_id("<|begin_of_text|>"));
  EXPECT_EQ(llama.special_ids().eos, llama.token_to_id("<|eot_id|>"));
}

TEST(Bpe, IgnoreMergesTakesWholeWords) {
  // The llama3 fixture's vocabulary holds " tokenization" (byte-level "Ġtokenization") without the
  // merges that would build it; only ignore_merges yields it as one token.
  Tokenizer tok = load_tokenizer(fixture_path("llama3"));
  auto id = tok.token_to_id("\xc4\xa0tokenization");
  ASSERT_TRUE(id.has_value());
  Encoding e = tok.encode(" tokenization", false);
  EXPECT_EQ(e.ids, std::vector<int32_t>{*id});
}

TEST(Bpe, BatchEncodingEqualsSingle) {
  Tokenizer tok = load_tokenizer(fixture_path("qwen2"));
  auto exp = expected("qwen2");
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
  for (const auto& c : exp.at("cases"))
    if (!c.contains("pair")) {
      texts.push_back(c.at("text").get<std::string>());
      ids.push_back(c.at("ids").get<std::vector<int32_t>>());
    }
  auto batch = tok.encode_batch(texts);
  ASSERT_EQ(batch.size(), ids.size());
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(batch[i].ids, ids[i]) << texts[i];
}

}  // namespace
}  // namespace rlx::text
