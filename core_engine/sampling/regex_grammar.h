// A JSON Schema `pattern` (an ECMA-262 regular expression) as a GBNF expression over the raw
// characters of a JSON string: literals, classes ([a-z], [^…], \d \w \s and their negations, .),
// groups ((…), (?:…)), alternation and the quantifiers * + ? {m} {m,} {m,n}. A pattern matches
// anywhere in the string unless anchored with ^ or $, as JSON Schema says, so an unanchored end
// admits any characters there. The expression only spells characters a JSON string holds
// unescaped (no quote, backslash or control character), so every match is valid JSON.
#pragma once

#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

// `plain_char`: the grammar's rule for one unescaped JSON string character.
// invalid_argument naming what is not supported (back-references, lookaround, \b, …).
Result<std::string> regex_grammar(std::string_view pattern, const std::string& plain_char);

}  // namespace workbench
