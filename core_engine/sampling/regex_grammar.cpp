// A recursive-descent reading of the regular expression, written out as GBNF as it is read.
#include "sampling/regex_grammar.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace workbench {
namespace {

// A code point as it sits inside a GBNF literal or class.
std::string gbnf_escape(uint32_t cp) {
    char buf[16];
    if (cp == '"' || cp == '\\' || cp == ']' || cp == '[' || cp == '-' || cp == '^') return std::string("\\") + static_cast<char>(cp);
    if (cp < 0x20 || cp == 0x7F) {
        std::snprintf(buf, sizeof buf, "\\x%02X", cp);
        return buf;
    }
    std::string out;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08X", cp);
        out = buf;
    }
    return out;
}

class RegexReader {
public:
    RegexReader(std::string_view p, const std::string& plain) : p_(p), plain_(plain) {}

    Result<std::string> run() {
        bool start_anchor = false, end_anchor = false;
        if (!p_.empty() && p_.front() == '^') {
            start_anchor = true;
            p_.remove_prefix(1);
        }
        if (!p_.empty() && p_.back() == '$' && (p_.size() < 2 || p_[p_.size() - 2] != '\\')) {
            end_anchor = true;
            p_.remove_suffix(1);
        }
        WB_ASSIGN_OR_RETURN(std::string body, alternation());
        if (pos_ != p_.size()) return fail(std::string("an unexpected '") + p_[pos_] + "'");
        std::string out = "(" + body + ")";
        if (!start_anchor) out = plain_ + "* " + out;
        if (!end_anchor) out += " " + plain_ + "*";
        return out;
    }

private:
    std::string_view p_;
    const std::string& plain_;
    size_t pos_ = 0;
    int32_t nesting_ = 0;

    Status fail(const std::string& what) const {
        return error(StatusCode::invalid_argument, "pattern: " + what + " (at character " + std::to_string(pos_ + 1) + ")");
    }

    Result<uint32_t> code_point() {
        const auto c = static_cast<unsigned char>(p_[pos_]);
        const int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || pos_ + static_cast<size_t>(n) > p_.size()) return fail("invalid UTF-8");
        uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (int i = 1; i < n; ++i) cp = (cp << 6) | (static_cast<unsigned char>(p_[pos_ + static_cast<size_t>(i)]) & 0x3F);
        pos_ += static_cast<size_t>(n);
        return cp;
    }

    // A character as it appears in the JSON text: quote and backslash escaped.
    static std::string literal(uint32_t cp) {
        if (cp == '"') return "\"\\\\\\\"\"";    // the two characters \"
        if (cp == '\\') return "\"\\\\\\\\\"";   // the two characters \\ .
        if (cp == '\n') return "\"\\\\n\"";
        if (cp == '\t') return "\"\\\\t\"";
        if (cp == '\r') return "\"\\\\r\"";
        if (cp < 0x20) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "\"\\\\u%04X\"", cp);
            return buf;
        }
        return "\"" + gbnf_escape(cp) + "\"";
    }

    using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

    // The code points a shorthand stands for (\d \w \s; upper case: their complement).
    static bool shorthand(char c, Ranges& out) {
        switch (c) {
            case 'd': case 'D': out.push_back({'0', '9'}); return true;
            case 'w': case 'W': out.insert(out.end(), {{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'_', '_'}}); return true;
            case 's': case 'S': out.insert(out.end(), {{' ', ' '}, {'\t', '\r'}}); return true;
            default: return false;
        }
    }

    // A set of code points as a GBNF class, less what a JSON string must escape (a quote, a
    // backslash, control characters): the grammar never writes those raw, so every match stays
    // valid JSON (a pattern that asks only for them matches nothing the grammar can write).
    Result<std::string> emit_class(Ranges r, bool negated) const {
        if (negated) {
            std::sort(r.begin(), r.end());
            Ranges inverse;
            uint32_t next = 0;
            for (auto [lo, hi] : r) {
                if (lo > next) inverse.emplace_back(next, lo - 1);
                next = std::max(next, hi + 1);
            }
            if (next <= 0x10FFFF) inverse.emplace_back(next, 0x10FFFF);
            r = std::move(inverse);
        }
        Ranges kept;
        for (auto [lo, hi] : r)
            for (auto [a, b] : Ranges{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}})
                if (std::max(lo, a) <= std::min(hi, b)) kept.emplace_back(std::max(lo, a), std::min(hi, b));
        if (kept.empty()) return fail("a class with no character a JSON string holds unescaped");
        std::string out = "[";
        for (auto [lo, hi] : kept) out += lo == hi ? gbnf_escape(lo) : gbnf_escape(lo) + "-" + gbnf_escape(hi);
        return out + "]";
    }

    Result<std::string> alternation() {
        std::vector<std::string> alts;
        while (true) {
            WB_ASSIGN_OR_RETURN(std::string seq, sequence());
            alts.push_back(seq.empty() ? "\"\"" : seq);
            if (pos_ < p_.size() && p_[pos_] == '|') {
                ++pos_;
                continue;
            }
            break;
        }
        std::string out;
        for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
        return out;
    }

    Result<std::string> sequence() {
        std::string out;
        while (pos_ < p_.size() && p_[pos_] != '|' && p_[pos_] != ')') {
            WB_ASSIGN_OR_RETURN(std::string a, atom());
            WB_ASSIGN_OR_RETURN(const std::string q, quantifier());
            out += (out.empty() ? "" : " ") + a + q;
        }
        return out;
    }

    Result<std::string> quantifier() {
        if (pos_ >= p_.size()) return std::string();
        const char c = p_[pos_];
        std::string q;
        if (c == '*' || c == '+' || c == '?') {
            q = std::string(1, c);
            ++pos_;
        } else if (c == '{') {
            const size_t close = p_.find('}', pos_);
            if (close == std::string_view::npos) return fail("a '{' without its '}'");
            const std::string_view inner = p_.substr(pos_ + 1, close - pos_ - 1);
            for (char d : inner)
                if (!std::isdigit(static_cast<unsigned char>(d)) && d != ',') return fail("a '{' that is not a repetition {m,n}");
            q = "{" + std::string(inner) + "}";
            pos_ = close + 1;
        } else {
            return std::string();
        }
        if (pos_ < p_.size() && (p_[pos_] == '?' || p_[pos_] == '+')) ++pos_;   // lazy or possessive: the same set of strings
        return q;
    }

    Result<std::string> atom() {
        const char c = p_[pos_];
        if (c == '(') {
            if (++nesting_ > 256) return fail("groups nested deeper than 256");
            ++pos_;
            if (p_.substr(pos_, 2) == "?:") pos_ += 2;
            else if (pos_ < p_.size() && p_[pos_] == '?') return fail("lookaround and named groups are not supported");
            WB_ASSIGN_OR_RETURN(std::string inner, alternation());
            if (pos_ >= p_.size() || p_[pos_] != ')') return fail("a '(' without its ')'");
            ++pos_;
            --nesting_;
            return "(" + inner + ")";
        }
        if (c == '[') return char_class();
        if (c == '.') {
            ++pos_;
            return plain_;
        }
        if (c == '^' || c == '$') return fail("an anchor inside the pattern (only at its ends)");
        if (c == '*' || c == '+' || c == '?' || c == '{') return fail(std::string("'") + c + "' with nothing to repeat");
        if (c == '\\') {
            if (++pos_ >= p_.size()) return fail("a '\\' at the end");
            const char e = p_[pos_++];
            if (Ranges r; shorthand(e, r)) return emit_class(std::move(r), std::isupper(static_cast<unsigned char>(e)));
            return escaped_literal(e);
        }
        WB_ASSIGN_OR_RETURN(const uint32_t cp, code_point());
        return literal(cp);
    }

    // The code point an escape (after its backslash, `e` already read) stands for: \n \t \r \f \v,
    // \xHH, \uHHHH, or a punctuation character itself.
    Result<uint32_t> escape_code(char e) {
        auto hex = [&](size_t digits) -> Result<uint32_t> {
            uint32_t v = 0;
            for (size_t i = 0; i < digits; ++i, ++pos_) {
                const char c = pos_ < p_.size() ? p_[pos_] : '\0';
                const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (d < 0) return fail(std::string("\\") + e + " needs " + std::to_string(digits) + " hex digits");
                v = v * 16 + static_cast<uint32_t>(d);
            }
            return v;
        };
        switch (e) {
            case 'n': return uint32_t{'\n'};
            case 't': return uint32_t{'\t'};
            case 'r': return uint32_t{'\r'};
            case 'f': return uint32_t{'\f'};
            case 'v': return uint32_t{'\v'};
            case 'x': return hex(2);
            case 'u': return hex(4);
            case 'b': case 'B': return fail("word boundaries (\\b) are not supported");
            default:
                if (std::isdigit(static_cast<unsigned char>(e))) return fail("back-references are not supported");
                if (std::isalpha(static_cast<unsigned char>(e))) return fail(std::string("the escape \\") + e + " is not supported");
                return static_cast<uint32_t>(static_cast<unsigned char>(e));
        }
    }

    Result<std::string> escaped_literal(char e) {
        WB_ASSIGN_OR_RETURN(const uint32_t cp, escape_code(e));
        return literal(cp);
    }

    Result<std::string> char_class() {
        ++pos_;
        const bool negated = pos_ < p_.size() && p_[pos_] == '^';
        if (negated) ++pos_;
        Ranges r;
        bool first = true;
        while (pos_ < p_.size() && (p_[pos_] != ']' || first)) {
            first = false;
            uint32_t cp = 0;
            if (p_[pos_] == '\\') {
                if (++pos_ >= p_.size()) break;
                const char e = p_[pos_++];
                if (Ranges sh; shorthand(e, sh)) {
                    if (std::isupper(static_cast<unsigned char>(e))) return fail("a negated shorthand inside a class");
                    r.insert(r.end(), sh.begin(), sh.end());
                    continue;
                }
                WB_ASSIGN_OR_RETURN(cp, escape_code(e));
            } else {
                WB_ASSIGN_OR_RETURN(cp, code_point());
            }
            if (pos_ + 1 < p_.size() && p_[pos_] == '-' && p_[pos_ + 1] != ']') {   // a range lo-hi
                ++pos_;
                uint32_t hi = 0;
                if (p_[pos_] == '\\') {
                    if (++pos_ >= p_.size()) break;
                    WB_ASSIGN_OR_RETURN(hi, escape_code(p_[pos_++]));
                } else {
                    WB_ASSIGN_OR_RETURN(hi, code_point());
                }
                if (hi < cp) return fail("a class range that runs backwards");
                r.emplace_back(cp, hi);
            } else {
                r.emplace_back(cp, cp);
            }
        }
        if (pos_ >= p_.size()) return fail("a '[' without its ']'");
        ++pos_;
        return emit_class(std::move(r), negated);
    }
};

}  // namespace

Result<std::string> regex_grammar(std::string_view pattern, const std::string& plain_char) {
    return RegexReader(pattern, plain_char).run();
}

}  // namespace workbench
