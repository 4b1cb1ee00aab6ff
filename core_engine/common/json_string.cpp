// JSON string output shared by the store's exports and the CLI's --json: invalid UTF-8 becomes
// U+FFFD (overlong forms and surrogates included), so whatever the model produced, the output parses.
#include <cstdint>
#include <cstdio>
#include <string>

#include "workbench/json.h"

namespace workbench {

namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t n = 0;
    uint32_t min_code = 0;
    if (lead < 0x80) return 1;
    if ((lead & 0xe0) == 0xc0) { n = 2; min_code = 0x80; }
    else if ((lead & 0xf0) == 0xe0) { n = 3; min_code = 0x800; }
    else if ((lead & 0xf8) == 0xf0) { n = 4; min_code = 0x10000; }
    else return 0;
    if (i + n > text.size()) return 0;
    uint32_t code = lead & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) return 0;
        code = (code << 6) | (byte(i + k) & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not valid UTF-8.
    if (code < min_code || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
    return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        const size_t n = utf8_sequence_length(text, i);
        if (n == 0) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                    out += buf;
                } else {
                    out += c;
                }
        }
        ++i;
    }
    out += '"';
}

}  // namespace workbench
