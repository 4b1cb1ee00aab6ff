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
#include "tokenizer/vocab_index.h"

namespace workbench {

class BpeTokenizer final : public IndexedTokenizer {
public:
    // `vocab` must be normalised by Tokenizer::create. Errors: invalid_file (a merge that is not
    // "left right"), unsupported (unknown pre-tokenizer).
    static Result<std::unique_ptr<Tokenizer>> create(TokenizerVocab vocab);

private:
    BpeTokenizer(TokenizerVocab vocab, PreTokenizer pre);

    void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const override;
    std::string normal_piece(const std::string& text) const override;
    void encode_word(const std::string& word, std::vector<TokenId>& out) const;
    // Rank of merging `left` and `right` (lower merges first), or -1 when they never merge.
    int32_t merge_rank(std::string_view left, std::string_view right, std::string& scratch) const;

    PreTokenizer pre_;
    // Keyed by the merge line "left right"; byte-level symbols never contain a raw space, so the
    // key is unambiguous. The first occurrence of a duplicated merge keeps its rank.
    std::unordered_map<std::string, int32_t, StringViewHash, std::equal_to<>> ranks_;
};

}  // namespace workbench
