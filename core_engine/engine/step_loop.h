// The engine's one step loop: plan (the scheduler picks which sequences advance by how many
// tokens) → execute (the model runs them in one forward pass) → absorb (sample, stream, stop,
// metrics). Requests join through a thread-safe inbox and leave when they finish, fail or are
// cancelled; their events are reported from step() on the engine's thread. Internal to the engine.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kv_blocks/kv_block_manager.h"
#include "sampling/grammar_matcher.h"
#include "sampling/top_logits.h"
#include "scheduler/scheduler.h"
#include "workbench/engine.h"
#include "workbench/request.h"

namespace workbench {

class StepLoop {
public:
    explicit StepLoop(Engine::Impl& engine);
    ~StepLoop();

    // Any thread.
    RequestHandle submit(EngineRequest request, RequestEventCallback on_event);
    void cancel(RequestHandle request);
    void wait_for_requests(std::chrono::milliseconds timeout);

    // The engine's thread.
    StepReport step();
    bool has_requests() const;
    void set_options(const BatchOptions& options);
    const BatchOptions& options() const { return options_; }
    const LoopCounters& counters() const { return counters_; }

private:
    struct LiveSample;
    struct Submitted {
        RequestHandle handle;
        EngineRequest request;
        RequestEventCallback on_event;
    };
    using Clock = std::chrono::steady_clock;

    void take_inbox();
    void start(Submitted& submitted);
    int32_t admit(int32_t sched_id, int32_t n_first);
    // `logits`: the row in full, or `top`: its best (top_logits_for(c) of them).
    void take_token(LiveSample& c, std::span<const float> logits, std::span<const TopLogit> top = {});
    // How many of its row's best logits `c`'s next token needs, when it needs no others: its
    // sampler's count, unless the request reads the logits themselves (0: the whole row).
    int32_t top_logits_for(const LiveSample& c) const;
    // Streams `token` (sampled from `logits`) and checks the stops; false once `c` has ended.
    bool deliver(LiveSample& c, TokenId token, std::span<const float> logits);
    // The last delivered token runs next (with drafts after it when the request speculates).
    void queue_next(LiveSample& c);
    // Speculative decoding (step_loop_speculation.cpp).
    Status check_speculation(const EngineRequest& request) const;
    void propose_drafts(LiveSample& c);
    std::vector<TokenId> draft_with_model(LiveSample& c, int32_t n);
    void verify_drafts(LiveSample& c, const float* rows, int32_t n_rows);
    void drop_drafts(LiveSample& c);
    void free_draft_sequence(LiveSample& c);
    void finish(LiveSample& c, StopReason why);
    void fail(LiveSample& c, Status why);
    void release(LiveSample& c);
    void emit(LiveSample& c, RequestEvent& ev);
    double since(Clock::time_point t) const;

    Engine::Impl& e_;
    BatchOptions options_;
    std::unique_ptr<Scheduler> sched_;
    std::vector<LiveSample*> by_sched_;   // scheduler id → completion (null once it is gone)
    std::unordered_map<RequestHandle, std::vector<std::unique_ptr<LiveSample>>> live_;
    std::vector<RequestHandle> ended_;     // requests whose every completion is done: dropped after the step
    SeqId next_seq_ = 1;                   // 0 is the conversation's
    bool conversation_busy_ = false;
    LoopCounters counters_;
    struct StepCosts;
    std::unique_ptr<StepCosts> costs_;
    std::vector<float> logits_;
    std::vector<float> masked_;                      // a row with the grammar's mask applied
    std::shared_ptr<const TokenTrie> token_trie_;    // built for the first grammar request
    std::unordered_map<std::string, std::shared_ptr<const Grammar>> grammars_;   // compiled, by their text
    std::vector<TopLogit> top_logits_;   // the rows that asked for their best alone, k a row
    std::vector<float> draft_logits_;
    std::unordered_map<SeqId, std::vector<TokenId>> draft_held_;   // the draft model's cache, per sequence

    mutable std::mutex inbox_mutex_;
    std::condition_variable inbox_ready_;
    std::vector<Submitted> inbox_;
    std::vector<RequestHandle> cancels_;
    RequestHandle next_handle_ = 1;
};

}  // namespace workbench
