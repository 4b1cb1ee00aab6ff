// The batch loop: the scheduler plans a step, the model runs every planned sequence in one
// forward pass, then each finished prompt or decode samples its next token. Sequences of a batch
// use ids from 1 up (0 stays the chat's), and their blocks go back to the pool (as a cached
// prefix) the moment they finish. Timing for the per-request metrics is taken here.
#include <algorithm>
#include <chrono>
#include <thread>

#include "engine/engine_impl.h"
#include "engine/stop_string_filter.h"
#include "sampling/sampler.h"
#include "scheduler/scheduler.h"

namespace workbench {
namespace {

using Clock = std::chrono::steady_clock;

// Samples of one prompt draw differently, reproducibly: sample s uses seed + s.
SamplingParams sample_params(SamplingParams p, int32_t sample) {
    p.seed += static_cast<uint64_t>(sample);
    return p;
}

// One completion: a sample of a request, with its own sequence in the cache.
struct Completion {
    Completion(const GenerationRequest& g, int32_t r, int32_t s)
        : gen(g), filter(g.stop_strings, emit), sampler(sample_params(g.sampling, s)) {
        out.request = r;
        out.sample = s;
    }
    const GenerationRequest& gen;
    std::string shown;                 // text released by the filter since the last event
    TextCallback emit = [this](std::string_view t) { shown += t; };
    StopStringFilter filter;
    Utf8StreamDecoder utf8;
    Sampler sampler;
    SeqId seq = 0;
    int32_t sched = -1;                // scheduler id; -1 until it is queued
    std::vector<TokenId> tokens;       // prompt + sampled: what the sequence holds once all has run
    int32_t n_prompt = 0;
    double arrival_ms = 0, scheduled_ms = -1;
    std::vector<double> token_ms;
    std::vector<Completion*> forks;    // samples that start from this one's prompt (fork)
    bool done = false;
    BatchResult::Completion out;
};

BatchEvent event(BatchEvent::Kind kind, const BatchResult::Completion& c) {
    BatchEvent ev;
    ev.kind = kind;
    ev.request = c.request;
    ev.sample = c.sample;
    return ev;
}

// What a decode-only step and a prompt token cost, learnt from the steps so far (moving
// averages), to size prompt chunks so a step that carries them stays under a time budget.
class StepCostModel {
public:
    void observe(double step_ms, int32_t n_prompt_tokens) {
        if (n_prompt_tokens == 0) {
            decode_ms_ = decode_ms_ < 0 ? step_ms : 0.7 * decode_ms_ + 0.3 * step_ms;
            return;
        }
        const double per_token = std::max(0.0, step_ms - std::max(0.0, decode_ms_)) / n_prompt_tokens;
        token_ms_ = token_ms_ < 0 ? per_token : 0.7 * token_ms_ + 0.3 * per_token;
    }
    // Prompt tokens the next step may carry beside n_decoding decodes; -1: no cap.
    int32_t prompt_budget(double max_step_ms, int32_t n_decoding) const {
        if (max_step_ms == 0 || n_decoding == 0) return -1;   // off, or no stream to keep smooth
        if (decode_ms_ < 0 || token_ms_ <= 0) return kProbeTokens;
        const double target = max_step_ms > 0 ? max_step_ms : 2.0 * decode_ms_;
        return std::max(1, static_cast<int32_t>((target - decode_ms_) / token_ms_));
    }

private:
    static constexpr int32_t kProbeTokens = 16;   // a first chunk small enough to measure safely
    double decode_ms_ = -1, token_ms_ = -1;
};

bool variant_forks(AttentionKind k) {
    return k == AttentionKind::full || k == AttentionKind::topk || k == AttentionKind::cross_layer;
}

}  // namespace

Result<BatchResult> Engine::run_batch(const std::vector<BatchRequest>& requests, const BatchOptions& options,
                                      const BatchEventCallback& on_event, const std::atomic<bool>* cancel) {
    Impl& e = *impl_;
    if (options.max_batch_tokens < 1 || options.max_running < 1)
        return error(StatusCode::invalid_argument, "batch: max_batch_tokens and max_running must be at least 1 (got " +
                                                       std::to_string(options.max_batch_tokens) + ", " + std::to_string(options.max_running) + ")");
    const auto t0 = Clock::now();
    auto now_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
    auto emit = [&](BatchEvent ev) {
        ev.t_ms = now_ms();
        if (on_event) on_event(ev);
    };
    const bool bounded = !e.kv->unbounded_context();
    const bool forks = variant_forks(e.kv->spec().kind);

    // A chunk never exceeds what one step may add to a sequence (a sliding window's pool is sized for it).
    Scheduler sched({.max_batch_tokens = options.max_batch_tokens, .max_running = options.max_running,
                     .max_chunk_tokens = PagedKv::kMaxStepTokens, .prefill_before_decode = options.prefill_before_decode});
    std::vector<std::unique_ptr<Completion>> all;
    std::vector<Completion*> by_sched;     // scheduler id → completion
    std::vector<Completion*> arrivals;     // queued in arrival order, each a request's first sample (or every sample)
    size_t next_arrival = 0;               // arrivals before it are queued in the scheduler
    BatchResult result;
    BatchMetrics& bm = result.metrics;

    auto finish = [&](Completion& c, StopReason why) {
        if (c.done) return;
        c.done = true;
        if (c.sched >= 0) sched.finish(c.sched);
        e.kv->free(c.seq);
        if (why != StopReason::stop_string) {
            c.filter.push(c.utf8.flush());
            c.filter.finish();
        }
        c.out.ok = true;
        c.out.text = c.filter.text();
        c.out.tokens.assign(c.tokens.begin() + c.n_prompt, c.tokens.end());
        c.out.stop_reason = why;
        RequestMetrics& m = c.out.metrics;
        m.n_prompt_tokens = c.n_prompt;
        m.n_output_tokens = static_cast<int32_t>(c.out.tokens.size());
        m.queue_ms = c.scheduled_ms < 0 ? 0 : c.scheduled_ms - c.arrival_ms;
        m.n_preemptions = c.sched >= 0 ? sched.n_preemptions(c.sched) : 0;
        if (!c.token_ms.empty()) {
            m.ttft_ms = c.token_ms.front() - c.arrival_ms;
            m.e2e_ms = c.token_ms.back() - c.arrival_ms;
            for (size_t i = 1; i < c.token_ms.size(); ++i) m.itl_ms.push_back(c.token_ms[i] - c.token_ms[i - 1]);
            if (c.token_ms.size() > 1) m.tpot_ms = (m.e2e_ms - m.ttft_ms) / static_cast<double>(c.token_ms.size() - 1);
        } else {
            m.e2e_ms = now_ms() - c.arrival_ms;
        }
        BatchEvent ev = event(BatchEvent::Kind::finished, c.out);
        ev.text = c.out.text;
        ev.stop_reason = why;
        ev.metrics = m;
        emit(std::move(ev));
    };
    auto fail = [&](Completion& c, const std::string& why) {
        if (c.done) return;
        c.done = true;
        if (c.sched >= 0) sched.finish(c.sched);
        e.kv->free(c.seq);
        c.out.ok = false;
        c.out.error = why;
        BatchEvent ev = event(BatchEvent::Kind::failed, c.out);
        ev.error = why;
        emit(std::move(ev));
        // Samples waiting on this prompt run it themselves.
        arrivals.insert(arrivals.begin() + static_cast<std::ptrdiff_t>(next_arrival), c.forks.begin(), c.forks.end());
        c.forks.clear();
    };

    // Completions, checked before anything runs.
    SeqId next_seq = Impl::kChatSequence + 1;
    for (size_t r = 0; r < requests.size(); ++r) {
        const BatchRequest& req = requests[r];
        Completion* first = nullptr;
        for (int32_t s = 0; s < std::max(1, req.n_samples); ++s) {
            auto c = std::make_unique<Completion>(req.generation, static_cast<int32_t>(r), s);
            c->seq = next_seq++;
            c->tokens = req.prompt;
            c->n_prompt = static_cast<int32_t>(req.prompt.size());
            c->arrival_ms = std::max(0.0, req.arrival_ms);
            for (TokenId t : req.prompt) c->sampler.accept(t);
            Completion* cp = c.get();
            all.push_back(std::move(c));
            std::string bad;
            if (req.prompt.empty()) bad = "the prompt is empty";
            else if (req.n_samples < 1) bad = "n_samples must be at least 1 (got " + std::to_string(req.n_samples) + ")";
            else if (req.generation.max_tokens < 0) bad = "max_tokens must not be negative";
            else if (bounded && static_cast<int64_t>(req.prompt.size()) >= e.n_ctx)
                bad = "the prompt has " + std::to_string(req.prompt.size()) + " tokens but the context holds " + std::to_string(e.n_ctx);
            else
                for (TokenId t : req.prompt)
                    if (t < 0 || t >= e.info.n_vocab) {
                        bad = "token id " + std::to_string(t) + " is outside the vocabulary";
                        break;
                    }
            if (!bad.empty()) {
                fail(*cp, "request " + std::to_string(r) + ": " + bad);
                continue;
            }
            if (req.generation.max_tokens == 0) {
                finish(*cp, StopReason::max_tokens);
                continue;
            }
            if (forks && first) first->forks.push_back(cp);
            else arrivals.push_back(cp);
            if (!first) first = cp;
        }
    }
    std::stable_sort(arrivals.begin(), arrivals.end(), [](const Completion* a, const Completion* b) { return a->arrival_ms < b->arrival_ms; });

    // Admission asks the pool for room: the first chunk plus a block for each running sequence.
    const int64_t block = e.kv->n_tokens_per_block();
    auto admit = [&](int32_t id, int32_t n_first) -> int32_t {
        Completion& c = *by_sched[static_cast<size_t>(id)];
        if (sched.n_running() > 0 && e.kv->n_free_tokens() < n_first + block * (sched.n_running() + 1)) return -1;
        if (c.scheduled_ms < 0) c.scheduled_ms = now_ms();
        const int32_t cached = e.kv->adopt_cached_prefix(c.seq, c.tokens);
        if (c.token_ms.empty()) c.out.metrics.n_prompt_cached = std::max(c.out.metrics.n_prompt_cached, cached);
        return cached;
    };
    // A token for `c` from `logits`: stream it, then stop or queue it to run.
    auto take_token = [&](Completion& c, std::span<const float> logits) {
        const TokenId token = c.sampler.sample(logits);
        c.sampler.accept(token);
        c.tokens.push_back(token);
        c.token_ms.push_back(now_ms());
        const bool stop_string = c.filter.push(c.utf8.push(e.tokenizer->token_to_piece(token, false)));
        BatchEvent ev = event(BatchEvent::Kind::token, c.out);
        ev.token = token;
        ev.text = std::move(c.shown);
        c.shown.clear();
        emit(std::move(ev));
        const int32_t n_out = static_cast<int32_t>(c.tokens.size()) - c.n_prompt;
        if (!c.gen.ignore_eos && e.tokenizer->is_eog(token)) return finish(c, StopReason::end_of_generation);
        if (stop_string) return finish(c, StopReason::stop_string);
        if (n_out >= c.gen.max_tokens) return finish(c, StopReason::max_tokens);
        if (bounded && static_cast<int64_t>(c.tokens.size()) > e.n_ctx) return finish(c, StopReason::context_full);
        sched.append_token(c.sched);
    };

    std::vector<BatchSequence> step;
    std::vector<float> logits;
    StepCostModel costs;
    while (true) {
        const double now = now_ms();
        while (next_arrival < arrivals.size() && arrivals[next_arrival]->arrival_ms <= now) {
            Completion& c = *arrivals[next_arrival++];
            if (c.done) continue;
            c.sched = sched.add(static_cast<int32_t>(c.tokens.size()));
            by_sched.push_back(&c);
        }
        if (cancel && cancel->load(std::memory_order_relaxed)) break;
        if (sched.idle()) {
            if (next_arrival == arrivals.size()) break;
            // In slices, so a cancel is seen while the next request has not arrived yet.
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(std::min(50.0, arrivals[next_arrival]->arrival_ms - now)));
            continue;
        }
        const std::vector<StepItem> items = sched.plan(admit, costs.prompt_budget(options.max_step_ms, sched.n_decoding()));
        if (items.empty()) {
            if (sched.n_running() == 0 && next_arrival == arrivals.size()) break;  // cannot happen: admission never blocks an empty batch
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        step.clear();
        for (const StepItem& it : items) {
            Completion& c = *by_sched[static_cast<size_t>(it.request)];
            const int32_t done = sched.n_cached(it.request);
            step.push_back({c.seq, std::span(c.tokens).subspan(static_cast<size_t>(done), static_cast<size_t>(it.n_tokens)), it.completes});
        }
        const auto t_step = Clock::now();
        const Status st = e.model->forward_batch(step, *e.kv, logits, *e.pool);
        if (!st.ok()) {
            if (st.code() == StatusCode::resource_exhausted || st.code() == StatusCode::out_of_range) {
                // No KV room: pause the youngest and recompute it later; alone, it cannot fit.
                const int32_t victim = sched.preempt_youngest();
                if (victim >= 0) {
                    e.kv->free(by_sched[static_cast<size_t>(victim)]->seq);
                    ++bm.n_preemptions;
                } else {
                    fail(*by_sched[static_cast<size_t>(items.front().request)], st.message());
                }
                continue;
            }
            for (const StepItem& it : items) fail(*by_sched[static_cast<size_t>(it.request)], st.message());
            continue;
        }
        int32_t n_prompt_tokens = 0;
        for (const StepItem& it : items) n_prompt_tokens += it.n_tokens > 1 || !it.completes ? it.n_tokens : 0;
        costs.observe(std::chrono::duration<double, std::milli>(Clock::now() - t_step).count(), n_prompt_tokens);
        sched.absorb(items);
        e.note_step(std::all_of(items.begin(), items.end(), [](const StepItem& it) { return it.n_tokens == 1; }));
        ++bm.n_steps;
        bm.max_running = std::max(bm.max_running, sched.n_running());
        const uint64_t in_use = e.kv->usage().bytes_in_use;
        bm.kv_bytes_peak = std::max(bm.kv_bytes_peak, in_use);
        int32_t n_step_tokens = 0;
        for (const StepItem& it : items) n_step_tokens += it.n_tokens;
        {
            BatchEvent ev;
            ev.kind = BatchEvent::Kind::step;
            ev.n_running = sched.n_running();
            ev.n_step_tokens = n_step_tokens;
            ev.kv_bytes_in_use = in_use;
            emit(std::move(ev));
        }
        size_t row = 0;
        for (const StepItem& it : items) {
            if (!it.completes) continue;
            Completion& c = *by_sched[static_cast<size_t>(it.request)];
            const std::span<const float> lg(logits.data() + (row++) * static_cast<size_t>(e.info.n_vocab), static_cast<size_t>(e.info.n_vocab));
            // The prompt has run: its other samples start from a copy-on-write fork of it.
            for (Completion* f : c.forks) {
                if (!e.kv->fork(c.seq, f->seq).ok()) {
                    arrivals.insert(arrivals.begin() + static_cast<std::ptrdiff_t>(next_arrival), f);  // runs its own prompt
                    continue;
                }
                f->sched = sched.add_running(static_cast<int32_t>(f->tokens.size()));
                by_sched.push_back(f);
                f->scheduled_ms = c.scheduled_ms;
                f->out.metrics.n_prompt_cached = f->n_prompt;
                take_token(*f, lg);
            }
            c.forks.clear();
            take_token(c, lg);
        }
    }
    for (auto& c : all)
        if (!c->done) finish(*c, StopReason::cancelled);

    // Aggregates, vLLM's definitions.
    bm.duration_ms = now_ms();
    std::vector<double> ttft, tpot, itl, e2e;
    std::vector<bool> counted(requests.size(), false);
    for (auto& c : all) {
        result.completions.push_back(c->out);
        if (!c->out.ok) {
            ++bm.n_failed;
            continue;
        }
        const RequestMetrics& m = c->out.metrics;
        ++bm.n_completed;
        if (!counted[static_cast<size_t>(c->out.request)]) bm.n_prompt_tokens += m.n_prompt_tokens;
        counted[static_cast<size_t>(c->out.request)] = true;
        bm.n_output_tokens += m.n_output_tokens;
        if (m.n_output_tokens > 0) ttft.push_back(m.ttft_ms), e2e.push_back(m.e2e_ms);
        if (m.tpot_ms) tpot.push_back(*m.tpot_ms);
        itl.insert(itl.end(), m.itl_ms.begin(), m.itl_ms.end());
    }
    const double seconds = bm.duration_ms / 1000.0;
    if (seconds > 0) {
        bm.request_throughput = bm.n_completed / seconds;
        bm.output_tok_s = static_cast<double>(bm.n_output_tokens) / seconds;
        bm.total_tok_s = static_cast<double>(bm.n_prompt_tokens + bm.n_output_tokens) / seconds;
    }
    bm.ttft_ms = latency_stats(std::move(ttft));
    bm.tpot_ms = latency_stats(std::move(tpot));
    bm.itl_ms = latency_stats(std::move(itl));
    bm.e2e_ms = latency_stats(std::move(e2e));
    return result;
}

}  // namespace workbench
