// Post-processors add the special tokens around encoded sequences ([CLS] A [SEP] B [SEP],
// <|begin_of_text|> A …) and set the segment (type) ids.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "text/encoding.h"
#include "text/json_fields.h"

namespace rlx::text {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // How many tokens process() adds for one sequence or a pair (truncation leaves room for them).
  virtual size_t added_tokens(bool is_pair) const = 0;
  // Takes the encodings of the sequences (one or two) and returns the pieces to concatenate.
  virtual std::vector<Encoding> process(std::vector<Encoding> encodings, bool add_special_tokens) const = 0;
};

// One piece of a template: a special token or one of the sequences ($A, $B).
struct TemplatePiece {
  bool is_sequence = false;
  int sequence = 0;     // 0 for A, 1 for B
  std::string special;  // the special token's name
  int32_t type_id = 0;
};
struct TemplateSpecialToken {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};

// [CLS] A [SEP] / [CLS] A [SEP] B [SEP], with B's part of type 1.
std::unique_ptr<PostProcessor> make_bert_processing(std::string cls, int32_t cls_id, std::string sep, int32_t sep_id);
std::unique_ptr<PostProcessor> make_template_processing(
    std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
    std::vector<std::pair<std::string, TemplateSpecialToken>> special_tokens);

// The "post_processor" object of tokenizer.json (BertProcessing, TemplateProcessing, ByteLevel,
// Sequence).
std::unique_ptr<PostProcessor> post_processor_from_json(const Json& j, const std::string& where);

}  // namespace rlx::text
