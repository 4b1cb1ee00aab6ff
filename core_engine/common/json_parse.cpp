// parse_json: nlohmann-json's parser, its exceptions turned into a Status at this boundary.
#include <string>

#include "workbench/json.h"

namespace workbench {

Result<nlohmann::json> parse_json(std::string_view text) {
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        // what(): "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error
        // while parsing value - ..."; the byte offset says the same as line and column.
        std::string what = e.what();
        if (const auto column = what.find("column "); column != std::string::npos)
            if (const auto colon = what.find(": ", column); colon != std::string::npos) what = what.substr(colon + 2);
        return error(StatusCode::invalid_argument, "at byte " + std::to_string(e.byte) + ": " + what);
    } catch (const nlohmann::json::exception& e) {
        // out_of_range 406: a number past double's range ("1e999"), found by fuzz_json.
        std::string what = e.what();
        if (const auto bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
        return error(StatusCode::invalid_argument, what);
    }
}

}  // namespace workbench
