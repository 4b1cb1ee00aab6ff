// The SSE line grammar (WHATWG "event stream interpretation"), for the one field OpenAI servers
// use: lines end in LF, CRLF or CR; a blank line dispatches; "data:" with one optional space.
#include "sse_reader.h"

namespace wbremote {

std::vector<std::string> SseReader::feed(std::string_view bytes) {
    std::vector<std::string> events;
    auto end_line = [&] {
        if (line_.empty()) {   // dispatch
            if (has_data_) events.push_back(std::move(data_));
            data_.clear();
            has_data_ = false;
            return;
        }
        if (line_[0] == ':') {   // comment
        } else {
            const size_t colon = line_.find(':');
            const std::string_view field = std::string_view(line_).substr(0, colon);
            std::string_view value = colon == std::string::npos ? std::string_view() : std::string_view(line_).substr(colon + 1);
            if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
            if (field == "data") {
                if (has_data_) data_ += '\n';
                data_ += value;
                has_data_ = true;
            } else if (field != "event" && field != "id" && field != "retry") {
                ++n_malformed_;
            }
        }
        line_.clear();
    };
    for (size_t i = 0; i < bytes.size(); ++i) {
        const char c = bytes[i];
        if (c == '\n') {
            if (!pending_cr_) end_line();
            pending_cr_ = false;
        } else if (c == '\r') {
            end_line();
            pending_cr_ = true;
        } else {
            pending_cr_ = false;
            line_ += c;
        }
    }
    return events;
}

}  // namespace wbremote
