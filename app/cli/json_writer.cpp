// JSON emission with strict escaping.
#include "json_writer.h"

#include "workbench/json.h"

#include <cmath>
#include <cstdio>

namespace wbcli {
std::string json_escape(std::string_view s) {
    std::string out;
    workbench::append_json_string(out, s);
    return out;
}

void JsonWriter::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ",";
        first_.back() = false;
    }
}

JsonWriter& JsonWriter::begin_object() { separate(); out_ += "{"; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::end_object() { out_ += "}"; first_.pop_back(); return *this; }
JsonWriter& JsonWriter::begin_array() { separate(); out_ += "["; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::end_array() { out_ += "]"; first_.pop_back(); return *this; }

JsonWriter& JsonWriter::key(std::string_view k) {
    separate();
    out_ += json_escape(k) + ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) { separate(); out_ += json_escape(s); return *this; }
JsonWriter& JsonWriter::value(int64_t i) { separate(); out_ += std::to_string(i); return *this; }
JsonWriter& JsonWriter::value(uint64_t u) { separate(); out_ += std::to_string(u); return *this; }
JsonWriter& JsonWriter::value(bool b) { separate(); out_ += b ? "true" : "false"; return *this; }
JsonWriter& JsonWriter::null() { separate(); out_ += "null"; return *this; }

JsonWriter& JsonWriter::value(double d) {
    if (!std::isfinite(d)) return null();
    separate();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", d);
    out_ += buf;
    return *this;
}

JsonWriter& JsonWriter::value(const std::optional<double>& d) { return d ? value(*d) : null(); }

void print_json_array(const std::vector<std::string>& objects) {
    std::string out = "[";
    for (size_t i = 0; i < objects.size(); ++i) out += (i ? "," : "") + objects[i];
    std::fputs((out + "]\n").c_str(), stdout);
}

}  // namespace wbcli
