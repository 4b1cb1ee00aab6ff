// Server-sent events read incrementally from whatever byte chunks a socket delivers: each event's
// `data:` payload (several data lines joined by newlines), comments and other fields skipped,
// lines that are not SSE counted rather than fatal. Pure; one reader per stream.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wbremote {

class SseReader {
public:
    // Feeds bytes; returns the data of each event completed by them, in order.
    std::vector<std::string> feed(std::string_view bytes);
    // Lines that were neither a field, a comment nor blank (a server writing something else).
    int n_malformed_lines() const { return n_malformed_; }
    // Whether bytes of an unfinished event are pending (a stream cut mid-event).
    bool mid_event() const { return !line_.empty() || has_data_; }

private:
    std::string line_;      // the line being read
    std::string data_;      // the event being assembled
    bool has_data_ = false;
    bool pending_cr_ = false;   // a CR ended the last line: a following LF belongs to it
    int n_malformed_ = 0;
};

}  // namespace wbremote
