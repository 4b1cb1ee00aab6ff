// SentencePiece-style tokenizer ("llama" tokenizer model): spaces become U+2581 ("▁"), an optional
// space is prefixed, adjacent symbols merge by the score of the piece they form (highest first),
// and characters no piece covers fall back to <0xXX> byte tokens. Mirrors llama.cpp's
// llm_tokenizer_spm, including where the space prefix goes around special tokens.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab_index.h"

namespace workbench {

class SpmTokenizer final : public IndexedTokenizer {
public:
    // `vocab` must be normalised by Tokenizer::create.
    static Result<std::unique_ptr<Tokenizer>> create(TokenizerVocab vocab);

private:
    explicit SpmTokenizer(TokenizerVocab vocab);

    void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const override;
    std::string normal_piece(const std::string& text) const override;
};

}  // namespace workbench
