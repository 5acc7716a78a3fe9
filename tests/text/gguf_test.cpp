// The BPE tokenizer built from GGUF tokenizer metadata must tokenize exactly like the Hugging
// Face files it was converted from (the same vocabulary and merges laid out as llama.cpp does).
#include <gtest/gtest.h>

#include "fixtures.h"
#include "rlx/error.h"
#include "text/gguf_tokenizer.h"
#include "text/precompiled.h"
#include "util/base64.h"

namespace rlx::text {
namespace {

using testing::fixture_path;

// Lays a tokenizer.json out as a GGUF converter would: tokens by id, "a b" merges, token types.
GgufTokenizerData gguf_from_tokenizer_json(const nlohmann::json& tj, const std::string& pre) {
  GgufTokenizerData d;
  d.model = "gpt2";
  d.pre = pre;
  const auto& vocab = tj.at("model").at("vocab");
  size_t n = vocab.size() + tj.at("added_tokens").size();
  d.tokens.resize(n);
  d.token_type.assign(n, static_cast<int32_t>(GgufTokenType::normal));
  for (auto it = vocab.begin(); it != vocab.end(); ++it) d.tokens.at(it.value().get<size_t>()) = it.key();
  for (const auto& t : tj.at("added_tokens")) {
    size_t id = t.at("id").get<size_t>();
    d.tokens.at(id) = t.at("content").get<std::string>();
    d.token_type[id] = static_cast<int32_t>(t.at("special").get<bool>() ? GgufTokenType::control : GgufTokenType::user_defined);
  }
  for (const auto& m : tj.at("model").at("merges"))
    d.merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
  return d;
}

TEST(Gguf, Qwen2MetadataMatchesReference) {
  GgufTokenizerData d = gguf_from_tokenizer_json(testing::read_json(fixture_path("qwen2/tokenizer.json")), "qwen2");
  Tokenizer tok = tokenizer_from_gguf(d);
  testing::check_cases(tok, testing::expected("qwen2"));
}

TEST(Gguf, Llama3MetadataWithBosMatchesReference) {
  auto tj = testing::read_json(fixture_path("llama3/tokenizer.json"));
  GgufTokenizerData d = gguf_from_tokenizer_json(tj, "llama-bpe");
  for (const auto& t : tj.at("added_tokens")) {
    if (t.at("content") == "<|begin_of_text|>") d.bos_id = t.at("id").get<int32_t>();
    if (t.at("content") == "<|eot_id|>") d.eos_id = t.at("id").get<int32_t>();
  }
  d.add_bos = true;
  Tokenizer tok = tokenizer_from_gguf(d);
  testing::check_cases(tok, testing::expected("llama3"));
  EXPECT_EQ(tok.special_ids().bos, d.bos_id);
  EXPECT_EQ(tok.special_ids().eos, d.eos_id);
}

// SentencePiece BPE (Llama 2, Mistral, Gemma…) as GGUF metadata — tokens, scores and types, no
// merges — against what Hugging Face tokenizers does with the tokenizer.json transformers makes
// of the same model (gen_spm_gguf.js: merges rebuilt from the scores by SentencePieceExtractor).
TEST(Gguf, SentencePieceMetadataMatchesReference) {
  auto g = testing::read_json(fixture_path("spm_gguf/gguf.json"));
  GgufTokenizerData d;
  d.model = g.at("tokenizer.ggml.model").get<std::string>();
  d.tokens = g.at("tokenizer.ggml.tokens").get<std::vector<std::string>>();
  d.scores = g.at("tokenizer.ggml.scores").get<std::vector<float>>();
  d.token_type = g.at("tokenizer.ggml.token_type").get<std::vector<int32_t>>();
  d.bos_id = g.at("tokenizer.ggml.bos_token_id").get<int32_t>();
  d.eos_id = g.at("tokenizer.ggml.eos_token_id").get<int32_t>();
  d.unk_id = g.at("tokenizer.ggml.unknown_token_id").get<int32_t>();
  d.add_bos = g.at("tokenizer.ggml.add_bos_token").get<bool>();
  d.add_eos = g.at("tokenizer.ggml.add_eos_token").get<bool>();
  Tokenizer tok = tokenizer_from_gguf(d);
  auto exp = testing::expected("spm_gguf");
  ASSERT_GT(exp.at("cases").size(), 100u);
  testing::check_cases(tok, exp);
  EXPECT_EQ(tok.special_ids().bos, 1);
  // missing scores are a format error that says what a SentencePiece tokenizer needs
  d.scores.pop_back();
  try {
    tokenizer_from_gguf(d);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::format);
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.scores"), std::string::npos) << e.what();
  }
  d.model = "t5";
  EXPECT_THROW(tokenizer_from_gguf(d), Error);
}

// WordPiece (BERT, BGE, MiniLM embedding models) as llama.cpp's converter writes it: control
// tokens as they are, "##piece" as "piece", every other token with a phantom "▁" in front.
TEST(Gguf, WordPieceMetadataMatchesReference) {
  for (const char* name : {"bert_uncased", "bert_cased"}) {
    SCOPED_TRACE(name);
    auto tj = testing::read_json(fixture_path(std::string(name) + "/tokenizer.json"));
    GgufTokenizerData d;
    d.model = "bert";
    const auto& vocab = tj.at("model").at("vocab");
    d.tokens.resize(vocab.size());
    d.token_type.assign(vocab.size(), static_cast<int32_t>(GgufTokenType::normal));
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
      const std::string& t = it.key();
      d.tokens.at(it.value().get<size_t>()) = t.rfind("##", 0) == 0 ? t.substr(2) : "\u2581" + t;
    }
    for (const auto& t : tj.at("added_tokens")) {
      size_t id = t.at("id").get<size_t>();
      std::string c = t.at("content").get<std::string>();
      d.tokens.at(id) = c;
      d.token_type[id] = static_cast<int32_t>(GgufTokenType::control);
      if (c == "[CLS]") d.cls_id = static_cast<int32_t>(id);
      if (c == "[SEP]") d.sep_id = static_cast<int32_t>(id);
      if (c == "[UNK]") d.unk_id = static_cast<int32_t>(id);
      if (c == "[PAD]") d.pad_id = static_cast<int32_t>(id);
      if (c == "[MASK]") d.mask_id = static_cast<int32_t>(id);
    }
    Tokenizer tok = tokenizer_from_gguf(d);
    testing::check_cases(tok, testing::expected(name), 1);  // BERT inputs carry [CLS]/[SEP]
    d.cls_id.reset();
    EXPECT_THROW(tokenizer_from_gguf(d), Error);  // no [CLS] id: refused, never guessed
  }
}

// llama.cpp's pre-tokenizer names (tokenizer.ggml.pre), each as the tokenizer.json splits it stands
// for, over the multilingual corpus: ids equal to Hugging Face tokenizers' (gen_bpe_pres.js) on
// the qwen2 fixture's byte-level BPE.
TEST(Gguf, LlamaCppPreTokenizersMatchTheReference) {
  auto tj = testing::read_json(fixture_path("qwen2/tokenizer.json"));
  auto exp = testing::read_json(fixture_path("bpe_pres/expected.json"));
  const auto& texts = exp.at("texts");
  int checked = 0;
  for (auto it = exp.at("pres").begin(); it != exp.at("pres").end(); ++it) {
    Tokenizer tok = tokenizer_from_gguf(gguf_from_tokenizer_json(tj, it.key()));
    int mismatches = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<int32_t> want = it.value().at(i).get<std::vector<int32_t>>();
      std::vector<int32_t> got = tok.encode(texts[i].get<std::string>(), false).ids;
      if (got != want && mismatches++ < 3) ADD_FAILURE() << it.key() << ": text " << i << " " << texts[i].dump() << " differs";
    }
    EXPECT_EQ(mismatches, 0) << it.key();
    ++checked;
  }
  EXPECT_GE(checked, 20);
  // every name RLX accepts is one of these configurations (aliases share one)
  for (const std::string& name : gguf_pre_tokenizer_names()) EXPECT_NO_THROW(tokenizer_from_gguf(gguf_from_tokenizer_json(tj, name))) << name;
  EXPECT_GE(gguf_pre_tokenizer_names().size(), 70u);
}

// A SentencePiece Unigram with its precompiled charsmap as llama.cpp's T5 converter stores it
// (tokenizer.ggml.model "t5"): the same ids as Hugging Face on T5Converter's tokenizer.json.
TEST(Gguf, T5UnigramMetadataMatchesReference) {
  auto g = testing::read_json(fixture_path("unigram_nfkc/gguf.json"));
  GgufTokenizerData d;
  d.model = g.at("tokenizer.ggml.model").get<std::string>();
  d.tokens = g.at("tokenizer.ggml.tokens").get<std::vector<std::string>>();
  d.scores = g.at("tokenizer.ggml.scores").get<std::vector<float>>();
  d.token_type = g.at("tokenizer.ggml.token_type").get<std::vector<int32_t>>();
  d.precompiled_charsmap = base64_decode(g.at("tokenizer.ggml.precompiled_charsmap.base64").get<std::string>(), "gguf.json");
  d.add_space_prefix = g.at("tokenizer.ggml.add_space_prefix").get<bool>();
  d.remove_extra_whitespaces = g.at("tokenizer.ggml.remove_extra_whitespaces").get<bool>();
  d.eos_id = g.at("tokenizer.ggml.eos_token_id").get<int32_t>();
  d.unk_id = g.at("tokenizer.ggml.unknown_token_id").get<int32_t>();
  d.pad_id = g.at("tokenizer.ggml.padding_token_id").get<int32_t>();
  d.add_bos = g.at("tokenizer.ggml.add_bos_token").get<bool>();
  d.add_eos = g.at("tokenizer.ggml.add_eos_token").get<bool>();
  Tokenizer tok = tokenizer_from_gguf(d);
  EXPECT_STREQ(tok.model_type(), "Unigram");
  testing::check_cases(tok, testing::expected("unigram_nfkc"));
}

TEST(Gguf, RejectsUnknownPreTokenizerAndBadIds) {
  GgufTokenizerData d = gguf_from_tokenizer_json(testing::read_json(fixture_path("qwen2/tokenizer.json")), "no-such-pre");
  try {
    tokenizer_from_gguf(d);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("no-such-pre"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("qwen2"), std::string::npos);  // lists what is supported
  }
  d.pre = "qwen2";
  d.eos_id = static_cast<int32_t>(d.tokens.size());
  EXPECT_THROW(tokenizer_from_gguf(d), Error);
  d.eos_id.reset();
  d.merges.push_back("nosuchtoken x");
  EXPECT_THROW(tokenizer_from_gguf(d), Error);
}

}  // namespace
}  // namespace rlx::text
