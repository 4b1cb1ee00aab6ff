// One HTTP request's events, handed from the engine's thread (the step loop's callback) to the
// HTTP thread that answers it. The callback only copies and notifies: it never waits on a client.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workbench/request.h"

namespace wbserver {

struct TokenLogprobText {
    std::string token;      // the token's text as the tokenizer spells it
    float logprob = 0;
};

struct ChannelEvent {
    // prompt_token: one of the prompt's tokens with its logprob (echo with logprobs).
    enum class Kind { token, prompt_token, finished, failed } kind = Kind::token;
    int32_t sample = 0;
    std::string text;                          // token: newly released text; finished: all of it
    std::optional<TokenLogprobText> logprob;   // token, when asked
    std::vector<TokenLogprobText> top_logprobs;
    bool no_logprob = false;                   // prompt_token: the first, which nothing predicts
    workbench::StopReason stop_reason = workbench::StopReason::max_tokens;
    int32_t n_output_tokens = 0;               // finished
    workbench::Status status;                  // failed
};

class RequestChannel {
public:
    explicit RequestChannel(int32_t n_completions) : n_open_(n_completions) {}

    void push(ChannelEvent event) {
        {
            std::lock_guard lock(mutex_);
            if (event.kind == ChannelEvent::Kind::finished || event.kind == ChannelEvent::Kind::failed) --n_open_;
            events_.push_back(std::move(event));
        }
        ready_.notify_all();
    }
    // Takes every event that arrived, waiting up to `timeout` for the first.
    std::vector<ChannelEvent> take(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        ready_.wait_for(lock, timeout, [&] { return !events_.empty(); });
        std::vector<ChannelEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
        events_.clear();
        return out;
    }
    // Whether every completion has finished or failed (its last event may still be queued).
    bool all_ended() const {
        std::lock_guard lock(mutex_);
        return n_open_ == 0;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<ChannelEvent> events_;
    int32_t n_open_;
};

}  // namespace wbserver
