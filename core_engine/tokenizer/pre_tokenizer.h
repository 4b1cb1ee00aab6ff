// Byte-level BPE pre-tokenization: splits text into the "words" that merges run within, using the
// regex stages llama.cpp associates with each tokenizer.ggml.pre name, matched with PCRE2. Also
// records the per-name quirks llama.cpp applies (default BOS, decode-time space cleanup, merges
// skipped for whole-token words). Immutable after creation; split() is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"

namespace workbench {

// Behaviour that depends on the pre-tokenizer name besides the regexes.
struct PreTokenizerTraits {
    bool known = false;          // a name this engine can tokenize
    bool add_bos = false;        // BOS default when tokenizer.ggml.add_bos_token is absent
    bool clean_spaces = true;    // decode drops spaces before punctuation and some contractions
    bool ignore_merges = false;  // a word that is itself a token is emitted without merging
};

// Traits for a tokenizer.ggml.pre value; an empty name means llama.cpp's "default".
PreTokenizerTraits pre_tokenizer_traits(std::string_view pre);

class PreTokenizer {
public:
    // Errors: unsupported (unknown name), internal (a stage regex failed to compile).
    static Result<PreTokenizer> create(std::string_view pre);

    // Words of `text` in the byte-level alphabet, in order; their concatenation is the (UTF-8
    // repaired) text. Malformed UTF-8 bytes become U+FFFD first, as in llama.cpp.
    std::vector<std::string> split(std::string_view text) const;

    const PreTokenizerTraits& traits() const { return traits_; }

private:
    struct Stage;  // one compiled regex
    PreTokenizer() = default;

    PreTokenizerTraits traits_;
    std::vector<std::shared_ptr<const Stage>> stages_;
};

}  // namespace workbench
