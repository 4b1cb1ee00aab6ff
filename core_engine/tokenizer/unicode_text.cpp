// UTF-8 decoding/encoding and the GPT-2 byte-level alphabet. Decoding is deliberately lenient and
// byte-for-byte compatible with llama.cpp so that malformed prompts tokenize to the same ids.
#include "tokenizer/unicode_text.h"

namespace workbench {

size_t utf8_sequence_length(unsigned char lead) {
    static constexpr size_t kByNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kByNibble[lead >> 4];
}

namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Decodes one sequence at `pos`; returns its length, or 0 when the bytes there are malformed.
size_t decode_one(std::string_view text, size_t pos, uint32_t& cp) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
    const unsigned char b0 = byte(0);
    if ((b0 & 0x80) == 0) {
        cp = b0;
        return 1;
    }
    size_t len = 0;
    if ((b0 & 0x40) == 0) return 0;         // stray continuation byte
    if ((b0 & 0x20) == 0) {
        len = 2;
        cp = b0 & 0x1F;
    } else if ((b0 & 0x10) == 0) {
        len = 3;
        cp = b0 & 0x0F;
    } else if ((b0 & 0x08) == 0) {
        len = 4;
        cp = b0 & 0x07;
    } else {
        return 0;                            // 0xF8..0xFF never start a sequence
    }
    if (pos + len > text.size()) return 0;   // truncated at the end of the text
    for (size_t i = 1; i < len; ++i) {
        if (!is_continuation(byte(i))) return 0;
        cp = (cp << 6) | (byte(i) & 0x3F);
    }
    return len;
}

}  // namespace

std::vector<uint32_t> decode_utf8_lenient(std::string_view text) {
    std::vector<uint32_t> cps;
    cps.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        uint32_t cp = 0;
        const size_t len = decode_one(text, pos, cp);
        if (len == 0) {
            cps.push_back(kReplacementChar);
            ++pos;
        } else {
            cps.push_back(cp);
            pos += len;
        }
    }
    return cps;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp > 0x10FFFF) cp = kReplacementChar;
    if (cp <= 0x7F) {
        out.push_back(static_cast<char>(cp));
    } else if (cp <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

ByteUnicodeMap::ByteUnicodeMap() {
    // Printable Latin-1 bytes stand for themselves; the rest (controls, space, DEL, NBSP, soft
    // hyphen) are moved, in byte order, to U+0100 and up so that none of them is whitespace.
    uint32_t next_free = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const uint32_t cp = printable ? static_cast<uint32_t>(b) : next_free++;
        if (!printable) moved_byte_[cp - 256] = static_cast<uint8_t>(b);
        append_utf8(byte_text_[b], cp);
    }
}

const ByteUnicodeMap& ByteUnicodeMap::instance() {
    static const ByteUnicodeMap map;
    return map;
}

std::optional<uint8_t> ByteUnicodeMap::code_point_to_byte(uint32_t cp) const {
    if (cp < 256) {
        const bool printable = (cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE);
        if (printable) return static_cast<uint8_t>(cp);
        return std::nullopt;
    }
    if (cp - 256 < kMovedBytes) return moved_byte_[cp - 256];
    return std::nullopt;
}

std::string bytes_to_byte_level(std::string_view bytes) {
    const ByteUnicodeMap& map = ByteUnicodeMap::instance();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) out += map.byte_to_text(static_cast<uint8_t>(c));
    return out;
}

}  // namespace workbench
