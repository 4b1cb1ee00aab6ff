// Byte-level BPE ("gpt2" tokenizer model): special tokens are cut out first, the rest is split by
// the pre-tokenizer regexes into words written in GPT-2's byte alphabet, and each word is merged
// pair by pair in merge-rank order. Mirrors llama.cpp's llm_tokenizer_bpe so ids match exactly.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_index.h"

namespace workbench {

class BpeTokenizer final : public Tokenizer {
public:
    // `vocab` must be normalised by Tokenizer::create. Errors: invalid_file (a merge that is not
    // "left right"), unsupported (unknown pre-tokenizer).
    static Result<std::unique_ptr<Tokenizer>> create(TokenizerVocab vocab);

    std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special) const override;
    std::string token_to_piece(TokenId id, bool render_special) const override;
    TokenId find_token(std::string_view text) const override { return index_.find(text); }

private:
    BpeTokenizer(TokenizerVocab vocab, PreTokenizer pre);
    void encode_word(const std::string& word, std::vector<TokenId>& out) const;
    // Rank of merging `left` and `right` (lower merges first), or -1 when they never merge.
    int32_t merge_rank(std::string_view left, std::string_view right, std::string& scratch) const;

    VocabIndex index_;
    PreTokenizer pre_;
    // Keyed by the merge line "left right"; byte-level symbols never contain a raw space, so the
    // key is unambiguous. The first occurrence of a duplicated merge keeps its rank.
    std::unordered_map<std::string, int32_t, StringViewHash, std::equal_to<>> ranks_;
};

}  // namespace workbench
