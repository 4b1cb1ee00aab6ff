// Tokenizer factory and the model-independent parts: vocab validation and normalisation, decoding
// with llama.cpp's detokenize rules, end-of-generation checks, and the streaming UTF-8 guard that
// keeps half-characters out of a streamed reply.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdint>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/vocab_index.h"

namespace workbench {

namespace {

Status check_id(const char* field, TokenId id, size_t n_tokens) {
    if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= n_tokens)) {
        return error(StatusCode::invalid_file, std::string("tokenizer ") + field + " = " + std::to_string(id) +
                                                   " is out of range (vocabulary has " +
                                                   std::to_string(n_tokens) + " tokens)");
    }
    return Status::ok_status();
}

// Fills the optional arrays and checks what the tokenizers index without further checks.
Status normalise(TokenizerVocab& vocab) {
    const size_t n = vocab.tokens.size();
    if (n == 0) return error(StatusCode::invalid_file, "tokenizer.ggml.tokens is empty");
    if (n > static_cast<size_t>(INT32_MAX)) {
        return error(StatusCode::invalid_file, "tokenizer.ggml.tokens has too many entries: " + std::to_string(n));
    }
    for (size_t i = 0; i < n; ++i) {
        // An empty piece could never be matched and would make special-token search stall.
        if (vocab.tokens[i].empty()) vocab.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
    }
    if (vocab.scores.empty()) vocab.scores.assign(n, 0.0f);
    if (vocab.scores.size() < n) {
        return error(StatusCode::invalid_file, "tokenizer.ggml.scores has " + std::to_string(vocab.scores.size()) +
                                                   " entries for " + std::to_string(n) + " tokens");
    }
    if (vocab.token_types.empty()) vocab.token_types.assign(n, static_cast<int32_t>(TokenType::normal));
    if (vocab.token_types.size() < n) {
        return error(StatusCode::invalid_file, "tokenizer.ggml.token_type has " +
                                                   std::to_string(vocab.token_types.size()) + " entries for " +
                                                   std::to_string(n) + " tokens");
    }
    vocab.scores.resize(n);
    vocab.token_types.resize(n);
    WB_RETURN_IF_ERROR(check_id("bos_id", vocab.bos_id, n));
    WB_RETURN_IF_ERROR(check_id("eos_id", vocab.eos_id, n));
    WB_RETURN_IF_ERROR(check_id("eot_id", vocab.eot_id, n));
    WB_RETURN_IF_ERROR(check_id("unk_id", vocab.unk_id, n));
    WB_RETURN_IF_ERROR(check_id("pad_id", vocab.pad_id, n));
    if (vocab.add_bos && vocab.bos_id < 0) {
        return error(StatusCode::invalid_file, "tokenizer.ggml.add_bos_token is set but the vocab has no BOS token");
    }
    if (vocab.add_eos && vocab.eos_id < 0) {
        return error(StatusCode::invalid_file, "tokenizer.ggml.add_eos_token is set but the vocab has no EOS token");
    }
    return Status::ok_status();
}

// llama.cpp's clean_up_tokenization_spaces, three passes over the decoded bytes.
std::string clean_spaces(const std::string& text) {
    if (text.empty()) return text;
    // " ?", " !", " .", " ," lose the space.
    std::string pass1(1, text[0]);
    for (size_t i = 1; i < text.size(); ++i) {
        const char c = text[i];
        if (text[i - 1] == ' ' && (c == '?' || c == '!' || c == '.' || c == ',')) pass1.pop_back();
        pass1.push_back(c);
    }
    // " ' " becomes "'". The space after is consumed, and the next character then no longer
    // counts as preceded by a space, exactly as llama.cpp's in-place loop behaves.
    std::string pass2(1, pass1[0]);
    for (size_t i = 1; i < pass1.size(); ++i) {
        const char c = pass1[i];
        if (c == '\'' && i + 1 < pass1.size() && pass1[i - 1] == ' ' && pass1[i + 1] == ' ') {
            pass2.pop_back();
            pass1[++i] = '\0';
        }
        pass2.push_back(c);
    }
    // " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
    std::string pass3(1, pass2[0]);
    for (size_t i = 1; i < pass2.size(); ++i) {
        const char c = pass2[i];
        if (pass2[i - 1] == ' ' && c == '\'' && i + 1 < pass2.size()) {
            const char c1 = pass2[i + 1];
            const char c2 = i + 2 < pass2.size() ? pass2[i + 2] : '\0';
            if (c1 == 's' || c1 == 'm' || ((c1 == 'r' || c1 == 'v') && c2 == 'e')) pass3.pop_back();
        }
        pass3.push_back(c);
    }
    return pass3;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::create(TokenizerVocab vocab) {
    if (vocab.model != "gpt2" && vocab.model != "llama") {
        return error(StatusCode::unsupported, "tokenizer.ggml.model '" + vocab.model +
                                                  "' is not supported (expected 'gpt2' or 'llama')");
    }
    WB_RETURN_IF_ERROR(normalise(vocab));
    std::vector<TokenId> eog = apply_special_token_rules(vocab);
    Result<std::unique_ptr<Tokenizer>> result =
        vocab.model == "gpt2" ? BpeTokenizer::create(std::move(vocab)) : SpmTokenizer::create(std::move(vocab));
    if (result.ok()) result.value()->eog_ids_ = std::move(eog);
    return result;
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids, bool render_special) const {
    std::string out;
    bool strip_space = vocab_.add_space_prefix;  // only ever the first token's
    for (TokenId id : ids) {
        std::string piece = token_to_piece(id, render_special);
        if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
        strip_space = false;
        out += piece;
    }
    if (vocab_.model == "gpt2" && pre_tokenizer_traits(vocab_.pre).clean_spaces) return clean_spaces(out);
    return out;
}

bool Tokenizer::is_eog(TokenId id) const {
    return id >= 0 && std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

bool Tokenizer::is_control(TokenId id) const {
    if (id < 0 || id >= n_vocab()) return false;
    return token_type_attr(vocab_.token_types[static_cast<size_t>(id)]) & attr_control;
}

namespace {

// Length of the sequence `lead` starts, or 0 when it cannot start one (so it is passed through).
size_t expected_length(unsigned char lead) {
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

}  // namespace

std::string Utf8StreamDecoder::push(std::string_view bytes) {
    pending_ += bytes;
    // Look back over at most three continuation bytes for the lead of the last sequence; if that
    // sequence is still short, keep it for the next push. Malformed bytes are never held.
    size_t lead = pending_.size();
    size_t continuations = 0;
    while (lead > 0 && continuations < 3 && (static_cast<unsigned char>(pending_[lead - 1]) & 0xC0) == 0x80) {
        --lead;
        ++continuations;
    }
    size_t keep = 0;
    if (lead > 0) {
        const size_t need = expected_length(static_cast<unsigned char>(pending_[lead - 1]));
        if (need > continuations + 1) keep = continuations + 1;
    }
    std::string ready = pending_.substr(0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    return ready;
}

std::string Utf8StreamDecoder::flush() {
    std::string rest;
    rest.swap(pending_);
    return rest;
}

}  // namespace workbench
