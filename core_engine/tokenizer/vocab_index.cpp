// Token lookup and special-token partitioning, mirroring llama.cpp's token_to_id map and its
// tokenizer_st_partition: special tokens are cut out of the text before pre-tokenization, so a
// "<|im_start|>" in a prompt becomes one id instead of being merged as ordinary characters.
#include "tokenizer/vocab_index.h"

#include <algorithm>

#include "tokenizer/special_tokens.h"

namespace workbench {

std::string byte_token_text(uint8_t byte) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    return std::string{'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
}

std::string byte_token_value(std::string_view text) {
    if (text.size() < 4) return {};
    unsigned value = 0;
    for (char c : text.substr(3, 2)) {
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if (digit < 0) break;
        value = value * 16 + static_cast<unsigned>(digit);
    }
    return std::string(1, static_cast<char>(value));
}

VocabIndex::VocabIndex(const TokenizerVocab& vocab) {
    const size_t n = vocab.tokens.size();
    token_to_id_.reserve(n);
    attrs_.resize(n);
    for (size_t i = 0; i < n; ++i) {
        token_to_id_.insert_or_assign(vocab.tokens[i], static_cast<TokenId>(i));
        attrs_[i] = token_type_attr(vocab.token_types[i]);
        if ((attrs_[i] & (attr_control | attr_user_defined | attr_unknown)) && !vocab.tokens[i].empty()) {
            const bool always = !(attrs_[i] & (attr_control | attr_unknown));
            specials_.push_back({static_cast<TokenId>(i), vocab.tokens[i], always});
        }
    }
    // Longest first, so "<|im_start|>" is not cut short by a special token that is its prefix.
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const Special& a, const Special& b) { return a.text.size() > b.text.size(); });
}

TokenId VocabIndex::find(std::string_view text) const {
    auto it = token_to_id_.find(text);
    return it == token_to_id_.end() ? -1 : it->second;
}

std::vector<TextFragment> VocabIndex::partition(std::string_view text, bool parse_special) const {
    std::vector<TextFragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({-1, 0, text.size()});
    std::vector<TextFragment> next;
    for (const Special& special : specials_) {
        if (!parse_special && !special.always) continue;
        next.clear();
        for (const TextFragment& fragment : fragments) {
            if (fragment.token >= 0) {
                next.push_back(fragment);
                continue;
            }
            size_t pos = fragment.begin;
            while (pos < fragment.end) {
                const std::string_view rest = text.substr(pos, fragment.end - pos);
                const size_t hit = rest.find(special.text);
                if (hit == std::string_view::npos) break;
                if (hit > 0) next.push_back({-1, pos, pos + hit});
                next.push_back({special.id, pos + hit, pos + hit + special.text.size()});
                pos += hit + special.text.size();
            }
            if (pos < fragment.end) next.push_back({-1, pos, fragment.end});
        }
        fragments.swap(next);
    }
    return fragments;
}

}  // namespace workbench
