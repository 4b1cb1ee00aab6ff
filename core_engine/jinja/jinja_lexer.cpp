// jinja2's lexer rules as Hugging Face configures it: a trailing newline of the source dropped,
// CRLF read as LF; `{%-`/`{{-`/`{#-` strip the whitespace before a tag, `-%}`/`-}}`/`-#}` the
// whitespace after; lstrip_blocks removes the spaces and tabs between a line's start and a `{%` or
// `{#` (not `{{`; `{%+` keeps them); trim_blocks removes the one newline after `%}` or `#}` (not
// `}}`; `+%}` keeps it).
#include "jinja/jinja_lexer.h"

#include <algorithm>
#include <cctype>

#include "jinja/jinja_value.h"

namespace workbench::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// LF line ends; one trailing newline dropped (keep_trailing_newline=False).
std::string normalized(std::string_view source) {
    std::string s;
    s.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            s += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            s += source[i];
        }
    }
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

Status error_at(int32_t line, const std::string& what) {
    return error(StatusCode::invalid_argument, "template line " + std::to_string(line) + ": " + what);
}

class Lexer {
public:
    explicit Lexer(std::string src) : s_(std::move(src)) {}

    Result<std::vector<Token>> run() {
        size_t text_start = 0;
        bool strip_next = false, trim_next = false;
        while (true) {
            const size_t open = find_open(text_start);
            std::string text = s_.substr(text_start, (open == std::string::npos ? s_.size() : open) - text_start);
            if (strip_next) text.erase(0, std::find_if_not(text.begin(), text.end(), is_space) - text.begin());
            else if (trim_next && !text.empty() && text.front() == '\n') text.erase(0, 1);
            if (open == std::string::npos) {
                push_text(std::move(text), text_start);
                break;
            }
            const char kind = s_[open + 1];   // '{', '%' or '#'
            size_t at = open + 2;
            const char modifier = at < s_.size() && (s_[at] == '-' || s_[at] == '+') ? s_[at] : 0;
            if (modifier) ++at;
            if (modifier == '-') {
                text.erase(std::find_if_not(text.rbegin(), text.rend(), is_space).base(), text.end());
            } else if (kind != '{' && modifier != '+') {
                // lstrip_blocks: only spaces and tabs between the line's start and the tag.
                size_t k = open;
                while (k > text_start && (s_[k - 1] == ' ' || s_[k - 1] == '\t')) --k;
                if (k == 0 || s_[k - 1] == '\n') text.erase(text.size() - std::min(text.size(), open - k));
            }
            push_text(std::move(text), text_start);
            const int32_t line = line_of(open);
            size_t close = 0;
            char close_modifier = 0;
            if (kind == '#') {
                const size_t end = s_.find("#}", at);
                if (end == std::string::npos) return error_at(line, "a comment '{#' is never closed with '#}'");
                close_modifier = end > at && (s_[end - 1] == '-' || s_[end - 1] == '+') ? s_[end - 1] : 0;
                close = end + 2;
            } else {
                tokens_.push_back({kind == '{' ? TokenKind::expr_open : TokenKind::stmt_open, kind == '{' ? "{{" : "{%", line});
                WB_ASSIGN_OR_RETURN(const auto end, lex_tag(at, kind == '{' ? '}' : '%', line));
                close = end.first;
                close_modifier = end.second;
                tokens_.push_back({kind == '{' ? TokenKind::expr_close : TokenKind::stmt_close, kind == '{' ? "}}" : "%}", line_of(close - 2)});
                if (kind == '%' && is_raw_open()) {
                    WB_RETURN_IF_ERROR(lex_raw(close, close_modifier, line, close));
                    close_modifier = raw_close_modifier_;
                }
            }
            strip_next = close_modifier == '-';
            trim_next = kind != '{' && close_modifier != '+';
            text_start = close;
        }
        tokens_.push_back({TokenKind::end, "", line_of(s_.size())});
        return std::move(tokens_);
    }

private:
    std::string s_;
    std::vector<Token> tokens_;
    char raw_close_modifier_ = 0;

    size_t find_open(size_t from) const {
        for (size_t i = s_.find('{', from); i != std::string::npos && i + 1 < s_.size(); i = s_.find('{', i + 1))
            if (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#') return i;
        return std::string::npos;
    }
    // Lines counted as the lexer moves forward (positions asked for only grow, but for a few
    // steps back within a tag), so a long template lexes in linear time.
    mutable size_t line_pos_ = 0;
    mutable int32_t line_ = 1;
    int32_t line_of(size_t pos) const {
        pos = std::min(pos, s_.size());
        if (pos < line_pos_) {
            line_pos_ = 0;
            line_ = 1;
        }
        line_ += static_cast<int32_t>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(line_pos_), s_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
        line_pos_ = pos;
        return line_;
    }
    void push_text(std::string text, size_t raw_pos) {
        if (!text.empty()) tokens_.push_back({TokenKind::text, std::move(text), line_of(raw_pos)});
    }

    // Tokens up to the tag's close ("}}" or "%}", a '-' or '+' just before it its modifier);
    // returns the position after the close and the modifier.
    Result<std::pair<size_t, char>> lex_tag(size_t i, char closer, int32_t open_line) {
        int braces = 0;   // a dict literal's '}' inside {{ … }} does not close the tag
        while (true) {
            while (i < s_.size() && is_space(s_[i])) ++i;
            if (i >= s_.size()) return error_at(open_line, std::string("a tag opened here is never closed with '") + closer + "}'");
            const int32_t line = line_of(i);
            const char c = s_[i];
            if ((c == '-' || c == '+') && i + 2 < s_.size() && s_[i + 1] == closer && s_[i + 2] == '}' && (closer != '}' || braces == 0))
                return std::pair{i + 3, c};
            if (c == closer && i + 1 < s_.size() && s_[i + 1] == '}' && (closer != '}' || braces == 0)) return std::pair{i + 2, char{0}};
            if (name_start(c)) {
                size_t j = i;
                while (j < s_.size() && name_char(s_[j])) ++j;
                tokens_.push_back({TokenKind::name, s_.substr(i, j - i), line});
                i = j;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                size_t j = i;
                while (j < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) ++j;
                bool is_float = false;
                if (j + 1 < s_.size() && s_[j] == '.' && std::isdigit(static_cast<unsigned char>(s_[j + 1]))) {
                    is_float = true;
                    for (++j; j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j])); ++j) {}
                }
                if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
                    size_t k = j + 1;
                    if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
                    if (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) {
                        is_float = true;
                        for (j = k; j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j])); ++j) {}
                    }
                }
                std::string digits = s_.substr(i, j - i);
                digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
                tokens_.push_back({is_float ? TokenKind::number : TokenKind::integer, std::move(digits), line});
                i = j;
            } else if (c == '\'' || c == '"') {
                WB_ASSIGN_OR_RETURN(i, lex_string(i, line));
            } else {
                static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
                const std::string_view rest(s_.data() + i, std::min<size_t>(2, s_.size() - i));
                const auto two = std::find(std::begin(kTwo), std::end(kTwo), rest);
                if (two != std::end(kTwo)) {
                    tokens_.push_back({TokenKind::op, std::string(*two), line});
                    i += 2;
                } else if (std::string_view("+-*/%~|.,:()[]{}=<>").find(c) != std::string_view::npos) {
                    if (c == '{') ++braces;
                    if (c == '}') --braces;
                    tokens_.push_back({TokenKind::op, std::string(1, c), line});
                    ++i;
                } else {
                    return error_at(line, std::string("unexpected character '") + c + "' in a tag");
                }
            }
        }
    }

    // A string literal as Python unescapes it: \n \t \r \\ \' \" \0 \xNN \uNNNN \UNNNNNNNN; any
    // other escape kept as written.
    Result<size_t> lex_string(size_t i, int32_t line) {
        const char quote = s_[i];
        std::string out;
        for (size_t j = i + 1; j < s_.size(); ++j) {
            const char c = s_[j];
            if (c == quote) {
                tokens_.push_back({TokenKind::string, std::move(out), line});
                return j + 1;
            }
            if (c != '\\' || j + 1 >= s_.size()) {
                out += c;
                continue;
            }
            const char e = s_[++j];
            auto hex = [&](int n) -> int64_t {
                if (j + static_cast<size_t>(n) >= s_.size()) return -1;
                uint32_t v = 0;
                for (int k = 1; k <= n; ++k) {
                    const char h = s_[j + static_cast<size_t>(k)];
                    if (!std::isxdigit(static_cast<unsigned char>(h))) return -1;
                    v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
                }
                return v;
            };
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case '0': out += '\0'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'v': out += '\v'; break;
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case '\n': break;   // a line continuation
                case 'x': case 'u': case 'U': {
                    const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    const int64_t v = hex(n);
                    if (v < 0) return error_at(line, std::string("a string's \\") + e + " escape needs " + std::to_string(n) + " hex digits");
                    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return error_at(line, "a string's escape names no Unicode character");
                    out += from_code_points(std::u32string(1, static_cast<char32_t>(v)));
                    j += static_cast<size_t>(n);
                    break;
                }
                default: out += '\\'; out += e; break;
            }
        }
        return error_at(line, std::string("a string opened with ") + quote + " is never closed");
    }

    bool is_raw_open() const {
        const size_t n = tokens_.size();
        return n >= 3 && tokens_[n - 3].kind == TokenKind::stmt_open && tokens_[n - 2].kind == TokenKind::name && tokens_[n - 2].text == "raw";
    }

    // {% raw %}…{% endraw %}: the text between, as written (whitespace control on the tags applies).
    Status lex_raw(size_t from, char open_close_modifier, int32_t line, size_t& after) {
        tokens_.resize(tokens_.size() - 3);
        for (size_t i = s_.find("{%", from); i != std::string::npos; i = s_.find("{%", i + 2)) {
            size_t j = i + 2;
            const char modifier = j < s_.size() && (s_[j] == '-' || s_[j] == '+') ? s_[j] : 0;
            if (modifier) ++j;
            while (j < s_.size() && is_space(s_[j])) ++j;
            if (s_.compare(j, 6, "endraw") != 0) continue;
            j += 6;
            while (j < s_.size() && is_space(s_[j])) ++j;
            char close_modifier = 0;
            if (j < s_.size() && (s_[j] == '-' || s_[j] == '+')) close_modifier = s_[j++];
            if (s_.compare(j, 2, "%}") != 0) continue;
            std::string text = s_.substr(from, i - from);
            if (open_close_modifier == '-') text.erase(0, std::find_if_not(text.begin(), text.end(), is_space) - text.begin());
            else if (open_close_modifier != '+' && !text.empty() && text.front() == '\n') text.erase(0, 1);
            if (modifier == '-') text.erase(std::find_if_not(text.rbegin(), text.rend(), is_space).base(), text.end());
            push_text(std::move(text), from);
            raw_close_modifier_ = close_modifier;
            after = j + 2;
            return Status::ok_status();
        }
        return error_at(line, "a '{% raw %}' block is never closed with '{% endraw %}'");
    }
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) { return Lexer(normalized(source)).run(); }

}  // namespace workbench::jinja
