// Text-based special-token rules, following llama.cpp's llama_vocab::load. GGUF files often mark
// end-of-turn tokens as plain control tokens without naming them, so the engine, like llama.cpp,
// recognises them by their text; matching llama.cpp here keeps generation stopping at the same ids.
#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <unordered_map>

namespace workbench {

namespace {

using TextList = std::span<const std::string_view>;

// Candidates for the EOT id, in order of preference when a vocab holds several.
constexpr std::string_view kEotTexts[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
                                "<end_of_utterance>"};
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
constexpr std::string_view kEogTexts[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
                                "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
                                "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
                                "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["};
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

// Control type wins over whatever the file said; a byte or user-defined token that reads like an
// end-of-turn marker is one in practice.
void force_control(TokenizerVocab& vocab, TokenId id) {
    if (id >= 0 && !(token_type_attr(vocab.token_types[static_cast<size_t>(id)]) & attr_control)) {
        set_type(vocab, id, TokenType::control);
    }
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

}  // namespace workbench
