// Structured output: a JSON Schema (or any JSON object) turned into a GBNF grammar that the
// sampler enforces token by token (GenerationRequest::grammar), so the reply always parses and
// validates. The supported subset (docs/STRUCTURED_OUTPUT.md): type (and lists of types),
// properties, required, additionalProperties, enum, const, items, minItems/maxItems,
// minLength/maxLength, pattern (a regular-expression subset), minimum/maximum and their
// exclusive forms on integers, anyOf/oneOf, allOf of one schema, $ref within the schema
// ($defs, definitions); annotations (title, description, default, examples, …) are ignored.
#pragma once

#include <string>
#include <string_view>

#include "workbench/json.h"
#include "workbench/status.h"

namespace workbench {

// invalid_argument naming the keyword (and where in the schema) for anything outside the subset.
Result<std::string> json_schema_grammar(const Json& schema);
// Any JSON object (response_format json_object).
std::string json_object_grammar();
// invalid_argument naming the line for a grammar that does not parse.
Status check_grammar(std::string_view gbnf);

}  // namespace workbench
