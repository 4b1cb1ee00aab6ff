// Text encodings for exports: shortest round-trip numbers, JSON objects, CSV fields, UTC
// timestamps. Strings are escaped by workbench/json.h's append_json_string, which the CLI's
// --json writer uses too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "workbench/json.h"

namespace workbench::store {

void append_number(std::string& out, double value);   // shortest round-trip; non-finite: null in JSON
void append_number(std::string& out, int64_t value);

// Writes one JSON object's members: `{"a":1,"b":"x"}`. raw() takes text that is already JSON.
class JsonObject {
public:
    explicit JsonObject(std::string& out) : out_(out) { out_ += '{'; }
    void close() { out_ += '}'; }
    JsonObject& field(std::string_view key, std::string_view text);
    JsonObject& field(std::string_view key, int64_t value);
    JsonObject& field(std::string_view key, double value);
    JsonObject& field(std::string_view key, const std::optional<double>& value);
    JsonObject& raw(std::string_view key, std::string_view json);
    // Starts a member and leaves the value to the caller (an array, a nested object).
    std::string& key(std::string_view key);

private:
    std::string& out_;
    bool first_ = true;
};

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
void append_csv_field(std::string& out, std::string_view text);
void append_csv_number(std::string& out, const std::optional<double>& value);  // empty when absent

// "2025-03-04T05:06:07.089Z"; empty for 0.
std::string format_utc(int64_t unix_ms);
int64_t now_unix_ms();

}  // namespace workbench::store
