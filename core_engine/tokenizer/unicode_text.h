// UTF-8 and byte-level helpers shared by the tokenizers: lenient code point decoding that treats
// malformed input the way llama.cpp does (each bad byte becomes U+FFFD), encoding, and GPT-2's
// reversible byte <-> printable-code-point mapping that byte-level BPE vocabularies are written in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace workbench {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Length of the UTF-8 sequence a lead byte announces (1 for stray continuation bytes), judged
// from the high nibble only, as SentencePiece-style splitting does.
size_t utf8_sequence_length(unsigned char lead);

// Code points of `text`. A byte that does not start a well-formed sequence yields U+FFFD and
// decoding resumes at the next byte. Overlong forms and surrogates are accepted as decoded.
std::vector<uint32_t> decode_utf8_lenient(std::string_view text);

// Appends the UTF-8 form of `cp`. Values past U+10FFFF (which lenient decoding can produce from
// F5..F7 lead bytes) are written as U+FFFD.
void append_utf8(std::string& out, uint32_t cp);

// GPT-2 byte-level alphabet: every byte maps to one printable code point, so that any byte string
// is a string of visible characters that BPE merges can operate on.
class ByteUnicodeMap {
public:
    static const ByteUnicodeMap& instance();

    // UTF-8 text of the code point standing for `byte`.
    const std::string& byte_to_text(uint8_t byte) const { return byte_text_[byte]; }
    // The byte a code point stands for, or nullopt for code points outside the alphabet.
    std::optional<uint8_t> code_point_to_byte(uint32_t cp) const;

private:
    ByteUnicodeMap();
    static constexpr uint32_t kMovedBytes = 68;  // bytes that are not printable Latin-1
    std::string byte_text_[256];
    uint8_t moved_byte_[kMovedBytes] = {};       // U+0100 + i stands for moved_byte_[i]
};

// Writes `bytes` in the byte-level alphabet (each byte becomes its stand-in character).
std::string bytes_to_byte_level(std::string_view bytes);

}  // namespace workbench
