// Text encodings for the CSV and Markdown exports: shortest round-trip numbers, CSV fields, UTC
// timestamps; and a message's tool calls as the messages table keeps them. JSON is written
// through workbench/json.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/types.h"

namespace workbench::store {

void append_number(std::string& out, double value);   // shortest round-trip, for CSV
void append_number(std::string& out, int64_t value);

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
void append_csv_field(std::string& out, std::string_view text);
void append_csv_number(std::string& out, const std::optional<double>& value);  // empty when absent

// "2025-03-04T05:06:07.089Z"; empty for 0.
std::string format_utc(int64_t unix_ms);
int64_t now_unix_ms();

// Tool calls as JSON [{"id", "name", "arguments"}], and back (text that does not parse: none).
std::string tool_calls_text(const std::vector<ToolCall>& calls);
std::vector<ToolCall> tool_calls_from_text(std::string_view text);

}  // namespace workbench::store
