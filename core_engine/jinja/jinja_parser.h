// The second pass: tokens into a Template, by jinja2's grammar (operator precedence, filters and
// tests binding before binary operators, `for … in … if …` loop filters, macros, namespaces).
// Errors name the line and what was expected.
#pragma once

#include <string_view>

#include "jinja/jinja_ast.h"
#include "workbench/status.h"

namespace workbench::jinja {

Result<Template> parse_template(std::string_view source);

}  // namespace workbench::jinja
