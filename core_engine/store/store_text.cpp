// CSV and time formatting for the store's exports, and the tool calls' column. Pure functions:
// no SQLite, no state.
#include "store/store_text.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "workbench/json.h"

namespace workbench::store {

void append_number(std::string& out, double value) {
    char buf[32];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

void append_number(std::string& out, int64_t value) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

void append_csv_field(std::string& out, std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(text);
        return;
    }
    out += '"';
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

void append_csv_number(std::string& out, const std::optional<double>& value) {
    if (value && std::isfinite(*value)) append_number(out, *value);
}

std::string format_utc(int64_t unix_ms) {
    if (unix_ms == 0) return {};
    const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[80];  // room for any int the compiler cannot rule out
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
    return buf;
}

int64_t now_unix_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string tool_calls_text(const std::vector<ToolCall>& calls) {
    Json out = Json::array();
    for (const ToolCall& c : calls) out.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    return dump_json(out);
}

std::vector<ToolCall> tool_calls_from_text(std::string_view text) {
    std::vector<ToolCall> calls;
    if (text.empty()) return calls;
    auto j = parse_json(text);
    if (!j.ok() || !j->is_array()) return calls;
    for (const Json& c : *j) {
        if (!c.is_object()) continue;
        ToolCall call;
        const auto text_of = [&](const char* key) {
            const auto it = c.find(key);
            return it != c.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        call.id = text_of("id");
        call.name = text_of("name");
        call.arguments = text_of("arguments");
        calls.push_back(std::move(call));
    }
    return calls;
}

}  // namespace workbench::store
