// JSON for the engine's and the CLI's inputs and outputs, through nlohmann-json. `Json` keeps
// members in insertion order, so a text written twice from the same values is the same text (the
// session database keys configurations on it). Reading untrusted text (configuration files, batch
// prompt lines, stored rows, request bodies) goes through parse_json: strict RFC 8259, iterative,
// so deep nesting cannot exhaust the stack; its error says where and what.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

using Json = nlohmann::ordered_json;

// Parses `text` (the whole of it, surrounding whitespace allowed). Errors: invalid_argument,
// "at byte N: what was wrong".
Result<Json> parse_json(std::string_view text);

// Compact text (no spaces); invalid UTF-8 in a string becomes U+FFFD, so the output always parses.
std::string dump_json(const Json& value);

// A measured figure: null when absent or not finite (JSON has no NaN), a whole value as an
// integer ("3", not "3.0"), anything else as the shortest text that reads back the same double.
Json json_number(double value);
Json json_number(const std::optional<double>& value);
// The same, rounded first to `digits` significant digits (the CLI prints nine: timings and rates
// carry no more, and the rows stay readable).
Json json_rounded(double value, int digits = 9);
Json json_rounded(const std::optional<double>& value, int digits = 9);

}  // namespace workbench
