// The engine's one step loop, as its clients see it: a request is submitted and gets a handle;
// the loop reports each request's events (its tokens, then finished or failed) on the engine's
// thread as it steps; a handle can be cancelled. Chat, generate, run_batch, eval, the GUI and the
// server all run through it (Engine::submit / cancel / step in workbench/engine.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workbench/config.h"
#include "workbench/metrics.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

enum class StopReason { end_of_generation, max_tokens, stop_string, context_full, cancelled };
const char* stop_reason_name(StopReason reason);

using RequestHandle = int64_t;

struct EngineRequest {
    std::vector<TokenId> prompt;     // token ids (render and tokenize first)
    GenerationRequest generation;
    int32_t n_samples = 1;           // completions of this prompt; they share its KV blocks where the variant allows
    // The conversation's request: it runs on the chat's sequence, reuses the tokens cached there
    // up to the first difference and keeps its own afterwards, so the next turn only prefills
    // what is new. One at a time (a second one fails while the first runs).
    bool conversation = false;
    // Also report the logits of every prompt position that runs (prompt_logits events), for
    // scoring text. With max_tokens 0 such a request (or a conversation's) runs its prompt and
    // finishes; any other request with max_tokens 0 finishes at once.
    bool prompt_logits = false;
    int32_t top_logprobs = -1;       // ≥ 0: each token event carries its logprob and this many alternatives
    // When the request arrived (queue time and TTFT count from it); unset: when submitted.
    std::optional<std::chrono::steady_clock::time_point> arrival;
};

struct TokenLogprob {
    TokenId token = -1;
    float logprob = 0;
};

struct RequestEvent {
    enum class Kind {
        token,          // a completion's new token (text: whole UTF-8 characters now safe to show, maybe empty)
        prompt_logits,  // logits rows of prompt positions that ran this step (prompt_logits requests; a
                        // preempted prompt runs, and reports, its rows again)
        finished,       // a completion ended: text is all of it; stop_reason, tokens and metrics set
        failed,         // a completion could not run (status says why)
        step,           // run_batch only: a step ran (n_running, n_step_tokens, kv_bytes_in_use)
    };
    Kind kind = Kind::token;
    RequestHandle request = 0;         // run_batch: the index into its requests
    int32_t sample = 0;                // which of its n_samples
    TokenId token = -1;
    int32_t index = 0;                 // token: 0 for the first generated one; prompt_logits: the rows' first prompt position
    int32_t n_context = 0;             // token: tokens in the sequence, this one included
    double t_ms = 0;                   // since the request arrived (run_batch: since the batch started)
    std::span<const float> logits;     // token: what it was drawn from (see GenerationRequest::token_logits); prompt_logits: [rows × n_vocab] (valid during the call)
    std::optional<float> logprob;      // token, when asked: log-probability of the token under the logits
    std::vector<TokenLogprob> top_logprobs;
    std::string text;
    // token: the KV pool after the step that produced it (all sequences: bytes held, what full
    // attention would hold), and the tokens of this completion's sequence those bytes include.
    uint64_t kv_bytes_in_use = 0, kv_bytes_full = 0;
    int32_t kv_tokens = 0;
    StopReason stop_reason = StopReason::max_tokens;
    std::vector<TokenId> tokens;       // finished: the generated ids
    RequestMetrics metrics;            // finished: computed once, here
    Status status;                     // failed
    int32_t n_running = 0, n_step_tokens = 0;   // step: sequences in it, tokens it ran
};
using RequestEventCallback = std::function<void(const RequestEvent& event)>;

// What one step of the loop did.
struct StepReport {
    bool ran = false;                  // false: nothing was runnable (idle, or waiting for KV room)
    int32_t n_running = 0, n_waiting = 0, n_step_tokens = 0;
    uint64_t kv_bytes_in_use = 0, kv_bytes_allocated = 0;
    int32_t n_preemptions = 0;         // in this step
};

// Counters of the loop since the engine loaded (the server's /metrics).
struct LoopCounters {
    int64_t n_prompt_tokens = 0, n_generation_tokens = 0;
    int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;   // prompt tokens looked up / found cached
    int64_t n_requests_finished = 0, n_requests_failed = 0, n_preemptions = 0;
    int64_t n_draft_tokens = 0, n_accepted_tokens = 0;   // speculative decoding: verified drafts, accepted ones
};

}  // namespace workbench
