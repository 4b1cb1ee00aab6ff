// Text <-> token ids for the vocabularies GGUF files carry: byte-level BPE ("gpt2" model, with
// the pre-tokenizer named by tokenizer.ggml.pre) and SentencePiece ("llama" model: scores, byte
// fallback). Built from a TokenizerVocab that the loader fills from GGUF metadata, so the
// tokenizer itself never touches files. Immutable after construction; safe to share across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

// A byte range [begin, end) of a text.
struct TextRange {
    size_t begin = 0, end = 0;
};

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t { undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct TokenizerVocab {
    std::string model;                  // tokenizer.ggml.model: "gpt2" or "llama"
    std::string pre;                    // tokenizer.ggml.pre: "smollm", "llama-bpe", "qwen2", "default", ...
    std::vector<std::string> tokens;    // tokenizer.ggml.tokens
    std::vector<float> scores;          // tokenizer.ggml.scores (may be empty for gpt2)
    std::vector<int32_t> token_types;   // tokenizer.ggml.token_type (may be empty: all normal)
    std::vector<std::string> merges;    // tokenizer.ggml.merges, "a b" per entry (gpt2 only)
    TokenId bos_id = -1, eos_id = -1, eot_id = -1, unk_id = -1, pad_id = -1;
    bool add_bos = false;               // tokenizer.ggml.add_bos_token (default depends on model)
    bool add_eos = false;
    bool add_space_prefix = false;      // tokenizer.ggml.add_space_prefix (spm)
};

class Tokenizer {
public:
    // Validates the vocab (ids in range, merges well formed, known pre-tokenizer) and builds the
    // tables. Errors: invalid_file (malformed data), unsupported (unknown model or pre-tokenizer).
    // Like llama.cpp it fills missing scores (0) and types (normal), names empty tokens
    // "[EMPTY_<id>]", detects eot_id by text when it is -1 and forces control type on tokens that
    // end generation; vocab() shows the result.
    static Result<std::unique_ptr<Tokenizer>> create(TokenizerVocab vocab);
    virtual ~Tokenizer() = default;

    // Tokenizes `text`. With parse_special, control/user-defined token texts found in the text
    // (e.g. "<|im_start|>") become their ids; otherwise they are tokenized as plain text
    // (user-defined tokens are always matched, as in llama.cpp).
    // With add_bos, the BOS id is prepended when the vocab says so (vocab.add_bos), and likewise
    // the EOS id appended when vocab.add_eos (llama.cpp's "add_special").
    std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special) const {
        return encode(text, add_bos, parse_special, {});
    }
    // As above, but no control token is matched where it overlaps a `text_only` range (the
    // messages' own text in a rendered chat: what a user typed stays text; user-defined tokens
    // are still split out, as llama.cpp always does).
    virtual std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special,
                                        std::span<const TextRange> text_only) const = 0;

    // The bytes of one token (byte-level decoding applied; control tokens give their text only
    // when `render_special`). May be a partial UTF-8 sequence.
    virtual std::string token_to_piece(TokenId id, bool render_special) const = 0;

    // Decodes a sequence as llama_detokenize does (nothing removed): pieces are concatenated, the
    // first token loses one leading space when the vocab adds a space prefix, and for BPE
    // pre-tokenizers that ask for it, spaces before punctuation and some contractions are dropped.
    // The result is whole, though individual pieces may split characters.
    std::string decode(const std::vector<TokenId>& ids, bool render_special = false) const;

    const TokenizerVocab& vocab() const { return vocab_; }
    int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
    bool is_eog(TokenId id) const;      // EOS, EOT or another end-of-generation control token
    bool is_control(TokenId id) const;
    // All end-of-generation ids, ascending.
    const std::vector<TokenId>& eog_ids() const { return eog_ids_; }
    // Id of an exact token text (e.g. "<|im_end|>"), or -1.
    virtual TokenId find_token(std::string_view text) const = 0;

protected:
    explicit Tokenizer(TokenizerVocab vocab) : vocab_(std::move(vocab)) {}
    TokenizerVocab vocab_;            // normalised: one score and one type per token
    std::vector<TokenId> eog_ids_;    // sorted; set by create()
};

// Holds back bytes of an incomplete UTF-8 sequence at the end of a stream so a streamed reply
// never shows half a character. push() returns what is safe to print now; flush() the rest.
class Utf8StreamDecoder {
public:
    std::string push(std::string_view bytes);
    std::string flush();

private:
    std::string pending_;
};

}  // namespace workbench
