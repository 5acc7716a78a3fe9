// libFuzzer target: the tokenizer inside a GGUF file (tokenizer.ggml.*: byte-level BPE "gpt2",
// SentencePiece BPE "llama", WordPiece "bert", Unigram "t5" with its precompiled charsmap) —
// the metadata read and type-checked, the tokenizer built, then encoding and decoding. The text
// to encode travels in the file as the string key "fuzz.text" (so the fuzzer mutates it too);
// without it a fixed mixed-script text is used. Anything but rlx::Error is a bug, and so is an
// id outside the vocabulary.
#include <cstdlib>
#include <string>

#include "formats/gguf.h"
#include "models/gguf_tokenizer_metadata.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rlx::formats;
  try {
    GgufFile f = parse_gguf(data, size, nullptr, "fuzz.gguf");
    auto tok = rlx::models::gguf_tokenizer(f);
    if (!tok) return 0;
    std::string text = "Hello wörld, 世界! 12 345  tabs\tand\nnew lines <s></s>[CLS]";
    if (const GgufValue* t = f.find("fuzz.text"); t && t->as_string()) text = *t->as_string();
    rlx::text::Encoding e = tok->encode(text);
    for (int32_t id : e.ids)
      if (id < 0 || static_cast<size_t>(id) >= tok->vocab_size()) std::abort();
    tok->decode(e.ids, false);
    tok->decode(e.ids, true);
  } catch (const rlx::Error&) {
  }
  return 0;
}
