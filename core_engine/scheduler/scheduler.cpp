// The continuous-batching policy: decodes first, then prompt chunks (chunked prefill) under the
// step's token budget, FCFS admission, youngest-first preemption with recompute.
#include "scheduler/scheduler.h"

#include <algorithm>

namespace workbench {

Scheduler::Scheduler(SchedulerConfig config) : config_(config) {
    config_.max_running = std::max(1, config_.max_running);
    config_.max_batch_tokens = std::max(config_.max_batch_tokens, config_.max_running);
}

int32_t Scheduler::chunk(int32_t pending, int32_t budget) const {
    const int32_t n = std::min(pending, budget);
    return config_.max_chunk_tokens > 0 ? std::min(n, config_.max_chunk_tokens) : n;
}

int32_t Scheduler::add(int32_t n_tokens) {
    const int32_t id = static_cast<int32_t>(reqs_.size());
    reqs_.push_back({std::max(1, n_tokens), 0, 0, 0, RequestState::waiting});
    waiting_.push_back(id);
    return id;
}

int32_t Scheduler::add_running(int32_t n_tokens) {
    const int32_t id = static_cast<int32_t>(reqs_.size());
    reqs_.push_back({n_tokens, n_tokens, 0, 0, RequestState::running});
    running_.push_back(id);
    return id;
}

std::vector<StepItem> Scheduler::plan(const std::function<int32_t(int32_t, int32_t)>& admit, int32_t max_prompt_tokens) {
    std::vector<StepItem> items;
    // Forked samples may run beyond max_running: every running decode still fits the budget.
    int32_t budget = std::max(config_.max_batch_tokens, n_running());
    // With nothing running, nothing can free room: a past preemption no longer holds admission back.
    if (running_.empty()) preempted_ = false;
    bool prompt_pending = !waiting_.empty();
    for (int32_t id : running_) prompt_pending = prompt_pending || reqs_[static_cast<size_t>(id)].n_pending() > 1;
    const bool decode_now = !(config_.prefill_before_decode && prompt_pending);
    // Decodes: one token each, then their drafts from what the budget leaves.
    if (decode_now) {
        for (int32_t id : running_) {
            const Request& r = reqs_[static_cast<size_t>(id)];
            if (r.n_pending() == 1 && budget > 0) {
                items.push_back({id, 1, true});
                --budget;
            }
        }
        for (StepItem& it : items) {
            const int32_t extra = std::min(reqs_[static_cast<size_t>(it.request)].n_draft, budget);
            it.n_tokens += extra;
            budget -= extra;
        }
    }
    if (max_prompt_tokens >= 0) budget = std::min(budget, std::max(1, max_prompt_tokens));
    // Prompt chunks of running requests (a prompt longer than one step, a recompute).
    for (int32_t id : running_) {
        const Request& r = reqs_[static_cast<size_t>(id)];
        const int32_t pending = r.n_pending();
        if (pending <= 1 || budget == 0) continue;
        const int32_t n = chunk(pending, budget);
        items.push_back({id, n, n == pending});
        budget -= n;
    }
    // Admission, in arrival order.
    while (!preempted_ && budget > 0 && !waiting_.empty() && n_running() < config_.max_running) {
        const int32_t id = waiting_.front();
        Request& r = reqs_[static_cast<size_t>(id)];
        const int32_t cached = admit ? admit(id, chunk(r.n_known, budget)) : 0;
        if (cached < 0) break;
        waiting_.erase(waiting_.begin());
        r.state = RequestState::running;
        r.n_done = std::clamp(cached, 0, r.n_known - 1);
        running_.insert(std::upper_bound(running_.begin(), running_.end(), id), id);
        const int32_t pending = r.n_known - r.n_done;
        if (pending == 1 && !decode_now) continue;
        const int32_t n = chunk(pending, budget);
        items.push_back({id, n, n == pending});
        budget -= n;
    }
    // Benchmark phases: when no prompt could be planned (the waiting ones do not fit yet), the
    // running sequences decode rather than the batch stalling.
    if (items.empty() && !decode_now)
        for (int32_t id : running_) {
            const Request& r = reqs_[static_cast<size_t>(id)];
            if (r.n_pending() == 1 && budget > 0) items.push_back({id, 1, true}), --budget;
        }
    return items;
}

int32_t Scheduler::n_decoding() const {
    int32_t n = 0;
    for (int32_t id : running_) n += reqs_[static_cast<size_t>(id)].n_pending() == 1;
    return n;
}

void Scheduler::absorb(std::span<const StepItem> items) {
    for (const StepItem& it : items) reqs_[static_cast<size_t>(it.request)].n_done += it.n_tokens;
    preempted_ = false;
}

void Scheduler::append_token(int32_t request) { ++reqs_[static_cast<size_t>(request)].n_known; }

void Scheduler::append_draft(int32_t request, int32_t n) {
    Request& r = reqs_[static_cast<size_t>(request)];
    r.n_known += n;
    r.n_draft += n;
}

void Scheduler::rewind(int32_t request, int32_t n_tokens) {
    Request& r = reqs_[static_cast<size_t>(request)];
    r.n_known = std::min(r.n_known, n_tokens);
    r.n_done = std::min(r.n_done, r.n_known);
    r.n_draft = 0;
}

void Scheduler::finish(int32_t request) {
    Request& r = reqs_[static_cast<size_t>(request)];
    if (r.state == RequestState::finished) return;
    auto& from = r.state == RequestState::running ? running_ : waiting_;
    from.erase(std::find(from.begin(), from.end(), request));
    r.state = RequestState::finished;
}

int32_t Scheduler::preempt_youngest() {
    if (running_.size() < 2) return -1;
    const int32_t id = running_.back();
    running_.pop_back();
    Request& r = reqs_[static_cast<size_t>(id)];
    r.state = RequestState::waiting;
    r.n_done = 0;
    r.n_known -= r.n_draft;   // its drafts go (the engine drops them from its tokens too)
    r.n_draft = 0;
    ++r.n_preemptions;
    waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), id), id);
    preempted_ = true;
    return id;
}

}  // namespace workbench
