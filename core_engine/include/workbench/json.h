// A minimal JSON reader for the engine's and the CLI's inputs (configuration files, batch prompt
// files): parses one document into a tree and reports the first error with its byte offset.
// Strict RFC 8259, no extensions; nesting is limited so a hostile file cannot exhaust the stack.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace workbench {

struct JsonValue {
    using Array = std::vector<JsonValue>;
    using Object = std::map<std::string, JsonValue, std::less<>>;
    std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>> v = nullptr;

    bool is_string() const { return std::holds_alternative<std::string>(v); }
    bool is_number() const { return std::holds_alternative<double>(v); }
    bool is_object() const { return std::holds_alternative<std::shared_ptr<Object>>(v); }
    bool is_array() const { return std::holds_alternative<std::shared_ptr<Array>>(v); }
    const std::string& str() const { return std::get<std::string>(v); }
    double num() const { return std::get<double>(v); }
    const Array& arr() const { return *std::get<std::shared_ptr<Array>>(v); }
    const Object& obj() const { return *std::get<std::shared_ptr<Object>>(v); }
    // A member of an object, or nullptr when absent (or this is not an object).
    const JsonValue* find(std::string_view key) const;
};

// Parses `text` (the whole of it, surrounding whitespace allowed). On failure returns false and
// sets `error` to "at byte N: what was expected".
bool parse_json(std::string_view text, JsonValue& out, std::string& error);

// Appends `text` as a quoted JSON string; invalid UTF-8 becomes U+FFFD, so the output always parses.
void append_json_string(std::string& out, std::string_view text);

}  // namespace workbench
