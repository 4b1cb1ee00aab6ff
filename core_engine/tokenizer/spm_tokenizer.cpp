// SentencePiece-style encoding and piece rendering, following llama.cpp's SPM session: the whole
// fragment is merged at once (no regex words), and a final symbol that is not a piece is emitted
// as byte tokens.
#include "tokenizer/spm_tokenizer.h"


namespace workbench {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

std::string escape_spaces(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    for (char c : text) {
        if (c == ' ') {
            out += kSpaceMarker;
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::string unescape_spaces(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        if (text.substr(pos, kSpaceMarker.size()) == kSpaceMarker) {
            out.push_back(' ');
            pos += kSpaceMarker.size();
        } else {
            out.push_back(text[pos++]);
        }
    }
    return out;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> SpmTokenizer::create(TokenizerVocab vocab) {
    return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(vocab)));
}

SpmTokenizer::SpmTokenizer(TokenizerVocab vocab) : IndexedTokenizer(std::move(vocab)) {
    // <0xXX> first, then a one-byte piece, as llama.cpp looks them up; where it would throw for a
    // byte that has neither, UNK keeps encoding total.
    for (int b = 0; b < 256; ++b) {
        const char byte = static_cast<char>(b);
        TokenId id = index_.find(byte_token_text(static_cast<uint8_t>(b)));
        if (id < 0) id = index_.find(std::string_view(&byte, 1));
        byte_fallback_[static_cast<size_t>(b)] = id >= 0 ? id : vocab_.unk_id;
    }
}

void SpmTokenizer::encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const {
    // The space prefix goes before text at the start and after every special token, because the
    // model saw each such run as the start of a SentencePiece "sentence".
    std::string raw;
    if (vocab_.add_space_prefix && after_special) raw = " ";
    raw += text;
    const std::string escaped = escape_spaces(raw);

    const auto priority = [&](std::string_view left, std::string_view right) -> std::optional<double> {
        const TokenId id = index_.find(std::string_view(left.data(), left.size() + right.size()));
        if (id < 0) return std::nullopt;
        return vocab_.scores[static_cast<size_t>(id)];
    };
    // Only unmerged characters can miss the vocab (merges only form pieces), so llama.cpp's
    // re-segmentation of merged symbols never applies and byte tokens are the whole fallback.
    emit_spans(escaped, merge_symbols(escaped, priority), out);
}

std::string SpmTokenizer::normal_piece(const std::string& text) const { return unescape_spaces(text); }

}  // namespace workbench
