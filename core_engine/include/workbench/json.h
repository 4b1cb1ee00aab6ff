// JSON for the engine's and the CLI's inputs and outputs. Reading untrusted text (configuration
// files, batch prompt lines, stored rows) goes through nlohmann-json's parser (strict RFC 8259,
// iterative, so deep nesting cannot exhaust the stack); its error says where and what.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

// Parses `text` (the whole of it, surrounding whitespace allowed). Errors: invalid_argument,
// "at byte N: what was wrong".
Result<nlohmann::json> parse_json(std::string_view text);

// Appends `text` as a quoted JSON string; invalid UTF-8 becomes U+FFFD, so the output always parses.
void append_json_string(std::string& out, std::string_view text);

}  // namespace workbench
