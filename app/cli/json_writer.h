// A minimal JSON writer for the CLI's --json output: objects, arrays, escaped strings (invalid
// UTF-8 becomes U+FFFD so the output always parses), numbers, null for undefined metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wbcli {

class JsonWriter {
public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(double d);
    JsonWriter& value(int64_t i);
    JsonWriter& value(int i) { return value(static_cast<int64_t>(i)); }
    JsonWriter& value(uint64_t u);
    JsonWriter& value(bool b);
    JsonWriter& value(const std::optional<double>& d);
    JsonWriter& null();

    const std::string& str() const { return out_; }

private:
    void separate();
    std::string out_;
    std::vector<bool> first_;   // per open container: no element written yet
    bool after_key_ = false;
};

std::string json_escape(std::string_view s);
// Prints already-serialized objects as one JSON array line on stdout.
void print_json_array(const std::vector<std::string>& objects);

}  // namespace wbcli
