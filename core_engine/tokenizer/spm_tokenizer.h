// SentencePiece-style tokenizer ("llama" tokenizer model): spaces become U+2581 ("▁"), an optional
// space is prefixed, adjacent symbols merge by the score of the piece they form (highest first),
// and characters no piece covers fall back to <0xXX> byte tokens. Mirrors llama.cpp's
// llm_tokenizer_spm, including where the space prefix goes around special tokens.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_index.h"

namespace workbench {

class SpmTokenizer final : public Tokenizer {
public:
    // `vocab` must be normalised by Tokenizer::create.
    static Result<std::unique_ptr<Tokenizer>> create(TokenizerVocab vocab);

    std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special) const override;
    std::string token_to_piece(TokenId id, bool render_special) const override;
    TokenId find_token(std::string_view text) const override { return index_.find(text); }

private:
    explicit SpmTokenizer(TokenizerVocab vocab);
    void encode_text(std::string_view escaped, std::vector<TokenId>& out) const;

    VocabIndex index_;
    // Token for each byte: its <0xXX> token, else a one-byte token, else UNK (-1 when none).
    std::array<TokenId, 256> byte_tokens_{};
};

}  // namespace workbench
