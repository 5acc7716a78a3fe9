// Streaming detokenization: pushing ids one at a time yields chunks that are each complete UTF-8
// and together equal the reference's decode of all ids; a character split over byte tokens comes
// out only once its last byte arrives.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "text/decode_stream.h"
#include "text/tokenizer_loader.h"
#include "text/utf8.h"

namespace rlx::text {
namespace {

using testing::expected;
using testing::fixture_path;

class DecodeStreamFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeStreamFixture, ChunksAreCompleteAndConcatenateToDecode) {
  Tokenizer tok = load_tokenizer(fixture_path(GetParam()));
  size_t held_back = 0;
  const nlohmann::json exp = expected(GetParam());
  for (const auto& c : exp.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>() + ": " + c.at("text").dump());
    DecodeStream stream = tok.decode_stream(false);
    std::string all;
    for (int32_t id : c.at("ids").get<std::vector<int32_t>>()) {
      std::string chunk = stream.step(id);
      EXPECT_EQ(utf8_invalid_at(chunk), std::string::npos) << "chunk is not complete UTF-8";
      if (chunk.empty()) ++held_back;
      all += chunk;
    }
    all += stream.finish();
    EXPECT_EQ(all, c.at("decoded").get<std::string>());
  }
  // Byte-level vocabularies split multi-byte characters somewhere in the corpus; WordPiece never does.
  if (std::string(tok.model_type()) == "BPE") EXPECT_GT(held_back, 0u);
  else EXPECT_EQ(held_back, 0u);
}

INSTANTIATE_TEST_SUITE_P(All, DecodeStreamFixture, ::testing::Values("qwen2", "llama3", "gpt2", "spm_bpe", "spm_metaspace", "spm_metaspace_split", "bert_uncased"));

TEST(DecodeStream, EmojiSplitAcrossByteTokensWaitsForLastByte) {
  Tokenizer tok = load_tokenizer(fixture_path("qwen2"));
  // 😀 is F0 9F 98 80; the tiny vocabulary has no token for it, so it spans several tokens.
  Encoding e = tok.encode("\xf0\x9f\x98\x80!", false);
  ASSERT_GE(e.ids.size(), 3u);
  DecodeStream stream = tok.decode_stream();
  std::vector<std::string> chunks;
  for (int32_t id : e.ids) chunks.push_back(stream.step(id));
  EXPECT_EQ(chunks.front(), "");  // only part of the emoji so far
  std::string joined;
  for (const auto& ch : chunks) joined += ch;
  EXPECT_EQ(joined, "\xf0\x9f\x98\x80!");
  size_t first_text = 0;
  while (chunks[first_text].empty()) ++first_text;
  EXPECT_EQ(chunks[first_text].substr(0, 4), "\xf0\x9f\x98\x80");
}

TEST(DecodeStream, FinishFlushesAnIncompleteTail) {
  Tokenizer tok = load_tokenizer(fixture_path("qwen2"));
  Encoding e = tok.encode("\xf0\x9f\x98\x80", false);
  ASSERT_GE(e.ids.size(), 2u);
  DecodeStream stream = tok.decode_stream();
  std::string out = stream.step(e.ids[0]);
  EXPECT_EQ(out, "");
  // Ending early: what is held back decodes the way decode() does (with U+FFFD).
  EXPECT_EQ(stream.finish(), tok.decode({e.ids[0]}));
}

}  // namespace
}  // namespace rlx::text
