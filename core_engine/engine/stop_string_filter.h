// Streams generated text while holding back any tail that could still grow into a stop
// string, so a stop string is never shown and then taken back. One per generated sequence.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "workbench/engine.h"

namespace workbench {

class StopStringFilter {
public:
    StopStringFilter(const std::vector<std::string>& stops, const TextCallback& out) : stops_(stops), out_(out) {}

    // Adds text; returns true when a stop string has completed (text up to it was emitted).
    bool push(std::string_view piece) {
        pending_ += piece;
        for (const auto& s : stops_) {
            if (s.empty()) continue;
            if (auto at = pending_.find(s); at != std::string::npos) {
                emit(pending_.substr(0, at));
                pending_.clear();
                return true;
            }
        }
        size_t keep = 0;  // longest suffix of pending_ that is a prefix of a stop string
        for (const auto& s : stops_)
            for (size_t len = std::min(s.size() - (s.empty() ? 0 : 1), pending_.size()); len > keep; --len)
                if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
                    keep = len;
                    break;
                }
        emit(pending_.substr(0, pending_.size() - keep));
        pending_.erase(0, pending_.size() - keep);
        return false;
    }
    void finish() {
        emit(pending_);
        pending_.clear();
    }
    const std::string& text() const { return text_; }

private:
    void emit(const std::string& s) {
        if (s.empty()) return;
        text_ += s;
        if (out_) out_(s);
    }
    const std::vector<std::string>& stops_;
    const TextCallback& out_;
    std::string pending_, text_;
};

}  // namespace workbench
