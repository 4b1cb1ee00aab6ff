// The first pass of a chat template: its source cut into text and tags as jinja2 cuts it with
// Hugging Face's settings (trim_blocks, lstrip_blocks, no trailing newline kept), each tag's
// inside cut into tokens. Whitespace control (`{%-`, `-%}`, `{%+`) is applied here, so the parser
// sees text exactly as it will be printed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"

namespace workbench::jinja {

enum class TokenKind : uint8_t {
    text,          // template data, printed as is
    expr_open,     // {{
    expr_close,    // }}
    stmt_open,     // {%
    stmt_close,    // %}
    name,          // identifiers and keywords (if, for, in, is, not, and, or, true, none, ...)
    string,        // a string literal, unescaped
    integer,
    number,        // a float literal
    op,            // punctuation and operators: + - * / // % ** ~ | . , : ( ) [ ] { } = == != < > <= >=
    end,
};

struct Token {
    TokenKind kind = TokenKind::end;
    std::string text;   // text, name, string (unescaped), op; a number's source spelling
    int32_t line = 1;   // 1-based line of the source where it starts
};

// Errors name the line: an unclosed tag, comment or string, a character no token starts with.
Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace workbench::jinja
