// rlx tokenize: token ids and tokens of a text with a Hugging Face model directory's tokenizer
// (tokenizer.json with a WordPiece or BPE model, or BERT's vocab.txt + tokenizer_config.json) or
// the one a GGUF file carries in its metadata.
#include <cstdio>

#include "commands.h"
#include "json.h"
#include "models/qwen3_model.h"
#include "rlx/error.h"
#include "text/tokenizer_loader.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

// Tokens print as they are unless whitespace or control characters would hide their content.
std::string printable_token(const std::string& t) {
  for (unsigned char c : t)
    if (c <= 0x20 || c == 0x7f) return json_quote(t);
  return t;
}

}  // namespace

int cmd_tokenize(Args& args) {
  auto model = args.value("model");
  auto text = args.value("text");
  auto pair = args.value("pair");
  bool special = args.flag("special"), no_special = args.flag("no-special");
  int64_t max_length = args.int_or("max-length", 0);
  bool json = args.flag("json");
  args.finish();
  if (!model) throw Error(ErrorKind::invalid_argument, "--model DIR|FILE.gguf is required (a Hugging Face model directory, tokenizer.json, or a GGUF file)");
  if (!text) throw Error(ErrorKind::invalid_argument, "--text T is required");
  if (special && no_special) throw Error(ErrorKind::invalid_argument, "--special and --no-special contradict each other");
  if (max_length < 0) throw Error(ErrorKind::invalid_argument, cat("--max-length must be positive, got ", max_length));

  bool gguf = model->size() > 5 && model->compare(model->size() - 5, 5, ".gguf") == 0;
  std::shared_ptr<text::Tokenizer> loaded = gguf ? models::load_gguf_tokenizer(*model) : std::make_shared<text::Tokenizer>(text::load_tokenizer(*model));
  text::Tokenizer& tok = *loaded;
  bool wordpiece = std::string(tok.model_type()) == "WordPiece";
  // BERT inputs always carry [CLS]/[SEP]; causal LMs get BOS etc. only when asked (as generation
  // prompts are usually templated first).
  bool add_special = special || (wordpiece && !no_special);
  // Like transformers' tokenizer(text): tokenizer.json's own padding (MiniLM ships Fixed 128)
  // does not apply; truncation is decided here.
  tok.set_padding(std::nullopt);
  tok.set_truncation(std::nullopt);
  if (max_length > 0 || wordpiece) {
    text::TruncationOptions t;
    t.max_length = max_length > 0 ? static_cast<size_t>(max_length) : tok.model_max_length().value_or(512);
    tok.set_truncation(t);
  }
  text::Encoding e = pair ? tok.encode_pair(*text, *pair, add_special) : tok.encode(*text, add_special);

  if (json) {
    std::vector<std::string> ids, tokens;
    for (int32_t id : e.ids) ids.push_back(std::to_string(id));
    for (const auto& t : e.tokens) tokens.push_back(json_quote(t));
    std::printf("{\"ids\":%s,\"tokens\":%s}\n", json_array(ids).c_str(), json_array(tokens).c_str());
    return 0;
  }
  std::printf("%zu tokens (%s)\n", e.ids.size(), tok.model_type());
  for (size_t i = 0; i < e.ids.size(); ++i) std::printf("%8d  %s\n", e.ids[i], printable_token(e.tokens[i]).c_str());
  return 0;
}

}  // namespace rlx::cli
