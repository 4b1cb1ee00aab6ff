// JSON emission with strict escaping.
#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace wbcli {
namespace {

// Length of a valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return len;
}

}  // namespace

std::string json_escape(std::string_view s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        size_t len = utf8_sequence_length(s, i);
        if (len == 0) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        if (len > 1) {
            out.append(s.substr(i, len));
            i += len;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out + "\"";
}

void JsonWriter::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ",";
        first_.back() = false;
    }
}

JsonWriter& JsonWriter::begin_object() { separate(); out_ += "{"; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::end_object() { out_ += "}"; first_.pop_back(); return *this; }
JsonWriter& JsonWriter::begin_array() { separate(); out_ += "["; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::end_array() { out_ += "]"; first_.pop_back(); return *this; }

JsonWriter& JsonWriter::key(std::string_view k) {
    separate();
    out_ += json_escape(k) + ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) { separate(); out_ += json_escape(s); return *this; }
JsonWriter& JsonWriter::value(int64_t i) { separate(); out_ += std::to_string(i); return *this; }
JsonWriter& JsonWriter::value(uint64_t u) { separate(); out_ += std::to_string(u); return *this; }
JsonWriter& JsonWriter::value(bool b) { separate(); out_ += b ? "true" : "false"; return *this; }
JsonWriter& JsonWriter::null() { separate(); out_ += "null"; return *this; }

JsonWriter& JsonWriter::value(double d) {
    if (!std::isfinite(d)) return null();
    separate();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", d);
    out_ += buf;
    return *this;
}

JsonWriter& JsonWriter::value(const std::optional<double>& d) { return d ? value(*d) : null(); }

void print_json_array(const std::vector<std::string>& objects) {
    std::string out = "[";
    for (size_t i = 0; i < objects.size(); ++i) out += (i ? "," : "") + objects[i];
    std::fputs((out + "]\n").c_str(), stdout);
}

}  // namespace wbcli
