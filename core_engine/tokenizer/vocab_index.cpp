// Special-token rules, token lookup and special-token partitioning, following llama.cpp's
// llama_vocab::load, token_to_id and tokenizer_st_partition. GGUF files often mark end-of-turn tokens
// as plain control tokens without naming them, so, like llama.cpp, we recognise them by text; and
// special tokens are cut out of the text before pre-tokenization, so a "<|im_start|>" in a prompt
// becomes one id instead of being merged as ordinary characters.
#include "tokenizer/vocab_index.h"

#include <algorithm>
#include <span>
#include <unordered_map>

namespace workbench {

namespace {

using TextList = std::span<const std::string_view>;

// Candidates for the EOT id, in order of preference when a vocab holds several.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
    "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
// Fill-in-the-middle markers: llama.cpp forces them to control type, and pad/repo/file-separator
// ones also end generation.
constexpr std::string_view kFimPrefixTexts[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>",
                                                "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSuffixTexts[] = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>",
                                                "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMiddleTexts[] = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>",
                                                "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRepoTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
// Every token with one of these texts ends generation.
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["};
// gpt-oss markers that must always render, so they become user-defined.
constexpr std::string_view kAlwaysRenderTexts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

// Ids of the candidate texts present in the vocab. For a text that occurs more than once the
// last id wins, as in llama.cpp's text -> id map.
class CandidateIds {
public:
    explicit CandidateIds(const std::vector<std::string>& tokens) {
        const TextList lists[] = {kEotTexts,    kEomTexts,     kFimPrefixTexts, kFimSuffixTexts, kFimMiddleTexts,
                                  kFimPadTexts, kFimRepoTexts, kFimSepTexts,    kEogTexts,       kAlwaysRenderTexts};
        for (TextList list : lists) {
            for (std::string_view text : list) ids_.emplace(text, -1);
        }
        for (size_t i = 0; i < tokens.size(); ++i) {
            auto it = ids_.find(tokens[i]);
            if (it != ids_.end()) it->second = static_cast<TokenId>(i);
        }
    }
    TokenId find(std::string_view text) const {
        auto it = ids_.find(text);
        return it == ids_.end() ? -1 : it->second;
    }
    // The first text of `list` present in the vocab, or -1.
    TokenId first_of(TextList list) const {
        for (std::string_view text : list) {
            if (TokenId id = find(text); id >= 0) return id;
        }
        return -1;
    }

private:
    std::unordered_map<std::string_view, TokenId> ids_;
};

void set_type(TokenizerVocab& vocab, TokenId id, TokenType type) {
    vocab.token_types[static_cast<size_t>(id)] = static_cast<int32_t>(type);
}

// A token that reads like a control marker becomes one whatever the file said; llama.cpp does the
// same (with a warning that the file is probably wrong), and parsing and rendering depend on it.
void force_control(TokenizerVocab& vocab, TokenId id) {
    if (id >= 0 && !(token_type_attr(vocab.token_types[static_cast<size_t>(id)]) & attr_control)) {
        set_type(vocab, id, TokenType::control);
    }
}

// The byte a "<0x0A>"-style token stands for, hex read as llama.cpp reads it (stopping at a
// non-digit); "" when the text is too short to hold one.
std::string byte_token_value(std::string_view text) {
    if (text.size() < 3) return {};
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

}  // namespace

uint32_t token_type_attr(int32_t token_type) {
    switch (static_cast<TokenType>(token_type)) {
        case TokenType::normal: return attr_normal;
        case TokenType::unknown: return attr_unknown;
        case TokenType::control: return attr_control;
        case TokenType::user_defined: return attr_user_defined;
        case TokenType::unused: return attr_unused;
        case TokenType::byte: return attr_byte;
        case TokenType::undefined: break;
    }
    return attr_undefined;
}

std::vector<TokenId> apply_special_token_rules(TokenizerVocab& vocab) {
    const CandidateIds candidates(vocab.tokens);
    std::vector<TokenId> eog;
    const auto add_eog = [&](TokenId id) {
        if (id >= 0 && std::find(eog.begin(), eog.end(), id) == eog.end()) eog.push_back(id);
    };

    if (vocab.eot_id < 0) {
        vocab.eot_id = candidates.first_of(kEotTexts);
        force_control(vocab, vocab.eot_id);
    }
    const TokenId eom_id = candidates.first_of(kEomTexts);
    force_control(vocab, eom_id);
    for (TextList list : {TextList(kFimPrefixTexts), TextList(kFimSuffixTexts), TextList(kFimMiddleTexts)}) {
        force_control(vocab, candidates.first_of(list));
    }
    for (TextList list : {TextList(kFimPadTexts), TextList(kFimRepoTexts), TextList(kFimSepTexts)}) {
        const TokenId id = candidates.first_of(list);
        force_control(vocab, id);
        add_eog(id);
    }
    for (std::string_view text : kEogTexts) {
        const TokenId id = candidates.find(text);
        force_control(vocab, id);
        add_eog(id);
    }
    for (std::string_view text : kAlwaysRenderTexts) {
        if (TokenId id = candidates.find(text); id >= 0) set_type(vocab, id, TokenType::user_defined);
    }
    add_eog(vocab.eos_id);
    add_eog(vocab.eot_id);
    add_eog(eom_id);

    const auto eog_text = [&](std::string_view text) -> TokenId {
        for (TokenId id : eog) {
            if (vocab.tokens[static_cast<size_t>(id)] == text) return id;
        }
        return -1;
    };
    const auto drop_eog = [&](TokenId id, TokenType new_type) {
        eog.erase(std::find(eog.begin(), eog.end(), id));
        set_type(vocab, id, new_type);
    };
    // Harmony-style vocabs end turns with <|return|>/<|call|>; there <|end|> only ends a message.
    const bool has_call = eog_text("<|call|>") >= 0 || eog_text("<|calls|>") >= 0;
    const TokenId end_id = eog_text("<|end|>");
    if (end_id >= 0 && has_call && (eog_text("<|return|>") >= 0 || eog_text("<|flush|>") >= 0)) {
        drop_eog(end_id, TokenType::user_defined);
    }
    // Gemma 4 and PLaMo use </s> as an ordinary token.
    const TokenId s_id = eog_text("</s>");
    if (s_id >= 0 && (eog_text("<|tool_response>") >= 0 || eog_text("<|plamo:eos|>") >= 0)) {
        drop_eog(s_id, TokenType::normal);
    }

    std::sort(eog.begin(), eog.end());
    return eog;
}

std::string byte_token_text(uint8_t byte) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    return std::string{'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
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

std::vector<TextFragment> VocabIndex::partition(std::string_view text, bool parse_special, std::span<const TextRange> text_only) const {
    std::vector<TextFragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({-1, 0, text.size()});
    auto in_text_only = [&](size_t begin, size_t end) {
        return std::any_of(text_only.begin(), text_only.end(), [&](const TextRange& r) { return begin < r.end && end > r.begin; });
    };
    std::vector<TextFragment> next;
    for (const Special& special : specials_) {
        if (!parse_special && !special.always) continue;
        next.clear();
        for (const TextFragment& fragment : fragments) {
            if (fragment.token >= 0) {
                next.push_back(fragment);
                continue;
            }
            size_t pos = fragment.begin, from = fragment.begin;
            while (from < fragment.end) {
                const size_t hit = text.substr(from, fragment.end - from).find(special.text);
                if (hit == std::string_view::npos) break;
                const size_t begin = from + hit, end = begin + special.text.size();
                if (!special.always && in_text_only(begin, end)) {   // typed by a user: stays text (user-defined tokens split as llama.cpp splits them)
                    from = begin + 1;
                    continue;
                }
                if (begin > pos) next.push_back({-1, pos, begin});
                next.push_back({special.id, begin, end});
                pos = from = end;
            }
            if (pos < fragment.end) next.push_back({-1, pos, fragment.end});
        }
        fragments.swap(next);
    }
    return fragments;
}

std::vector<TokenId> IndexedTokenizer::encode(std::string_view text, bool add_bos, bool parse_special,
                                              std::span<const TextRange> text_only) const {
    std::vector<TokenId> out;
    if (add_bos && vocab_.add_bos) out.push_back(vocab_.bos_id);
    bool after_special = true;
    for (const TextFragment& fragment : index_.partition(text, parse_special, text_only)) {
        if (fragment.token >= 0) {
            out.push_back(fragment.token);
            after_special = true;
            continue;
        }
        encode_fragment(text.substr(fragment.begin, fragment.end - fragment.begin), after_special, out);
        after_special = false;
    }
    if (add_bos && vocab_.add_eos) out.push_back(vocab_.eos_id);
    return out;
}

void IndexedTokenizer::emit_spans(std::string_view text, const std::vector<SymbolSpan>& spans,
                                  std::vector<TokenId>& out) const {
    for (const SymbolSpan& span : spans) {
        const std::string_view piece = text.substr(span.begin, span.size);
        if (TokenId id = index_.find(piece); id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char c : piece) {
            if (TokenId id = byte_fallback_[static_cast<unsigned char>(c)]; id >= 0) out.push_back(id);
        }
    }
}

std::string IndexedTokenizer::token_to_piece(TokenId id, bool render_special) const {
    if (!index_.valid(id)) return {};
    const uint32_t attr = index_.attr(id);
    const std::string& text = vocab_.tokens[static_cast<size_t>(id)];
    if (attr & (attr_control | attr_unknown)) return render_special ? text : std::string();
    if (attr & attr_user_defined) return text;
    if (attr & attr_normal) return normal_piece(text);
    if (attr & attr_byte) return byte_token_value(text);
    return {};  // undefined and unused tokens render as nothing, as in llama.cpp
}

}  // namespace workbench
