// Decoders turn token strings back into text (ByteLevel bytes → UTF-8, WordPiece "##" joins …).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "text/json_fields.h"

namespace rlx::text {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // One step of the chain: tokens in, tokens out (a Sequence feeds each decoder the last's output).
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
  std::string decode(std::vector<std::string> tokens) const;
};

std::unique_ptr<Decoder> make_byte_level_decoder();
std::unique_ptr<Decoder> make_wordpiece_decoder(std::string prefix = "##", bool cleanup = true);

// The "decoder" object of tokenizer.json (ByteLevel, WordPiece, ByteFallback, Fuse, Strip,
// Replace, Sequence).
std::unique_ptr<Decoder> decoder_from_json(const Json& j, const std::string& where);

}  // namespace rlx::text
