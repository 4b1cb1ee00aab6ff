// run_batch as a client of the step loop: each request is submitted at its arrival time, the
// loop is stepped until every one has ended, and the completions' metrics (computed by the loop)
// are aggregated with vLLM's definitions.
#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "engine/engine_impl.h"

namespace workbench {
namespace {

using Clock = std::chrono::steady_clock;

bool same_options(const BatchOptions& a, const BatchOptions& b) {
    return a.max_batch_tokens == b.max_batch_tokens && a.max_running == b.max_running &&
           a.prefill_before_decode == b.prefill_before_decode && a.max_step_ms == b.max_step_ms;
}

}  // namespace

Result<BatchResult> Engine::run_batch(const std::vector<BatchRequest>& requests, const BatchOptions& options,
                                      const RequestEventCallback& on_event, const std::atomic<bool>* cancel) {
    Impl& e = *impl_;
    const BatchOptions before = e.loop->options();
    const bool own_options = !same_options(before, options);
    if (own_options) WB_RETURN_IF_ERROR(set_loop_options(options));
    const auto t0 = Clock::now();
    auto now_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
    auto emit = [&](RequestEvent& ev) {
        ev.t_ms = now_ms();
        if (on_event) on_event(ev);
    };

    // Each request is submitted when it arrives, stamped with its arrival time.
    std::vector<size_t> order(requests.size());
    for (size_t r = 0; r < order.size(); ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].arrival_ms < requests[b].arrival_ms; });
    std::vector<std::vector<BatchResult::Completion>> out(requests.size());
    std::vector<RequestHandle> handles(requests.size(), 0);
    std::unordered_map<RequestHandle, int32_t> request_of;
    size_t next = 0;
    BatchResult result;
    BatchMetrics& bm = result.metrics;
    auto on_request_event = [&](const RequestEvent& rev) {
        const int32_t r = request_of.at(rev.request);
        BatchResult::Completion& c = out[static_cast<size_t>(r)][static_cast<size_t>(rev.sample)];
        switch (rev.kind) {
            case RequestEvent::Kind::token: break;
            case RequestEvent::Kind::finished:
                c.ok = true;
                c.text = rev.text;
                c.tokens = rev.tokens;
                c.stop_reason = rev.stop_reason;
                c.metrics = rev.metrics;
                break;
            case RequestEvent::Kind::failed:
                c.ok = false;
                c.error = "request " + std::to_string(r) + ": " + rev.status.message();
                break;
            case RequestEvent::Kind::prompt_logits:
            case RequestEvent::Kind::step: return;
        }
        if (!on_event) return;
        RequestEvent ev = rev;
        ev.request = r;
        if (rev.kind == RequestEvent::Kind::failed) ev.status = Status(rev.status.code(), c.error);
        emit(ev);
    };
    auto submit_arrived = [&] {
        const double now = now_ms();
        while (next < order.size() && std::max(0.0, requests[order[next]].arrival_ms) <= now) {
            const size_t r = order[next++];
            const BatchRequest& req = requests[r];
            out[r].resize(static_cast<size_t>(std::max(1, req.n_samples)));
            for (size_t s = 0; s < out[r].size(); ++s) out[r][s].request = static_cast<int32_t>(r), out[r][s].sample = static_cast<int32_t>(s);
            EngineRequest er;
            er.prompt = req.prompt;
            er.generation = req.generation;
            er.n_samples = req.n_samples;
            er.arrival = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(std::max(0.0, req.arrival_ms)));
            // The handle is known before the loop reports anything: events come from step().
            handles[r] = e.loop->submit(std::move(er), on_request_event);
            request_of[handles[r]] = static_cast<int32_t>(r);
        }
    };
    bool cancelled = false;
    while (true) {
        submit_arrived();
        if (!cancelled && cancel && cancel->load(std::memory_order_relaxed)) {
            cancelled = true;
            for (RequestHandle h : handles)
                if (h) e.loop->cancel(h);
        }
        if (cancelled && !e.loop->has_requests()) break;
        const StepReport step = e.loop->step();
        if (step.ran) {
            ++bm.n_steps;
            bm.max_running = std::max(bm.max_running, step.n_running);
            bm.kv_bytes_peak = std::max(bm.kv_bytes_peak, step.kv_bytes_in_use);
            bm.n_preemptions += step.n_preemptions;
            RequestEvent ev;
            ev.kind = RequestEvent::Kind::step;
            ev.n_running = step.n_running;
            ev.n_step_tokens = step.n_step_tokens;
            ev.kv_bytes_in_use = step.kv_bytes_in_use;
            emit(ev);
            continue;
        }
        bm.n_preemptions += step.n_preemptions;
        if (step.n_preemptions > 0) continue;
        if (!e.loop->has_requests()) {
            if (cancelled || next == order.size()) break;
            // In slices, so a cancel is seen while the next request has not arrived yet.
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(
                std::clamp(requests[order[next]].arrival_ms - now_ms(), 0.0, 50.0)));
            continue;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Requests that never arrived before a cancel end cancelled, unrun.
    for (size_t r = 0; r < requests.size(); ++r)
        if (!handles[r]) {
            out[r].resize(static_cast<size_t>(std::max(1, requests[r].n_samples)));
            for (size_t s = 0; s < out[r].size(); ++s) {
                BatchResult::Completion& c = out[r][s];
                c.request = static_cast<int32_t>(r), c.sample = static_cast<int32_t>(s), c.ok = true;
                c.stop_reason = StopReason::cancelled;
                c.metrics.n_prompt_tokens = static_cast<int32_t>(requests[r].prompt.size());
            }
        }
    if (own_options) e.loop->set_options(before);

    for (size_t r = 0; r < requests.size(); ++r)
        for (const BatchResult::Completion& c : out[r]) result.completions.push_back(c);
    const int32_t n_steps = bm.n_steps, n_preemptions = bm.n_preemptions, max_running = bm.max_running;
    const uint64_t kv_peak = bm.kv_bytes_peak;
    bm = batch_metrics(result.completions, now_ms());
    bm.n_steps = n_steps, bm.n_preemptions = n_preemptions, bm.max_running = max_running, bm.kv_bytes_peak = kv_peak;
    return result;
}

// vLLM's definitions: a request's prompt counts once however many samples it has; TTFT and
// E2EL of completions that produced a token; every ITL gap; rates over the whole duration.
BatchMetrics batch_metrics(const std::vector<BatchResult::Completion>& completions, double duration_ms) {
    BatchMetrics bm;
    bm.duration_ms = duration_ms;
    std::vector<double> ttft, tpot, itl, e2e;
    int32_t last_request = -1;
    for (const BatchResult::Completion& c : completions) {
        if (!c.ok) {
            ++bm.n_failed;
            continue;
        }
        const RequestMetrics& m = c.metrics;
        ++bm.n_completed;
        if (c.request != last_request) bm.n_prompt_tokens += m.n_prompt_tokens;
        last_request = c.request;
        bm.n_output_tokens += m.n_output_tokens;
        bm.n_draft_tokens += m.n_draft_tokens;
        bm.n_accepted_tokens += m.n_accepted_tokens;
        if (m.n_output_tokens > 0) ttft.push_back(m.ttft_ms), e2e.push_back(m.e2e_ms);
        if (m.tpot_ms) tpot.push_back(*m.tpot_ms);
        itl.insert(itl.end(), m.itl_ms.begin(), m.itl_ms.end());
    }
    const double seconds = duration_ms / 1000.0;
    if (seconds > 0) {
        bm.request_throughput = bm.n_completed / seconds;
        bm.output_tok_s = static_cast<double>(bm.n_output_tokens) / seconds;
        bm.total_tok_s = static_cast<double>(bm.n_prompt_tokens + bm.n_output_tokens) / seconds;
    }
    bm.ttft_ms = latency_stats(std::move(ttft));
    bm.tpot_ms = latency_stats(std::move(tpot));
    bm.itl_ms = latency_stats(std::move(itl));
    bm.e2e_ms = latency_stats(std::move(e2e));
    return bm;
}

}  // namespace workbench
