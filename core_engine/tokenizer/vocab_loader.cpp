// GGUF tokenizer metadata -> TokenizerVocab. Defaults follow llama.cpp's llama_vocab::load so a
// file without, say, tokenizer.ggml.add_bos_token tokenizes the same here as there; where llama.cpp
// silently falls back on a bad special-token id we report the key instead.
#include "tokenizer/vocab_loader.h"

#include <cstdint>
#include <optional>
#include <string>

#include "tokenizer/pre_tokenizer.h"

namespace workbench {

namespace {

constexpr const char* kModelKey = "tokenizer.ggml.model";
constexpr const char* kPreKey = "tokenizer.ggml.pre";
constexpr const char* kTokensKey = "tokenizer.ggml.tokens";
constexpr const char* kScoresKey = "tokenizer.ggml.scores";
constexpr const char* kTypesKey = "tokenizer.ggml.token_type";
constexpr const char* kMergesKey = "tokenizer.ggml.merges";

std::vector<std::string> to_strings(const std::vector<std::string_view>& views) {
    return {views.begin(), views.end()};
}

Status check_length(const char* key, size_t count, size_t n_tokens) {
    if (count >= n_tokens) return Status::ok_status();
    return error(StatusCode::invalid_file, std::string(key) + " has " + std::to_string(count) + " entries but " +
                                               kTokensKey + " has " + std::to_string(n_tokens));
}

// Scores are float32 in practice; llama.cpp also accepts int32.
Result<std::vector<float>> read_scores(const GgufFile& file) {
    const GgufValue* value = file.find(kScoresKey);
    if (!value) return std::vector<float>{};
    if (value->type == GgufType::array && value->array_type == GgufType::int32) {
        WB_ASSIGN_OR_RETURN(std::vector<int64_t> ints, file.get_int_array(kScoresKey));
        return std::vector<float>(ints.begin(), ints.end());
    }
    return file.get_float_array(kScoresKey);
}

Result<std::vector<int32_t>> read_types(const GgufFile& file) {
    if (!file.find(kTypesKey)) return std::vector<int32_t>{};
    WB_ASSIGN_OR_RETURN(std::vector<int64_t> values, file.get_int_array(kTypesKey));
    std::vector<int32_t> types;
    types.reserve(values.size());
    for (int64_t v : values) {
        // Out-of-enum values stay out of the enum; the tokenizer treats them as undefined.
        types.push_back(v < INT32_MIN || v > INT32_MAX ? static_cast<int32_t>(TokenType::undefined)
                                                       : static_cast<int32_t>(v));
    }
    return types;
}

// A special-token id: the key's value when present (it must index a token), otherwise llama.cpp's
// default for the model, dropped when the vocab is too small for it.
Status read_id(const GgufFile& file, const char* key, TokenId fallback, size_t n_tokens, TokenId& id) {
    WB_ASSIGN_OR_RETURN(std::optional<uint64_t> value, file.get_uint_opt(key));
    if (!value) {
        id = fallback >= 0 && static_cast<size_t>(fallback) < n_tokens ? fallback : -1;
        return Status::ok_status();
    }
    if (*value >= n_tokens) {
        return error(StatusCode::invalid_file, std::string(key) + " = " + std::to_string(*value) +
                                                   " is out of range (vocabulary has " + std::to_string(n_tokens) +
                                                   " tokens)");
    }
    id = static_cast<TokenId>(*value);
    return Status::ok_status();
}

Status read_flag(const GgufFile& file, const char* key, bool& flag) {
    WB_ASSIGN_OR_RETURN(std::optional<bool> value, file.get_bool_opt(key));
    if (value) flag = *value;
    return Status::ok_status();
}

}  // namespace

Result<TokenizerVocab> load_tokenizer_vocab(const GgufFile& file) {
    TokenizerVocab vocab;
    const GgufValue* model = file.find(kModelKey);
    if (!model) return error(StatusCode::not_found, file.path() + ": no tokenizer (" + kModelKey + " is missing)");
    WB_ASSIGN_OR_RETURN(vocab.model, file.get_string(kModelKey));
    if (vocab.model != "gpt2" && vocab.model != "llama") {
        return error(StatusCode::unsupported, file.path() + ": " + kModelKey + " = '" + vocab.model +
                                                  "' is not supported (expected 'gpt2' or 'llama')");
    }
    const bool spm = vocab.model == "llama";
    WB_ASSIGN_OR_RETURN(std::optional<std::string> pre, file.get_string_opt(kPreKey));
    vocab.pre = pre.value_or("");

    if (!file.find(kTokensKey)) return error(StatusCode::not_found, file.path() + ": " + kTokensKey + " is missing");
    WB_ASSIGN_OR_RETURN(std::vector<std::string_view> tokens, file.get_string_array(kTokensKey));
    vocab.tokens = to_strings(tokens);
    const size_t n = vocab.tokens.size();
    if (n == 0) return error(StatusCode::invalid_file, file.path() + ": " + kTokensKey + " is empty");

    const std::string where = file.path() + ": ";
    WB_ASSIGN_OR_RETURN(vocab.scores, read_scores(file));
    if (!vocab.scores.empty()) WB_RETURN_IF_ERROR(check_length(kScoresKey, vocab.scores.size(), n).with_context(where));
    WB_ASSIGN_OR_RETURN(vocab.token_types, read_types(file));
    if (!vocab.token_types.empty()) {
        WB_RETURN_IF_ERROR(check_length(kTypesKey, vocab.token_types.size(), n).with_context(where));
    }
    if (!spm) {
        if (!file.find(kMergesKey)) {
            return error(StatusCode::not_found, where + kMergesKey + " is missing (gpt2 tokenizers need it)");
        }
        WB_ASSIGN_OR_RETURN(std::vector<std::string_view> merges, file.get_string_array(kMergesKey));
        vocab.merges = to_strings(merges);
    }

    // llama.cpp's defaults: SentencePiece vocabs use <unk>=0, <s>=1, </s>=2; byte-level BPE
    // ones default BOS and EOS to 11 (GPT-2's "<|endoftext|>" position in some conversions).
    const TokenId default_bos = spm ? 1 : 11;
    const TokenId default_eos = spm ? 2 : 11;
    const TokenId default_unk = spm ? 0 : -1;
    Status status = read_id(file, "tokenizer.ggml.bos_token_id", default_bos, n, vocab.bos_id);
    if (status.ok()) status = read_id(file, "tokenizer.ggml.eos_token_id", default_eos, n, vocab.eos_id);
    if (status.ok()) status = read_id(file, "tokenizer.ggml.eot_token_id", -1, n, vocab.eot_id);
    if (status.ok()) status = read_id(file, "tokenizer.ggml.unknown_token_id", default_unk, n, vocab.unk_id);
    if (status.ok()) status = read_id(file, "tokenizer.ggml.padding_token_id", -1, n, vocab.pad_id);

    vocab.add_bos = spm || pre_tokenizer_traits(vocab.pre).add_bos;
    vocab.add_eos = false;
    vocab.add_space_prefix = spm;
    if (status.ok()) status = read_flag(file, "tokenizer.ggml.add_bos_token", vocab.add_bos);
    if (status.ok()) status = read_flag(file, "tokenizer.ggml.add_eos_token", vocab.add_eos);
    if (status.ok()) status = read_flag(file, "tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
    WB_RETURN_IF_ERROR(status.with_context(where));
    return vocab;
}

}  // namespace workbench
