// Iteration-level (continuous) batching as pure bookkeeping. Requests wait, run and finish; each
// step the scheduler says which sequences advance by how many tokens under a token budget:
// running decodes first (one token each, so streams never stall behind a long prompt), then
// prompt chunks in arrival order, admitting waiting requests while there is room. It never
// touches the model or the KV cache: the engine loop runs the plan and reports back (absorb,
// append_token, preempt_youngest, finish). Single-threaded, owned by the engine's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace workbench {

struct SchedulerConfig {
    int32_t max_batch_tokens = 256;   // tokens per step, decodes and prompt chunks together
    int32_t max_running = 32;         // sequences in the running batch
    int32_t max_chunk_tokens = 0;     // most prompt tokens of one sequence per step; 0: no limit
    // Benchmark phases (llama-batched-bench): no decode runs while a prompt is still pending.
    bool prefill_before_decode = false;
};

struct StepItem {
    int32_t request = 0;
    int32_t n_tokens = 0;    // the next tokens of its sequence to run
    bool completes = false;  // afterwards every known token has run: sample the next one
};

enum class RequestState { waiting, running, finished };

class Scheduler {
public:
    // max_batch_tokens is raised to max_running when below it, so every running decode fits.
    explicit Scheduler(SchedulerConfig config);

    // A request whose sequence holds `n_tokens` known tokens (its prompt, ≥ 1), queued behind
    // the earlier ones. Returns its id (0, 1, 2, ... in call order).
    int32_t add(int32_t n_tokens);
    // A request that starts running with `n_tokens` already in the cache (a fork of another
    // sequence: n samples of one prompt); it waits for its first append_token.
    int32_t add_running(int32_t n_tokens);

    // The step. `admit(request, n_first_chunk)` is asked before a waiting request joins: it
    // returns how many of its tokens are already cached (prefix caching; fewer than its known
    // tokens), or -1 to keep it waiting (no KV room now; later requests wait too). No request
    // is admitted in the step right after a preemption.
    // `max_prompt_tokens` (≥ 1; -1: no cap) caps the prompt tokens of this step beside its
    // decodes: the engine sizes it so a step with prompt chunks stays near a time budget.
    std::vector<StepItem> plan(const std::function<int32_t(int32_t request, int32_t n_first_chunk)>& admit = {},
                               int32_t max_prompt_tokens = -1);
    // The planned items ran: their tokens are in the cache.
    void absorb(std::span<const StepItem> items);
    // A token was sampled for the request: one more known token to run.
    void append_token(int32_t request);
    // Speculative decoding: `n` drafted tokens follow the request's next token. They run with
    // it as its decode, as many as the step's token budget leaves after every decode's first
    // token; the engine verifies them and then rewinds.
    void append_draft(int32_t request, int32_t n);
    // The sequence keeps its first `n_tokens` (≤ its known tokens): later ones, drafts
    // included, are dropped (rejected drafts, drafts of a preempted request).
    void rewind(int32_t request, int32_t n_tokens);
    int32_t n_draft(int32_t request) const { return reqs_[static_cast<size_t>(request)].n_draft; }
    void finish(int32_t request);
    // Pauses the youngest running request: it goes back to the queue (ahead of later arrivals)
    // and all its known tokens run again when it is re-admitted (recompute). Returns its id, or
    // -1 when fewer than two requests run (a lone request that does not fit cannot be helped).
    int32_t preempt_youngest();

    RequestState state(int32_t request) const { return reqs_[static_cast<size_t>(request)].state; }
    int32_t n_cached(int32_t request) const { return reqs_[static_cast<size_t>(request)].n_done; }
    int32_t n_known(int32_t request) const { return reqs_[static_cast<size_t>(request)].n_known; }
    int32_t n_preemptions(int32_t request) const { return reqs_[static_cast<size_t>(request)].n_preemptions; }
    int32_t n_running() const { return static_cast<int32_t>(running_.size()); }
    // Running requests whose next step is a decode (one known token not yet run).
    int32_t n_decoding() const;
    int32_t n_waiting() const { return static_cast<int32_t>(waiting_.size()); }
    bool idle() const { return running_.empty() && waiting_.empty(); }
    const SchedulerConfig& config() const { return config_; }

private:
    int32_t chunk(int32_t pending, int32_t budget) const;
    struct Request {
        int32_t n_known = 0;   // tokens of the sequence known so far (prompt + sampled)
        int32_t n_done = 0;    // of those, in the cache
        int32_t n_draft = 0;   // of the known ones, drafted (the last ones)
        int32_t n_pending() const { return n_known - n_done - n_draft; }   // not run, drafts aside
        int32_t n_preemptions = 0;
        RequestState state = RequestState::waiting;
    };
    SchedulerConfig config_;
    std::vector<Request> reqs_;
    std::vector<int32_t> waiting_;   // ids in arrival order (ids grow with arrival)
    std::vector<int32_t> running_;   // ids in arrival order
    bool preempted_ = false;         // a preemption since the last absorb
};

}  // namespace workbench
