// Lookup tables both tokenizers share: token text -> id, per-token attributes, and the splitting
// of input text around special tokens (control, user-defined, unknown) before any merging runs.
// Built once from a normalised TokenizerVocab; read-only afterwards, so safe across threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace workbench {

// Hash for unordered maps keyed by std::string that are looked up with std::string_view.
struct StringViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A piece of the input: either raw text [begin, end) or one special token.
struct TextFragment {
    TokenId token = -1;  // -1 for raw text
    size_t begin = 0;
    size_t end = 0;
};

// "<0x0A>"-style byte token text for `byte`, and the byte such a token stands for ("" when the
// text is too short to hold one; hex is read as llama.cpp reads it, stopping at a non-digit).
std::string byte_token_text(uint8_t byte);
std::string byte_token_value(std::string_view text);

class VocabIndex {
public:
    // `vocab` must already have one token type per token (see Tokenizer::create).
    explicit VocabIndex(const TokenizerVocab& vocab);

    // Id of an exact token text, or -1. Duplicate texts resolve to the highest id.
    TokenId find(std::string_view text) const;
    uint32_t attr(TokenId id) const { return attrs_[static_cast<size_t>(id)]; }
    bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < attrs_.size(); }

    // Splits `text` at special-token texts, longest tokens first. User-defined tokens are always
    // split out; control and unknown tokens only with `parse_special`.
    std::vector<TextFragment> partition(std::string_view text, bool parse_special) const;

private:
    std::unordered_map<std::string, TokenId, StringViewHash, std::equal_to<>> token_to_id_;
    std::vector<uint32_t> attrs_;
    struct Special {
        TokenId id;
        std::string text;
        bool always;  // user-defined: split out even without parse_special
    };
    std::vector<Special> specials_;  // longest text first
};

}  // namespace workbench
