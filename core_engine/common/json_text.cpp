// parse_json and dump_json: nlohmann-json's parser and serializer, its exceptions turned into a
// Status at this boundary; and the number policy every writer shares.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "workbench/json.h"

namespace workbench {

Result<Json> parse_json(std::string_view text) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // what(): "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error
        // while parsing value - ..."; the byte offset says the same as line and column.
        std::string what = e.what();
        if (const auto column = what.find("column "); column != std::string::npos)
            if (const auto colon = what.find(": ", column); colon != std::string::npos) what = what.substr(colon + 2);
        return error(StatusCode::invalid_argument, "at byte " + std::to_string(e.byte) + ": " + what);
    } catch (const Json::exception& e) {
        // out_of_range 406: a number past double's range ("1e999"), found by fuzz_json.
        std::string what = e.what();
        if (const auto bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
        return error(StatusCode::invalid_argument, what);
    }
}

std::string dump_json(const Json& value) {
    // error_handler_t::replace: a model's output or a file name may hold invalid UTF-8; the
    // default (strict) would throw from here.
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json json_number(double value) {
    if (!std::isfinite(value)) return nullptr;
    // Whole values up to 2^53 print as integers ("3", where a double would print "3.0"); -0 stays a double.
    if (value == std::floor(value) && std::fabs(value) <= 9007199254740992.0 && !(value == 0 && std::signbit(value)))
        return static_cast<int64_t>(value);
    return value;
}

Json json_number(const std::optional<double>& value) { return value ? json_number(*value) : Json(nullptr); }

Json json_rounded(double value, int digits) {
    if (!std::isfinite(value)) return nullptr;
    char text[40];
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    return json_number(std::strtod(text, nullptr));
}

Json json_rounded(const std::optional<double>& value, int digits) { return value ? json_rounded(*value, digits) : Json(nullptr); }

}  // namespace workbench
