// JSON, CSV and time formatting for the store's exports. Pure functions: no SQLite, no state.
#include "store/store_text.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace workbench::store {

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

void append_number(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    char buf[32];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

void append_number(std::string& out, int64_t value) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

std::string& JsonObject::key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, key);
    out_ += ':';
    return out_;
}

JsonObject& JsonObject::field(std::string_view k, std::string_view text) {
    append_json_string(key(k), text);
    return *this;
}

JsonObject& JsonObject::field(std::string_view k, int64_t value) {
    append_number(key(k), value);
    return *this;
}

JsonObject& JsonObject::field(std::string_view k, double value) {
    append_number(key(k), value);
    return *this;
}

JsonObject& JsonObject::field(std::string_view k, const std::optional<double>& value) {
    if (value) append_number(key(k), *value);
    else key(k) += "null";
    return *this;
}

JsonObject& JsonObject::raw(std::string_view k, std::string_view json) {
    key(k).append(json.empty() ? std::string_view("null") : json);
    return *this;
}

void append_csv_field(std::string& out, std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(text);
        return;
    }
    out += '"';
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

void append_csv_number(std::string& out, const std::optional<double>& value) {
    if (value && std::isfinite(*value)) append_number(out, *value);
}

std::string format_utc(int64_t unix_ms) {
    if (unix_ms == 0) return {};
    const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[80];  // room for any int the compiler cannot rule out
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
    return buf;
}

int64_t now_unix_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace workbench::store
