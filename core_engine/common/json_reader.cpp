// Recursive-descent JSON parsing with a depth limit, so a hostile file cannot exhaust the stack.
#include "workbench/json.h"

#include <cstdint>

#include <cmath>
#include <cstdlib>

namespace workbench {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
public:
    explicit Parser(std::string_view t) : t_(t) {}

    bool document(JsonValue& out, std::string& err) {
        ws();
        if (!value(out, 0)) return fail(err);
        ws();
        if (i_ != t_.size()) return expected("end of input"), fail(err);
        return true;
    }

private:
    bool fail(std::string& err) {
        err = "at byte " + std::to_string(i_) + ": " + (msg_.empty() ? "invalid JSON" : msg_);
        return false;
    }
    bool expected(const std::string& what) {
        if (msg_.empty()) msg_ = "expected " + what;
        return false;
    }
    void ws() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
    }
    bool literal(std::string_view word) {
        if (t_.substr(i_, word.size()) != word) return expected(std::string(word));
        i_ += word.size();
        return true;
    }
    bool value(JsonValue& out, int depth) {
        if (depth > kMaxDepth) return expected("nesting at most " + std::to_string(kMaxDepth) + " deep");
        if (i_ >= t_.size()) return expected("a value");
        const char c = t_[i_];
        if (c == '{') return object(out, depth);
        if (c == '[') return array(out, depth);
        if (c == '"') {
            std::string s;
            if (!string(s)) return false;
            out.v = std::move(s);
            return true;
        }
        if (c == 't') return literal("true") && (out.v = true, true);
        if (c == 'f') return literal("false") && (out.v = false, true);
        if (c == 'n') return literal("null") && (out.v = nullptr, true);
        return number(out);
    }
    bool object(JsonValue& out, int depth) {
        auto obj = std::make_shared<JsonValue::Object>();
        ++i_;
        ws();
        if (i_ < t_.size() && t_[i_] == '}') {
            ++i_;
            out.v = obj;
            return true;
        }
        while (true) {
            ws();
            std::string key;
            if (i_ >= t_.size() || t_[i_] != '"') return expected("a string key");
            if (!string(key)) return false;
            ws();
            if (i_ >= t_.size() || t_[i_] != ':') return expected("':'");
            ++i_;
            ws();
            JsonValue v;
            if (!value(v, depth + 1)) return false;
            (*obj)[key] = std::move(v);
            ws();
            if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
            if (i_ < t_.size() && t_[i_] == '}') { ++i_; break; }
            return expected("',' or '}'");
        }
        out.v = obj;
        return true;
    }
    bool array(JsonValue& out, int depth) {
        auto arr = std::make_shared<JsonValue::Array>();
        ++i_;
        ws();
        if (i_ < t_.size() && t_[i_] == ']') {
            ++i_;
            out.v = arr;
            return true;
        }
        while (true) {
            ws();
            JsonValue v;
            if (!value(v, depth + 1)) return false;
            arr->push_back(std::move(v));
            ws();
            if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
            if (i_ < t_.size() && t_[i_] == ']') { ++i_; break; }
            return expected("',' or ']'");
        }
        out.v = arr;
        return true;
    }
    bool hex4(uint32_t& cp) {
        if (i_ + 4 > t_.size()) return expected("four hex digits");
        cp = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = t_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
            else return expected("a hex digit");
        }
        return true;
    }
    static void utf8(uint32_t cp, std::string& s) {
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
        else if (cp < 0x10000)
            s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
        else
            s += static_cast<char>(0xF0 | (cp >> 18)), s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
                s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    bool string(std::string& s) {
        ++i_;  // the opening quote
        while (true) {
            if (i_ >= t_.size()) return expected("a closing '\"'");
            const char c = t_[i_++];
            if (c == '"') return true;
            if (static_cast<unsigned char>(c) < 0x20) return --i_, expected("no raw control characters in a string");
            if (c != '\\') {
                s += c;
                continue;
            }
            if (i_ >= t_.size()) return expected("an escape");
            const char e = t_[i_++];
            switch (e) {
            case '"': s += '"'; break;
            case '\\': s += '\\'; break;
            case '/': s += '/'; break;
            case 'b': s += '\b'; break;
            case 'f': s += '\f'; break;
            case 'n': s += '\n'; break;
            case 'r': s += '\r'; break;
            case 't': s += '\t'; break;
            case 'u': {
                uint32_t cp;
                if (!hex4(cp)) return false;
                if (cp >= 0xD800 && cp < 0xDC00 && t_.substr(i_, 2) == "\\u") {
                    i_ += 2;
                    uint32_t lo;
                    if (!hex4(lo)) return false;
                    if (lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else cp = 0xFFFD;
                } else if (cp >= 0xD800 && cp < 0xE000) {
                    cp = 0xFFFD;  // a lone surrogate
                }
                utf8(cp, s);
                break;
            }
            default: return --i_, expected("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
        }
    }
    bool number(JsonValue& out) {
        const size_t start = i_;
        if (i_ < t_.size() && t_[i_] == '-') ++i_;
        auto digits = [&] {
            const size_t d0 = i_;
            while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
            return i_ > d0;
        };
        if (!digits()) return i_ = start, expected("a value");
        if (i_ < t_.size() && t_[i_] == '.' && (++i_, !digits())) return expected("digits after '.'");
        if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
            ++i_;
            if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
            if (!digits()) return expected("exponent digits");
        }
        const std::string text(t_.substr(start, i_ - start));
        const double d = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(d)) return i_ = start, expected("a finite number");
        out.v = d;
        return true;
    }

    std::string_view t_;
    size_t i_ = 0;
    std::string msg_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
    if (!is_object()) return nullptr;
    const Object& o = obj();
    const auto it = o.find(key);
    return it == o.end() ? nullptr : &it->second;
}

bool parse_json(std::string_view text, JsonValue& out, std::string& error) {
    Parser p(text);
    return p.document(out, error);
}

}  // namespace workbench
