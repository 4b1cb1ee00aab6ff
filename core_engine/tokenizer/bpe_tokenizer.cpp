// Byte-level BPE encoding and piece rendering. Follows llama.cpp's llm_tokenizer_bpe_session:
// regex words, rank-ordered merges within each word, and for a leftover symbol that is not a
// token, its single bytes looked up one by one (bytes with no token are dropped, as there).
#include "tokenizer/bpe_tokenizer.h"

#include <cstdio>

#include "tokenizer/unicode_text.h"

namespace workbench {

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::create(TokenizerVocab vocab) {
    WB_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(vocab.pre));
    std::unique_ptr<BpeTokenizer> tokenizer(new BpeTokenizer(std::move(vocab), std::move(pre)));
    const std::vector<std::string>& merges = tokenizer->vocab_.merges;
    tokenizer->ranks_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        const std::string& merge = merges[i];
        // The pair splits at the first space after the first character, as llama.cpp reads it.
        const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
        if (space == std::string::npos || space + 1 == merge.size()) {
            return error(StatusCode::invalid_file, "tokenizer.ggml.merges[" + std::to_string(i) + "] = '" + merge +
                                                       "': expected two symbols separated by a space");
        }
        tokenizer->ranks_.try_emplace(merge, static_cast<int32_t>(i));
    }
    return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

BpeTokenizer::BpeTokenizer(TokenizerVocab vocab, PreTokenizer pre)
    : IndexedTokenizer(std::move(vocab)), pre_(std::move(pre)) {
    // A leftover symbol that is no token is looked up byte by byte, as raw one-byte strings; in a
    // byte-level vocab only printable ASCII has such tokens, so other bytes are dropped.
    for (int b = 0; b < 256; ++b) {
        const char byte = static_cast<char>(b);
        byte_fallback_[static_cast<size_t>(b)] = index_.find(std::string_view(&byte, 1));
    }
}

int32_t BpeTokenizer::merge_rank(std::string_view left, std::string_view right, std::string& scratch) const {
    scratch.assign(left);
    scratch += ' ';
    scratch += right;
    auto it = ranks_.find(std::string_view(scratch));
    return it == ranks_.end() ? -1 : it->second;
}

void BpeTokenizer::encode_word(const std::string& word, std::vector<TokenId>& out) const {
    if (pre_.traits().ignore_merges) {
        if (TokenId id = index_.find(word); id >= 0) {
            out.push_back(id);
            return;
        }
    }
    std::string scratch;
    const auto priority = [&](std::string_view left, std::string_view right) -> std::optional<double> {
        const int32_t rank = merge_rank(left, right, scratch);
        if (rank < 0) return std::nullopt;
        return -static_cast<double>(rank);  // lower rank merges first
    };
    emit_spans(word, merge_symbols(word, priority), out);
}

void BpeTokenizer::encode_fragment(std::string_view text, bool /*after_special*/, std::vector<TokenId>& out) const {
    for (const std::string& word : pre_.split(text)) encode_word(word, out);
}

std::string BpeTokenizer::normal_piece(const std::string& text) const {
    // Back from the byte alphabet; a character outside it is shown, as llama.cpp shows it.
    const ByteUnicodeMap& map = ByteUnicodeMap::instance();
    std::string piece;
    for (uint32_t cp : decode_utf8_lenient(text)) {
        if (std::optional<uint8_t> byte = map.code_point_to_byte(cp)) {
            piece.push_back(static_cast<char>(*byte));
            continue;
        }
        std::string utf8;
        append_utf8(utf8, cp);
        piece += "[UNK_BYTE_0x";
        for (char c : utf8) {
            char hex[3];
            std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(c));
            piece += hex;
        }
        piece += text + "]";
    }
    return piece;
}

}  // namespace workbench
