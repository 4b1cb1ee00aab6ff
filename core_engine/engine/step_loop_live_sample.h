// A live sample of the step loop: one sample of a request while it runs, with its own sequence in
// the cache, its sampler, stream filters, timings and speculation state (what it becomes when it
// ends is the public BatchResult::Completion or a finished RequestEvent). Internal to the loop.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/step_loop.h"
#include "engine/stop_string_filter.h"
#include "sampling/grammar_matcher.h"
#include "sampling/sampler.h"
#include "workbench/chat_reply.h"

namespace workbench {

// Samples of one prompt draw differently, reproducibly: sample s uses seed + s.
inline SamplingParams sample_params(SamplingParams p, int32_t sample) {
    p.seed += static_cast<uint64_t>(sample);
    return p;
}

struct StepLoop::LiveSample {
    LiveSample(std::shared_ptr<const EngineRequest> r, RequestEventCallback cb, RequestHandle h, int32_t s)
        : req(std::move(r)), on_event(std::move(cb)), handle(h), sample(s),
          filter(req->generation.stop_strings, emit_text), sampler(sample_params(req->generation.sampling, s)) {}
    std::shared_ptr<const EngineRequest> req;
    RequestEventCallback on_event;
    RequestHandle handle;
    int32_t sample;
    std::string shown;                 // text released by the filter since the last event
    TextCallback emit_text = [this](std::string_view t) { shown += t; };
    StopStringFilter filter;
    Utf8StreamDecoder utf8;
    Sampler sampler;
    SeqId seq = 0;
    int32_t sched = -1;                // scheduler id; -1 until it is queued
    std::vector<TokenId> tokens;       // prompt + sampled: what the sequence holds once all has run
    int32_t n_prompt = 0;
    Clock::time_point arrival;
    double scheduled_ms = -1, prefill_start_ms = -1, prefill_ms = 0;   // since arrival
    std::vector<double> token_ms;      // since arrival
    std::vector<LiveSample*> forks;    // samples that start from this one's prompt (fork)
    bool done = false;
    bool owns_conversation = false;   // it holds the chat's sequence
    RequestMetrics metrics;
    // Speculative decoding: drafts waiting to be verified (the last n_drafts of tokens), the
    // draft model's distribution for each, and the adaptive draft length.
    int32_t n_drafts = 0;
    std::vector<std::vector<TokenProbability>> draft_q;
    int32_t draft_length = 0;
    std::unique_ptr<Sampler> draft_sampler;   // the draft model's draws (temperature > 0)
    std::unique_ptr<GrammarMatcher> grammar;  // GenerationRequest::grammar's state
    // The reply read for where its answer starts (after any <think>…</think>): first_answer_ms.
    std::unique_ptr<ChatReplyStream> answer_reader;
    std::optional<double> first_answer_ms;
};

}  // namespace workbench
