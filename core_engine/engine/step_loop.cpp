// The step loop. Batch sequences take ids from 1 up; a conversation request runs on the chat's
// sequence 0 and keeps it. Every other sequence's blocks go back to the pool (as a cached
// prefix) the moment it finishes. Timing and KV figures for the metrics are taken here only.
#include "engine/step_loop.h"

#include <algorithm>
#include <cmath>

#include "engine/engine_impl.h"
#include "engine/step_loop_live_sample.h"
#include "sampling/token_mask.h"

namespace workbench {
namespace {

// Log-probability of `token` and the `n_top` most likely tokens under `logits`.
void logprobs(std::span<const float> logits, TokenId token, int32_t n_top, RequestEvent& ev) {
    const float max = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l - max));
    const float log_z = max + static_cast<float>(std::log(sum));
    ev.logprob = logits[static_cast<size_t>(token)] - log_z;
    if (n_top <= 0) return;
    std::vector<TokenId> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<TokenId>(i);
    const size_t k = std::min(ids.size(), static_cast<size_t>(n_top));
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](TokenId a, TokenId b) { return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]; });
    for (size_t i = 0; i < k; ++i) ev.top_logprobs.push_back({ids[i], logits[static_cast<size_t>(ids[i])] - log_z});
}

}  // namespace

// What a decode-only step and a prompt token cost, learnt from the steps so far (moving
// averages), to size prompt chunks so a step that carries them stays under a time budget.
struct StepLoop::StepCosts {
    void observe(double step_ms, int32_t n_prompt_tokens) {
        if (n_prompt_tokens == 0) {
            decode_ms = decode_ms < 0 ? step_ms : 0.7 * decode_ms + 0.3 * step_ms;
            return;
        }
        const double per_token = std::max(0.0, step_ms - std::max(0.0, decode_ms)) / n_prompt_tokens;
        token_ms = token_ms < 0 ? per_token : 0.7 * token_ms + 0.3 * per_token;
    }
    // Prompt tokens the next step may carry beside n_decoding decodes; -1: no cap.
    int32_t prompt_budget(double max_step_ms, int32_t n_decoding) const {
        if (max_step_ms == 0 || n_decoding == 0) return -1;   // off, or no stream to keep smooth
        if (decode_ms < 0 || token_ms <= 0) return kProbeTokens;
        const double target = max_step_ms > 0 ? max_step_ms : 2.0 * decode_ms;
        return std::max(1, static_cast<int32_t>((target - decode_ms) / token_ms));
    }
    static constexpr int32_t kProbeTokens = 16;   // a first chunk small enough to measure safely
    double decode_ms = -1, token_ms = -1;
};

StepLoop::StepLoop(Engine::Impl& engine) : e_(engine), costs_(std::make_unique<StepCosts>()) { set_options(options_); }
StepLoop::~StepLoop() = default;

double StepLoop::since(Clock::time_point t) const { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void StepLoop::set_options(const BatchOptions& options) {
    options_ = options;
    // A chunk never exceeds what one step may add to a sequence (a sliding window's pool is sized for it).
    sched_ = std::make_unique<Scheduler>(SchedulerConfig{.max_batch_tokens = options.max_batch_tokens, .max_running = options.max_running,
                                                         .max_chunk_tokens = PagedKv::kMaxStepTokens,
                                                         .prefill_before_decode = options.prefill_before_decode});
    by_sched_.clear();
    *costs_ = StepCosts{};
}

RequestHandle StepLoop::submit(EngineRequest request, RequestEventCallback on_event) {
    std::lock_guard lock(inbox_mutex_);
    if (!request.arrival) request.arrival = Clock::now();
    const RequestHandle h = next_handle_++;
    inbox_.push_back({h, std::move(request), std::move(on_event)});
    inbox_ready_.notify_all();
    return h;
}

void StepLoop::cancel(RequestHandle request) {
    std::lock_guard lock(inbox_mutex_);
    cancels_.push_back(request);
    inbox_ready_.notify_all();
}

void StepLoop::wait_for_requests(std::chrono::milliseconds timeout) {
    std::unique_lock lock(inbox_mutex_);
    inbox_ready_.wait_for(lock, timeout, [&] { return !inbox_.empty() || !cancels_.empty(); });
}

bool StepLoop::has_requests() const {
    std::lock_guard lock(inbox_mutex_);
    return !inbox_.empty() || !cancels_.empty() || !live_.empty();
}

void StepLoop::emit(LiveSample& c, RequestEvent& ev) {
    ev.request = c.handle;
    ev.sample = c.sample;
    // A token's time is the one its metrics use.
    ev.t_ms = ev.kind == RequestEvent::Kind::token ? c.token_ms.back() : since(c.arrival);
    if (c.on_event) c.on_event(ev);
}

void StepLoop::take_inbox() {
    std::vector<Submitted> arrived;
    std::vector<RequestHandle> cancels;
    {
        std::lock_guard lock(inbox_mutex_);
        arrived.swap(inbox_);
        cancels.swap(cancels_);
    }
    for (Submitted& s : arrived) start(s);
    for (RequestHandle h : cancels) {
        const auto it = live_.find(h);
        if (it == live_.end()) continue;
        for (auto& c : it->second) finish(*c, StopReason::cancelled);
    }
}

// Completions of a new request, checked before anything runs.
void StepLoop::start(Submitted& s) {
    auto req = std::make_shared<const EngineRequest>(std::move(s.request));
    auto& completions = live_[s.handle];
    const bool bounded = !e_.kv->unbounded_context();
    const bool forks = e_.kv->can_fork() && !req->conversation;
    const bool runs_prompt_only = req->conversation || req->prompt_logits;
    const int32_t n_samples = req->conversation ? 1 : std::max(1, req->n_samples);
    std::shared_ptr<const Grammar> grammar;
    Status bad_grammar;
    // A prompt that ends inside <think> (DeepSeek-R1's generation prompt): the reply starts thinking.
    bool thinking_open = false;   // (a grammar decides the reply's form itself)
    if (!req->prompt.empty() && req->generation.grammar.empty()) {
        const size_t tail = std::min<size_t>(req->prompt.size(), 12);
        thinking_open = ends_inside_thinking(
            e_.tokenizer->decode(std::vector<TokenId>(req->prompt.end() - static_cast<std::ptrdiff_t>(tail), req->prompt.end()), true));
    }
    if (!req->generation.grammar.empty()) {
        // Compiled once per text: a server answers many requests with the same schema.
        if (auto hit = grammars_.find(req->generation.grammar); hit != grammars_.end()) {
            grammar = hit->second;
        } else if (auto g = parse_grammar(req->generation.grammar); g.ok()) {
            grammar = std::make_shared<const Grammar>(std::move(*g));
            if (grammars_.size() >= 16) grammars_.clear();
            grammars_.emplace(req->generation.grammar, grammar);
        } else {
            bad_grammar = g.status();
        }
        if (grammar && !token_trie_) token_trie_ = std::make_shared<const TokenTrie>(*e_.tokenizer);
    }
    LiveSample* first = nullptr;
    for (int32_t i = 0; i < n_samples; ++i) {
        completions.push_back(std::make_unique<LiveSample>(req, s.on_event, s.handle, i));
        LiveSample& c = *completions.back();
        c.arrival = *req->arrival;
        c.seq = req->conversation ? Engine::Impl::kChatSequence : next_seq_++;
        c.tokens = req->prompt;
        c.n_prompt = static_cast<int32_t>(req->prompt.size());
        c.metrics.kv_bytes_allocated = e_.kv->usage().bytes_allocated;
        for (TokenId t : req->prompt) c.sampler.accept(t);
        const GenerationRequest& g = req->generation;
        Status bad;
        if (req->prompt.empty()) bad = error(StatusCode::invalid_argument, "the prompt is empty");
        else if (req->n_samples < 1) bad = error(StatusCode::invalid_argument, "n_samples must be at least 1 (got " + std::to_string(req->n_samples) + ")");
        else if (g.max_tokens < 0) bad = error(StatusCode::invalid_argument, "max_tokens must not be negative");
        else if (req->conversation && conversation_busy_) bad = error(StatusCode::unavailable, "the conversation is busy with another request");
        else if (Status spec = check_speculation(*req); !spec.ok()) bad = spec;
        else if (!bad_grammar.ok()) bad = bad_grammar;
        else if (bounded && static_cast<int64_t>(req->prompt.size()) + (g.max_tokens > 0 ? 1 : 0) > e_.n_ctx)
            bad = error(StatusCode::out_of_range, "the prompt has " + std::to_string(req->prompt.size()) + " tokens but the context holds " +
                                                       std::to_string(e_.n_ctx) + "; shorten it or raise the context length");
        else
            for (TokenId t : req->prompt)
                if (t < 0 || t >= e_.info.n_vocab) {
                    bad = error(StatusCode::invalid_argument, "token id " + std::to_string(t) + " is outside the vocabulary");
                    break;
                }
        if (!bad.ok()) {
            fail(c, bad);
            continue;
        }
        if (req->conversation) conversation_busy_ = c.owns_conversation = true;
        if (grammar) c.grammar = std::make_unique<GrammarMatcher>(grammar, token_trie_);
        c.answer_reader = std::make_unique<ChatReplyStream>(ChatFormat{}, false, thinking_open);
        if (g.max_tokens == 0 && !runs_prompt_only) {
            finish(c, StopReason::max_tokens);
            continue;
        }
        if (forks && first) {
            first->forks.push_back(&c);
            continue;
        }
        c.sched = sched_->add(static_cast<int32_t>(c.tokens.size()));
        by_sched_.push_back(&c);
        if (!first) first = &c;
    }
}

// Admission asks the pool for room: the first chunk plus a block for each running sequence.
int32_t StepLoop::admit(int32_t id, int32_t n_first) {
    LiveSample& c = *by_sched_[static_cast<size_t>(id)];
    const int64_t block = e_.kv->n_tokens_per_block();
    if (sched_->n_running() > 0 && e_.kv->n_free_tokens() < n_first + block * (sched_->n_running() + 1)) return -1;
    if (c.scheduled_ms < 0) c.scheduled_ms = since(c.arrival);
    int32_t cached = 0;
    if (c.req->conversation) {
        // Reuse the longest cached prefix the variant can keep; at least one token must run to
        // produce logits. A new conversation may still find its first blocks (a system prompt,
        // an edited turn's history) cached from a freed one.
        const std::span<const TokenId> have = e_.kv->tokens(c.seq);
        size_t reuse = 0;
        while (reuse < have.size() && reuse < c.tokens.size() && have[reuse] == c.tokens[reuse]) ++reuse;
        if (reuse == c.tokens.size()) --reuse;
        cached = e_.kv->keep_prefix(c.seq, static_cast<int32_t>(reuse));
        if (cached == 0 && c.req->generation.max_tokens > 0 && !c.req->prompt_logits) cached = e_.kv->adopt_cached_prefix(c.seq, c.tokens);
    } else if (!c.req->prompt_logits) {   // a cached prefix has no logits to report
        cached = e_.kv->adopt_cached_prefix(c.seq, c.tokens);
    }
    if (c.token_ms.empty()) {
        c.metrics.n_prompt_cached = std::max(c.metrics.n_prompt_cached, cached);
        counters_.prefix_cache_queries += static_cast<int64_t>(c.tokens.size());
        counters_.prefix_cache_hits += cached;
    }
    return cached;
}

// A token for `c` from `logits`: stream it, then stop or queue it to run.
void StepLoop::take_token(LiveSample& c, std::span<const float> logits, std::span<const TopLogit> top) {
    if (c.req->generation.max_tokens == 0) return finish(c, StopReason::max_tokens);   // a prompt run for its cache or logits
    const auto too_big = [] {
        return error(StatusCode::resource_exhausted, "the grammar keeps too many parses or states alive to follow (an ambiguous or "
                                                     "deeply nested grammar); simplify it");
    };
    if (c.grammar && c.grammar->dead())   // matched in full and its end token passed (ignore_eos)
        return c.grammar->overflowed() ? fail(c, too_big()) : finish(c, StopReason::end_of_generation);
    // The request's logit_bias shapes the row first (top logits are read only when it has none).
    const std::span<const LogitBias> bias = c.req->generation.sampling.logit_bias;
    TokenId token = top.empty() ? c.sampler.sample(mask_logits(logits, bias, nullptr, masked_)) : c.sampler.sample_top(top);
    if (c.grammar) {
        // The draw stands when the grammar allows it; otherwise the row is drawn again with
        // everything it refuses masked out, as llama.cpp does. With plain temperature or greedy
        // sampling that is the distribution masking first gives; under top-k/top-p/min-p the
        // truncation comes before the mask, so the allowed tokens' shares can differ from it.
        if (!c.grammar->allows(token)) {
            int32_t n_allowed = 0;
            const std::span<const float> masked = mask_logits(logits, bias, c.grammar.get(), masked_, &n_allowed);
            if (c.grammar->overflowed()) return fail(c, too_big());
            if (n_allowed == 0) return fail(c, error(StatusCode::unsupported, "no token of this vocabulary continues the grammar here"));
            token = c.sampler.sample(masked);
        }
        c.grammar->accept(token);
        if (c.grammar->overflowed()) return fail(c, too_big());
    }
    c.sampler.accept(token);
    if (deliver(c, token, logits)) queue_next(c);
}

int32_t StepLoop::top_logits_for(const LiveSample& c) const {
    const EngineRequest& r = *c.req;
    if (r.generation.token_logits || r.top_logprobs >= 0 || r.generation.max_tokens == 0 || c.grammar ||
        !r.generation.sampling.logit_bias.empty())
        return 0;
    return c.sampler.top_logits_needed(e_.info.n_vocab);
}

void StepLoop::queue_next(LiveSample& c) {
    sched_->append_token(c.sched);
    if (c.req->generation.speculation.kind != DraftKind::off && !c.grammar) propose_drafts(c);
}

bool StepLoop::deliver(LiveSample& c, TokenId token, std::span<const float> logits) {
    const GenerationRequest& g = c.req->generation;
    c.tokens.push_back(token);
    c.token_ms.push_back(since(c.arrival));
    ++counters_.n_generation_tokens;
    // An end-of-generation token is never text; other control tokens are when asked for.
    const bool as_text = g.render_special && !e_.tokenizer->is_eog(token);
    const std::string piece = e_.tokenizer->token_to_piece(token, as_text);
    if (c.answer_reader && !c.first_answer_ms) {
        const ChatReply r = c.answer_reader->push(piece);
        if (r.content.find_first_not_of(" \n\t\r") != std::string::npos) c.first_answer_ms = c.token_ms.back();
    }
    const bool stop_string = c.filter.push(c.utf8.push(piece));
    RequestEvent ev;
    ev.kind = RequestEvent::Kind::token;
    ev.token = token;
    ev.index = static_cast<int32_t>(c.token_ms.size()) - 1;
    ev.n_context = static_cast<int32_t>(c.tokens.size());
    ev.logits = logits;
    if (c.req->top_logprobs >= 0) logprobs(logits, token, c.req->top_logprobs, ev);
    ev.text = std::move(c.shown);
    c.shown.clear();
    const KvUsage pool = e_.kv->usage();
    ev.kv_bytes_in_use = pool.bytes_in_use;
    ev.kv_bytes_full = pool.bytes_full;
    ev.kv_tokens = e_.kv->n_tokens(c.seq);
    emit(c, ev);
    if (c.done) return false;   // cancelled from its own callback
    const int32_t n_out = static_cast<int32_t>(c.tokens.size()) - c.n_prompt;
    std::optional<StopReason> stop;
    if (!g.ignore_eos && e_.tokenizer->is_eog(token)) stop = StopReason::end_of_generation;
    else if (stop_string) stop = StopReason::stop_string;
    else if (n_out >= g.max_tokens) stop = StopReason::max_tokens;
    else if (!e_.kv->unbounded_context() && static_cast<int64_t>(c.tokens.size()) > e_.n_ctx) stop = StopReason::context_full;
    if (!stop) return true;
    finish(c, *stop);
    return false;
}

// Takes `c` out of the scheduler and the cache; the conversation's sequence stays, holding
// every token that ran.
void StepLoop::release(LiveSample& c) {
    c.done = true;
    if (c.sched >= 0) {
        sched_->finish(c.sched);
        by_sched_[static_cast<size_t>(c.sched)] = nullptr;
    }
    free_draft_sequence(c);
    if (c.owns_conversation) {
        // A verification step may have cached accepted drafts past where the reply stopped.
        if (e_.kv->n_tokens(c.seq) > static_cast<int32_t>(c.tokens.size())) e_.kv->keep_prefix(c.seq, static_cast<int32_t>(c.tokens.size()));
        conversation_busy_ = false;
    } else if (!c.req->conversation) {
        e_.kv->free(c.seq);
    }
    auto& all = live_[c.handle];
    if (std::all_of(all.begin(), all.end(), [](const auto& x) { return x->done; })) ended_.push_back(c.handle);
}

void StepLoop::finish(LiveSample& c, StopReason why) {
    if (c.done) return;
    RequestMetrics& m = c.metrics;
    const KvUsage seq = e_.kv->usage(c.seq);
    m.kv_bytes = seq.bytes_in_use;
    m.kv_bytes_full = seq.bytes_full;
    m.kv_bytes_read_per_token = seq.bytes_read_last_step;
    m.n_context_tokens = seq.n_tokens;
    m.n_preemptions = c.sched >= 0 ? sched_->n_preemptions(c.sched) : 0;
    release(c);
    if (why != StopReason::stop_string) {
        c.filter.push(c.utf8.flush());
        c.filter.finish();
    }
    m.n_prompt_tokens = c.n_prompt;
    m.n_output_tokens = static_cast<int32_t>(c.tokens.size()) - c.n_prompt;
    m.queue_ms = c.scheduled_ms < 0 ? 0 : c.scheduled_ms;
    m.prefill_ms = c.prefill_ms;
    if (!c.token_ms.empty()) {
        m.ttft_ms = c.token_ms.front();
        m.first_answer_ms = c.first_answer_ms;
        m.e2e_ms = c.token_ms.back();
        for (size_t i = 1; i < c.token_ms.size(); ++i) m.itl_ms.push_back(c.token_ms[i] - c.token_ms[i - 1]);
        m.itl = latency_stats(m.itl_ms);
        if (c.token_ms.size() > 1) m.tpot_ms = (m.e2e_ms - m.ttft_ms) / static_cast<double>(c.token_ms.size() - 1);
    } else {
        m.e2e_ms = since(c.arrival);
    }
    ++counters_.n_requests_finished;
    RequestEvent ev;
    ev.kind = RequestEvent::Kind::finished;
    ev.text = c.filter.text();
    ev.tokens.assign(c.tokens.begin() + c.n_prompt, c.tokens.end());
    ev.stop_reason = why;
    ev.metrics = m;
    emit(c, ev);
    // Samples still waiting on this prompt (cancelled before it ran) end with it.
    for (LiveSample* f : c.forks) finish(*f, why);
    c.forks.clear();
}

void StepLoop::fail(LiveSample& c, Status why) {
    if (c.done) return;
    release(c);
    ++counters_.n_requests_failed;
    RequestEvent ev;
    ev.kind = RequestEvent::Kind::failed;
    ev.status = std::move(why);
    emit(c, ev);
    // Samples waiting on this prompt run it themselves.
    for (LiveSample* f : c.forks) {
        if (f->done) continue;
        f->sched = sched_->add(static_cast<int32_t>(f->tokens.size()));
        by_sched_.push_back(f);
    }
    c.forks.clear();
}

StepReport StepLoop::step() {
    take_inbox();
    StepReport report;
    auto finish_report = [&] {
        for (RequestHandle h : ended_) live_.erase(h);
        ended_.clear();
        report.n_running = sched_->n_running();
        report.n_waiting = sched_->n_waiting();
        const KvUsage pool = e_.kv->usage();
        report.kv_bytes_in_use = pool.bytes_in_use;
        report.kv_bytes_allocated = pool.bytes_allocated;
        return report;
    };
    if (sched_->idle()) return finish_report();
    const std::vector<StepItem> items = sched_->plan([this](int32_t id, int32_t n) { return admit(id, n); },
                                                     costs_->prompt_budget(options_.max_step_ms, sched_->n_decoding()));
    if (items.empty()) return finish_report();
    std::vector<BatchSequence> batch;
    std::vector<bool> verifying;   // a decode carrying drafts: every row's logits, then verification
    for (const StepItem& it : items) {
        LiveSample& c = *by_sched_[static_cast<size_t>(it.request)];
        const int32_t done = sched_->n_cached(it.request);
        if (c.prefill_start_ms < 0) c.prefill_start_ms = since(c.arrival);
        verifying.push_back(c.n_drafts > 0 && sched_->n_draft(it.request) > 0);
        const bool all_logits = verifying.back() || (c.req->prompt_logits && done < c.n_prompt);
        batch.push_back({c.seq, std::span(c.tokens).subspan(static_cast<size_t>(done), static_cast<size_t>(it.n_tokens)), it.completes,
                         all_logits, std::max(0, done + it.n_tokens - std::max(done, c.n_prompt)),
                         it.completes && !all_logits ? top_logits_for(c) : 0});
    }
    const auto t_step = Clock::now();
    bool no_kv_room = false;
    const Status st = e_.model->forward_batch(batch, *e_.kv, logits_, *e_.pool, &top_logits_, &no_kv_room);
    if (!st.ok()) {
        if (no_kv_room) {
            // No KV room: pause the youngest and recompute it later; alone, it cannot fit.
            const int32_t victim = sched_->preempt_youngest();
            if (victim >= 0) {
                LiveSample& v = *by_sched_[static_cast<size_t>(victim)];
                drop_drafts(v);
                e_.kv->free(v.seq);
                ++report.n_preemptions;
                ++counters_.n_preemptions;
            } else {
                LiveSample& c = *by_sched_[static_cast<size_t>(items.front().request)];
                // A conversation whose reply has begun ends it there and keeps it.
                if (c.req->conversation && !c.token_ms.empty()) finish(c, StopReason::context_full);
                else fail(c, st);
            }
            return finish_report();
        }
        for (const StepItem& it : items)
            if (LiveSample* c = by_sched_[static_cast<size_t>(it.request)]) fail(*c, st);
        return finish_report();
    }
    const double step_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_step).count();
    report.ran = true;
    int32_t n_prompt_tokens = 0;
    for (size_t i = 0; i < items.size(); ++i)
        n_prompt_tokens += !verifying[i] && (items[i].n_tokens > 1 || !items[i].completes) ? items[i].n_tokens : 0;
    costs_->observe(step_ms, n_prompt_tokens);
    for (const StepItem& it : items) {
        report.n_step_tokens += it.n_tokens;
        LiveSample& c = *by_sched_[static_cast<size_t>(it.request)];
        const int32_t done = sched_->n_cached(it.request);
        if (done < c.n_prompt) counters_.n_prompt_tokens += std::min(c.n_prompt - done, it.n_tokens);
    }
    sched_->absorb(items);
    e_.note_step(std::all_of(items.begin(), items.end(), [](const StepItem& it) { return it.n_tokens == 1; }));
    const uint64_t in_use = e_.kv->usage().bytes_in_use;
    for (const StepItem& it : items) {
        LiveSample& c = *by_sched_[static_cast<size_t>(it.request)];
        c.metrics.kv_bytes_peak = std::max(c.metrics.kv_bytes_peak, in_use);
        if (it.completes && c.token_ms.empty()) c.prefill_ms = since(c.arrival) - c.prefill_start_ms;
    }
    // The logits rows in item order: every row of a sequence that asked for its prompt's, else
    // one row for each sequence that completes; the best logits alone of the sequences that
    // asked for those, k a row (the batch's largest top_logits).
    const size_t n_vocab = static_cast<size_t>(e_.info.n_vocab);
    size_t n_top = 0;
    for (const BatchSequence& b : batch) n_top += b.top_logits > 0;
    const size_t k = n_top > 0 ? top_logits_.size() / n_top : 0;
    size_t row = 0, top_row = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        const StepItem& it = items[i];
        LiveSample* cp = by_sched_[static_cast<size_t>(it.request)];
        std::span<const float> lg;
        std::span<const TopLogit> best;
        if (verifying[i]) {
            const int32_t n_rows = it.n_tokens;
            if (cp && !cp->done) verify_drafts(*cp, logits_.data() + row * n_vocab, n_rows);
            row += static_cast<size_t>(n_rows);
            continue;
        }
        if (batch[i].all_logits) {
            const size_t n_rows = batch[i].tokens.size();
            if (cp && !cp->done) {
                RequestEvent ev;
                ev.kind = RequestEvent::Kind::prompt_logits;
                ev.index = static_cast<int32_t>(batch[i].tokens.data() - cp->tokens.data());   // the rows' first position
                ev.logits = std::span<const float>(logits_.data() + row * n_vocab, n_rows * n_vocab);
                emit(*cp, ev);
            }
            lg = std::span<const float>(logits_.data() + (row + n_rows - 1) * n_vocab, n_vocab);
            row += n_rows;
        } else if (batch[i].top_logits > 0) {
            best = std::span<const TopLogit>(top_logits_.data() + (top_row++) * k, static_cast<size_t>(batch[i].top_logits));
        } else if (it.completes) {
            lg = std::span<const float>(logits_.data() + (row++) * n_vocab, n_vocab);
        }
        if (!it.completes || !cp || cp->done) continue;
        LiveSample& c = *cp;
        // The prompt has run: its other samples start from a copy-on-write fork of it.
        for (LiveSample* f : c.forks) {
            if (f->done) continue;
            if (!e_.kv->fork(c.seq, f->seq).ok()) {
                f->sched = sched_->add(static_cast<int32_t>(f->tokens.size()));   // runs its own prompt
                by_sched_.push_back(f);
                continue;
            }
            f->sched = sched_->add_running(static_cast<int32_t>(f->tokens.size()));
            by_sched_.push_back(f);
            f->scheduled_ms = c.scheduled_ms;
            f->prefill_ms = c.prefill_ms;
            f->metrics.n_prompt_cached = f->n_prompt;
            f->metrics.kv_bytes_peak = in_use;
            take_token(*f, lg, best);
        }
        c.forks.clear();
        take_token(c, lg, best);
    }
    return finish_report();
}

}  // namespace workbench
