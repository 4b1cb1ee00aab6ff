// The special-token conventions llama.cpp layers over GGUF metadata: end-of-generation tokens
// recognised by their text (<|im_end|>, <|eot_id|>, <end_of_turn>, ...), control types forced on
// tokens that look like control tokens, and the EOT id when the file names none. Applied once when
// a Tokenizer is created, so that is_eog/is_control and special-token parsing agree with llama.cpp.
#pragma once

#include <vector>

#include "tokenizer/tokenizer.h"

namespace workbench {

// Token attribute bits derived from tokenizer.ggml.token_type (llama.cpp's llama_token_attr).
enum TokenAttr : uint32_t {
    attr_undefined = 0,
    attr_unknown = 1u << 0,
    attr_unused = 1u << 1,
    attr_normal = 1u << 2,
    attr_control = 1u << 3,
    attr_user_defined = 1u << 4,
    attr_byte = 1u << 5,
};

// Attribute of a tokenizer.ggml.token_type value; values outside the enum are undefined.
uint32_t token_type_attr(int32_t token_type);

// Requires vocab.token_types to hold one entry per token. Sets vocab.eot_id when it is -1 and a
// known end-of-turn token exists, rewrites token_types the way llama.cpp adjusts attributes, and
// returns the sorted ids that end generation (EOS, EOT and the other recognised ones).
std::vector<TokenId> apply_special_token_rules(TokenizerVocab& vocab);

}  // namespace workbench
