// The generation loop: reuse the cached prefix, prefill the rest, then sample → stream → feed
// back one token at a time until a stop condition. Timing for the metrics is taken here.
#include <algorithm>
#include <chrono>

#include "engine/engine_impl.h"
#include "engine/stop_string_filter.h"
#include "sampling/sampler.h"

namespace workbench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Result<GenerationResult> Engine::generate(std::string_view prompt, const GenerationRequest& request,
                                          const TextCallback& on_text, const std::atomic<bool>* cancel, const TokenCallback& on_token) {
    return generate_tokens(tokenize(prompt, true, true), request, on_text, cancel, on_token);
}

Result<GenerationResult> Engine::chat(const std::vector<ChatMessage>& messages, const GenerationRequest& request,
                                      const TextCallback& on_text, const std::atomic<bool>* cancel, const TokenCallback& on_token) {
    return generate(render_chat(messages, true), request, on_text, cancel, on_token);
}

Result<GenerationResult> Engine::generate_tokens(const std::vector<TokenId>& prompt, const GenerationRequest& request,
                                                 const TextCallback& on_text, const std::atomic<bool>* cancel,
                                                 const TokenCallback& on_token) {
    Impl& e = *impl_;
    const auto t_start = Clock::now();
    if (prompt.empty()) return error(StatusCode::invalid_argument, "the prompt is empty");
    if (request.max_tokens < 0) return error(StatusCode::invalid_argument, "max_tokens must not be negative");
    const int32_t n_ctx = e.n_ctx;
    const bool bounded = !e.kv->unbounded_context();
    if (bounded && static_cast<int64_t>(prompt.size()) >= n_ctx)
        return error(StatusCode::out_of_range, "the prompt has " + std::to_string(prompt.size()) + " tokens but the context holds " +
                                                   std::to_string(n_ctx) + "; shorten it or raise the context length");

    // Reuse the longest cached prefix the variant can keep; at least one token must run to
    // produce logits.
    size_t reuse = 0;
    while (reuse < e.cached.size() && reuse < prompt.size() && e.cached[reuse] == prompt[reuse]) ++reuse;
    if (reuse == prompt.size()) --reuse;
    reuse = static_cast<size_t>(e.kv->keep_prefix(Impl::kChatSequence, static_cast<int32_t>(reuse)));
    // A new conversation may still find its first blocks (a system prompt, an edited turn's
    // history) cached from a freed one.
    if (reuse == 0) reuse = static_cast<size_t>(e.kv->adopt_cached_prefix(Impl::kChatSequence, prompt));
    e.cached.assign(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(reuse));

    GenerationResult result;
    GenerationMetrics& m = result.metrics;
    m.n_prompt_tokens = static_cast<int32_t>(prompt.size());
    m.n_prompt_reused = static_cast<int32_t>(reuse);
    m.kv_bytes_allocated = e.kv->usage().bytes_allocated;

    std::span<const TokenId> todo(prompt.data() + reuse, prompt.size() - reuse);
    const auto t_prefill = Clock::now();
    Status s = e.model->forward(todo, Impl::kChatSequence, *e.kv, false, e.logits, *e.pool);
    if (!s.ok()) {
        // Whole chunks that ran before the failure stay cached.
        e.cached.assign(prompt.begin(), prompt.begin() + e.kv->n_tokens(Impl::kChatSequence));
        return s;
    }
    e.cached.insert(e.cached.end(), todo.begin(), todo.end());
    e.note_step(todo.size() == 1);
    const auto t_prefilled = Clock::now();
    m.prefill_ms = ms_between(t_prefill, t_prefilled);
    if (m.prefill_ms > 0) m.prefill_tok_s = static_cast<double>(todo.size()) / (m.prefill_ms / 1000.0);
    m.kv_bytes_peak = e.kv->usage().bytes_in_use;

    Sampler sampler(request.sampling);
    for (TokenId t : prompt) sampler.accept(t);
    StopStringFilter filter(request.stop_strings, on_text);
    Utf8StreamDecoder utf8;
    std::vector<Clock::time_point> token_times;
    result.stop_reason = StopReason::max_tokens;

    for (int32_t i = 0; i < request.max_tokens; ++i) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            result.stop_reason = StopReason::cancelled;
            break;
        }
        const TokenId token = sampler.sample(e.logits);
        token_times.push_back(Clock::now());
        if (i == 0) m.ttft_ms = ms_between(t_start, token_times.back());
        sampler.accept(token);
        result.tokens.push_back(token);
        if (on_token)
            on_token({token, i, ms_between(t_start, token_times.back()), static_cast<int32_t>(e.cached.size()) + 1});
        if (!request.ignore_eos && e.tokenizer->is_eog(token)) {
            result.stop_reason = StopReason::end_of_generation;
            break;
        }
        if (filter.push(utf8.push(e.tokenizer->token_to_piece(token, false)))) {
            result.stop_reason = StopReason::stop_string;
            break;
        }
        if (i + 1 == request.max_tokens) break;  // no need to run the last token
        if (bounded && static_cast<int64_t>(e.cached.size()) + 1 > n_ctx) {
            result.stop_reason = StopReason::context_full;
            break;
        }
        std::span<const TokenId> one(&result.tokens.back(), 1);
        if (Status st = e.model->forward(one, Impl::kChatSequence, *e.kv, false, e.logits, *e.pool); !st.ok()) {
            if (st.code() != StatusCode::resource_exhausted && st.code() != StatusCode::out_of_range) return st;
            result.stop_reason = StopReason::context_full;  // the KV budget is spent: end the reply, keep it
            break;
        }
        e.cached.push_back(token);
        e.note_step(true);
        m.kv_bytes_peak = std::max(m.kv_bytes_peak, e.kv->usage().bytes_in_use);
    }
    if (result.stop_reason != StopReason::stop_string) {
        filter.push(utf8.flush());
        filter.finish();
    }
    result.text = filter.text();

    const auto t_end = Clock::now();
    m.n_generated = static_cast<int32_t>(result.tokens.size());
    m.total_ms = ms_between(t_start, t_end);
    if (token_times.size() >= 2) {
        const double decode_ms = ms_between(token_times.front(), token_times.back());
        if (decode_ms > 0) m.decode_tok_s = static_cast<double>(token_times.size() - 1) / (decode_ms / 1000.0);
        std::vector<double> gaps;
        for (size_t k = 1; k < token_times.size(); ++k) gaps.push_back(ms_between(token_times[k - 1], token_times[k]));
        m.itl_ms_p50 = median(gaps);
    }
    const KvUsage usage = e.kv->usage(Impl::kChatSequence);
    m.kv_bytes = usage.bytes_in_use;
    m.kv_bytes_full = usage.bytes_full;
    m.kv_bytes_read_per_token = usage.bytes_read_last_step;
    m.n_context_tokens = usage.n_tokens;
    return result;
}

Status Engine::eval(const std::vector<TokenId>& tokens) {
    std::vector<float> unused;
    return append(tokens, false, unused);
}

Result<std::vector<float>> Engine::eval_logits(const std::vector<TokenId>& tokens) {
    std::vector<float> out;
    WB_RETURN_IF_ERROR(append(tokens, true, out));
    return out;
}

Status Engine::append(const std::vector<TokenId>& tokens, bool all_logits, std::vector<float>& out) {
    Impl& e = *impl_;
    if (tokens.empty()) return Status::ok_status();
    if (!e.kv->unbounded_context() && e.cached.size() + tokens.size() > static_cast<size_t>(e.n_ctx))
        return error(StatusCode::out_of_range, std::to_string(e.cached.size()) + " tokens cached + " + std::to_string(tokens.size()) +
                                                   " new exceed the context length " + std::to_string(e.n_ctx));
    const Status s = e.model->forward(tokens, Impl::kChatSequence, *e.kv, all_logits, all_logits ? out : e.logits, *e.pool);
    const size_t ran = static_cast<size_t>(e.kv->n_tokens(Impl::kChatSequence)) - e.cached.size();
    e.cached.insert(e.cached.end(), tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(ran));
    return s;
}

Result<std::vector<float>> Engine::logits_all(const std::vector<TokenId>& tokens) {
    Impl& e = *impl_;
    reset();
    if (!e.kv->unbounded_context() && tokens.size() > static_cast<size_t>(e.n_ctx))
        return error(StatusCode::out_of_range, std::to_string(tokens.size()) + " tokens exceed the context length " + std::to_string(e.n_ctx));
    std::vector<float> out;
    const Status s = e.model->forward(tokens, Impl::kChatSequence, *e.kv, true, out, *e.pool);
    e.cached.assign(tokens.begin(), tokens.begin() + e.kv->n_tokens(Impl::kChatSequence));
    WB_RETURN_IF_ERROR(s);
    return out;
}

}  // namespace workbench
