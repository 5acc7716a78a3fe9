// libFuzzer target: tokenizer.json (it arrives inside model directories written by strangers) —
// loading any pipeline (normalizers, pre-tokenizers, WordPiece/BPE/Unigram models, post-processors,
// decoders, added tokens), then encoding and decoding. The input is the JSON, optionally followed
// by a NUL byte and the text to encode. Anything but rlx::Error is a bug.
#include <string>

#include "rlx/error.h"
#include "text/tokenizer.h"
#include "text/tokenizer_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  size_t nul = in.find('\0');
  std::string json = in.substr(0, nul), text = nul == std::string::npos ? std::string("Hello wörld 世界 12 3!") : in.substr(nul + 1);
  try {
    rlx::text::Tokenizer t = rlx::text::tokenizer_from_json(json, "fuzz/tokenizer.json");
    rlx::text::Encoding e = t.encode(text);
    t.decode(e.ids, false);
    t.decode(e.ids, true);
  } catch (const rlx::Error&) {
  }
  return 0;
}
