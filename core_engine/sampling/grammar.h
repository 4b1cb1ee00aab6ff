// Grammars for constrained sampling, written in llama.cpp's GBNF (rules `name ::= …` with
// "literals", [classes], [^negated], groups, | and the postfix * + ? {m} {m,} {m,n}; `root` is
// where a match starts) and compiled to bytes: a class over code points becomes the UTF-8 byte
// sequences that spell exactly those code points, so whatever the grammar admits is valid UTF-8
// and a token that ends partway through a character is judged byte by byte.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"

namespace workbench {

struct Grammar {
    struct Element {
        enum class Kind : uint8_t { end, bytes, rule };
        Kind kind = Kind::end;
        uint32_t value = 0;   // bytes: index into byte_sets; rule: the rule's id
    };
    // Every alternative of every rule laid out in one array, each ending in an `end` element.
    std::vector<Element> elements;
    std::vector<std::vector<uint32_t>> alternatives;   // per rule: where each alternative starts
    std::vector<std::bitset<256>> byte_sets;
    std::vector<std::string> rule_names;               // for errors; synthetic rules named after their parent
    uint32_t root = 0;
};

// Errors: invalid_argument naming the line and what is wrong (a syntax error, an undefined rule,
// no root rule, left recursion, a grammar past its size limit).
Result<Grammar> parse_grammar(std::string_view gbnf);

}  // namespace workbench
