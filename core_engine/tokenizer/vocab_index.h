// What both tokenizers know about a vocabulary besides merges: per-token attributes, the special-
// token conventions llama.cpp layers over GGUF metadata (end-of-generation tokens recognised by
// text, control types forced on them), token text -> id lookup, and the splitting of input text
// around special tokens before any merging runs. Read-only once built, so safe across threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/symbol_merger.h"
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

// "<0x0A>"-style byte token text for `byte`.
std::string byte_token_text(uint8_t byte);

class VocabIndex {
public:
    // `vocab` must already have one token type per token (see Tokenizer::create).
    explicit VocabIndex(const TokenizerVocab& vocab);

    // Id of an exact token text, or -1. Duplicate texts resolve to the highest id.
    TokenId find(std::string_view text) const;
    uint32_t attr(TokenId id) const { return attrs_[static_cast<size_t>(id)]; }
    bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < attrs_.size(); }

    // Splits `text` at special-token texts, longest tokens first. User-defined tokens are always
    // split out; control and unknown tokens only with `parse_special`, and never where they
    // overlap a `text_only` range.
    std::vector<TextFragment> partition(std::string_view text, bool parse_special, std::span<const TextRange> text_only = {}) const;

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

// Base of the concrete tokenizers: owns the VocabIndex and does what llama.cpp does the same way
// for every model: BOS/EOS, cutting out special tokens, and rendering pieces by token attribute.
// Subclasses tokenize the raw-text fragments and turn normal tokens' text back into bytes.
class IndexedTokenizer : public Tokenizer {
public:
    using Tokenizer::encode;
    std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special, std::span<const TextRange> text_only) const override;
    std::string token_to_piece(TokenId id, bool render_special) const override;
    TokenId find_token(std::string_view text) const override { return index_.find(text); }

protected:
    explicit IndexedTokenizer(TokenizerVocab vocab) : Tokenizer(std::move(vocab)), index_(vocab_) {}

    // Appends the ids of one run of ordinary text; `after_special` is true at the start of the
    // input and right after a special token.
    virtual void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const = 0;
    // The bytes a normal token stands for.
    virtual std::string normal_piece(const std::string& text) const = 0;

    // Appends the token of each merged span of `text`; a span that is not a token becomes one
    // token per byte from byte_fallback_ (bytes without one are dropped, as in llama.cpp).
    void emit_spans(std::string_view text, const std::vector<SymbolSpan>& spans, std::vector<TokenId>& out) const;

    VocabIndex index_;
    std::array<TokenId, 256> byte_fallback_{};  // filled by the subclass; -1 for none
};

}  // namespace workbench
