// Malformed inputs fail with rlx::Error of the right kind and a message naming the file/field.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fixtures.h"
#include "rlx/error.h"
#include "text/tokenizer_loader.h"
#include "text/vocab.h"

namespace rlx::text {
namespace {

void expect_error(const std::function<void()>& f, ErrorKind kind, const std::vector<std::string>& mentions) {
  try {
    f();
    ADD_FAILURE() << "expected rlx::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& m : mentions) EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << e.what() << " lacks " << m;
  }
}

// A file may give a token any 32-bit id: one far past the rest is kept aside, not by growing the
// id table to it (a fuzzed tokenizer.json with id ~1e9 asked for a 3.8 GB table).
TEST(Vocab, AnIdFarPastTheOthersCostsOneEntry) {
  Vocab v;
  v.add("a", 0);
  v.add("b", 2000000000);
  v.add("c", 1);
  ASSERT_NE(v.token(2000000000), nullptr);
  EXPECT_EQ(*v.token(2000000000), "b");
  EXPECT_EQ(*v.token(1), "c");
  EXPECT_EQ(v.token(2), nullptr);
  EXPECT_EQ(v.token(1999999999), nullptr);
  EXPECT_EQ(v.find("b"), 2000000000);
  EXPECT_EQ(v.size(), 3u);
}

TEST(TokenizerErrors, MissingDirectory) {
  expect_error([] { load_tokenizer("/nonexistent/rlx-model"); }, ErrorKind::io, {"/nonexistent/rlx-model", "no such"});
  namespace fs = std::filesystem;
  fs::path empty = fs::temp_directory_path() / "rlx_text_empty_model";
  fs::remove_all(empty);
  fs::create_directories(empty);
  expect_error([&] { load_tokenizer(empty.string()); }, ErrorKind::io, {"tokenizer.json", "vocab.txt"});
  fs::remove_all(empty);
}

TEST(TokenizerErrors, BadJson) {
  expect_error([] { tokenizer_from_json("{", "broken.json"); }, ErrorKind::format, {"broken.json"});
  expect_error([] { tokenizer_from_json("{}", "t.json"); }, ErrorKind::format, {"t.json", "model"});
  expect_error([] { tokenizer_from_json(R"({"model":{"type":"WordPiece","vocab":{"a":"x"}}})", "t.json"); },
               ErrorKind::format, {"t.json", "vocab", "\"a\""});
  expect_error([] { tokenizer_from_json(R"({"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}})", "t.json"); },
               ErrorKind::format, {"merge 0", "ab"});
  expect_error([] { tokenizer_from_json(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]}})", "t.json"); },
               ErrorKind::format, {"merges[0]"});
  expect_error([] { tokenizer_from_json(R"({"model":{"type":"Unigram","vocab":[]}})", "t.json"); },
               ErrorKind::format, {"Unigram", "at least one piece"});
  expect_error([] { tokenizer_from_json(R"({"model":{"type":"WordLevel","vocab":{}}})", "t.json"); },
               ErrorKind::unsupported, {"WordLevel", "Unigram"});
  expect_error([] { tokenizer_from_json(R"({"normalizer":{"type":"Nmt"},"model":{"type":"BPE","vocab":{}}})", "t.json"); },
               ErrorKind::unsupported, {"normalizer", "Nmt", "Precompiled"});
  expect_error(
      [] {
        tokenizer_from_json(R"({"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Isolated"},
                               "model":{"type":"BPE","vocab":{}}})", "t.json");
      },
      ErrorKind::invalid_argument, {"(unclosed"});
}

TEST(TokenizerErrors, InvalidUtf8Text) {
  Tokenizer tok = load_tokenizer(testing::fixture_path("qwen2"));
  expect_error([&] { tok.encode("ok \xff bad"); }, ErrorKind::invalid_argument, {"UTF-8", "byte 3"});
  expect_error([&] { tok.encode("cut \xe4\xb8"); }, ErrorKind::invalid_argument, {"UTF-8"});
}

TEST(TokenizerErrors, MaxLengthSmallerThanSpecialTokens) {
  Tokenizer tok = load_tokenizer(testing::fixture_path("bert_uncased"));
  TruncationOptions t;
  t.max_length = 1;
  tok.set_truncation(t);
  expect_error([&] { tok.encode("hello"); }, ErrorKind::invalid_argument, {"max_length 1"});
}

}  // namespace
}  // namespace rlx::text
