// SentencePiece-style encoding and piece rendering, following llama.cpp's SPM session: the whole
// fragment is merged at once (no regex words), and a final symbol that is not a piece is emitted
// as byte tokens.
#include "tokenizer/spm_tokenizer.h"

#include "tokenizer/special_tokens.h"
#include "tokenizer/symbol_merger.h"

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

SpmTokenizer::SpmTokenizer(TokenizerVocab vocab) : Tokenizer(std::move(vocab)), index_(vocab_) {
    for (int b = 0; b < 256; ++b) {
        const char byte = static_cast<char>(b);
        TokenId id = index_.find(byte_token_text(static_cast<uint8_t>(b)));
        if (id < 0) id = index_.find(std::string_view(&byte, 1));
        byte_tokens_[static_cast<size_t>(b)] = id >= 0 ? id : vocab_.unk_id;
    }
}

void SpmTokenizer::encode_text(std::string_view escaped, std::vector<TokenId>& out) const {
    const auto priority = [&](std::string_view left, std::string_view right) -> std::optional<double> {
        const TokenId id = index_.find(std::string_view(left.data(), left.size() + right.size()));
        if (id < 0) return std::nullopt;
        return vocab_.scores[static_cast<size_t>(id)];
    };
    for (const SymbolSpan& span : merge_symbols(escaped, priority)) {
        const std::string_view text = escaped.substr(span.begin, span.size);
        if (TokenId id = index_.find(text); id >= 0) {
            out.push_back(id);
            continue;
        }
        // Only unmerged characters can miss here (merges only form pieces), so llama.cpp's
        // re-segmentation of merged symbols never applies; bytes are the fallback.
        for (char c : text) {
            const TokenId id = byte_tokens_[static_cast<unsigned char>(c)];
            if (id >= 0) out.push_back(id);
        }
    }
}

std::vector<TokenId> SpmTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
    std::vector<TokenId> out;
    if (add_bos && vocab_.add_bos) out.push_back(vocab_.bos_id);
    // The space prefix goes before text at the start and after every special token, because the
    // model saw each such run as the start of a SentencePiece "sentence".
    bool after_special = true;
    for (const TextFragment& fragment : index_.partition(text, parse_special)) {
        if (fragment.token >= 0) {
            out.push_back(fragment.token);
            after_special = true;
            continue;
        }
        std::string raw;
        if (vocab_.add_space_prefix && after_special) raw = " ";
        raw += text.substr(fragment.begin, fragment.end - fragment.begin);
        encode_text(escape_spaces(raw), out);
        after_special = false;
    }
    if (add_bos && vocab_.add_eos) out.push_back(vocab_.eos_id);
    return out;
}

std::string SpmTokenizer::token_to_piece(TokenId id, bool render_special) const {
    if (!index_.valid(id)) return {};
    const uint32_t attr = index_.attr(id);
    const std::string& text = vocab_.tokens[static_cast<size_t>(id)];
    if (attr & (attr_control | attr_unknown)) return render_special ? text : std::string();
    if (attr & attr_user_defined) return text;
    if (attr & attr_normal) return unescape_spaces(text);
    if (attr & attr_byte) return byte_token_value(text);
    return {};
}

}  // namespace workbench
