// The shared measurements: windowed perplexity with KL/top-1 against a baseline engine, and
// one point of the batch throughput curve through run_batch's benchmark phases.
#include "workbench/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <span>

namespace workbench {
namespace {

constexpr size_t kChunk = 256;   // tokens per eval_logits call: bounds the logits held at once

// log-softmax of one row, in double for the sums.
void log_softmax(const float* logits, int64_t n, std::vector<double>& out) {
    out.resize(static_cast<size_t>(n));
    const float mx = *std::max_element(logits, logits + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
    const double lse = mx + std::log(sum);
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = logits[i] - lse;
}

// Windows scored: whole windows of the text, at most options.max_windows (0: all).
size_t scored_window_count(const std::vector<TokenId>& tokens, const QualityOptions& options) {
    size_t n = options.n_ctx > 0 ? tokens.size() / static_cast<size_t>(options.n_ctx) : 0;
    if (options.max_windows > 0) n = std::min(n, static_cast<size_t>(options.max_windows));
    return n;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The scoring loop behind both evaluate_quality forms. The baseline's rows come from `live` run
// beside the engine (appended to `keep` when given), or from `kept` (rows recorded earlier, in the
// order `keep` writes them); live == &engine scores the engine against itself.
Result<QualityReport> score_windows(Engine& engine, Engine* live, const float* kept, std::vector<float>* keep,
                                    const std::vector<TokenId>& tokens, const QualityOptions& options,
                                    const ProgressCallback& progress, const std::atomic<bool>* cancel) {
    const bool same = live == &engine;
    const size_t window = static_cast<size_t>(options.n_ctx);
    const size_t n_windows = scored_window_count(tokens, options);
    const int64_t n_vocab = engine.model_info().n_vocab;
    const size_t rows_per_window = window - 1 - window / 2;
    double nll = 0, nll_base = 0, kl_sum = 0;
    int64_t n = 0, top1_same = 0;
    QualityReport r;
    std::vector<double> lp, lp_base;
    for (size_t w = 0; w < n_windows; ++w) {
        if (cancel && cancel->load(std::memory_order_relaxed)) return error(StatusCode::cancelled, "evaluation cancelled");
        const size_t first = w * window;
        engine.reset();
        if (live && !same) live->reset();
        // The whole chunks before the scored half in one call, without the output head: the step
        // loop cuts it into the same steps, and a press reads it as one context.
        const size_t unscored = window / 2 / kChunk * kChunk;
        if (unscored > 0) {
            const std::vector<TokenId> context(tokens.begin() + static_cast<std::ptrdiff_t>(first),
                                               tokens.begin() + static_cast<std::ptrdiff_t>(first + unscored));
            WB_RETURN_IF_ERROR(engine.eval(context));
            if (live && !same) WB_RETURN_IF_ERROR(live->eval(context));
        }
        for (size_t c0 = unscored; c0 < window; c0 += kChunk) {
            const size_t cn = std::min(kChunk, window - c0);
            const std::vector<TokenId> chunk(tokens.begin() + static_cast<std::ptrdiff_t>(first + c0),
                                             tokens.begin() + static_cast<std::ptrdiff_t>(first + c0 + cn));
            WB_ASSIGN_OR_RETURN(const std::vector<float> logits, engine.eval_logits(chunk));
            std::vector<float> base_logits;
            if (live && !same) {
                WB_ASSIGN_OR_RETURN(base_logits, live->eval_logits(chunk));
            }
            // Position i predicts token i + 1; the second half of the window is scored.
            for (size_t i = std::max(c0, window / 2); i < c0 + cn && i + 1 < window; ++i) {
                const float* row = logits.data() + (i - c0) * n_vocab;
                const auto next = static_cast<size_t>(tokens[first + i + 1]);
                log_softmax(row, n_vocab, lp);
                nll -= lp[next];
                ++n;
                if (same) {
                    nll_base -= lp[next];
                    ++top1_same;
                    continue;
                }
                const float* brow = kept ? kept + (w * rows_per_window + i - window / 2) * static_cast<size_t>(n_vocab)
                                         : base_logits.data() + (i - c0) * n_vocab;
                if (keep) keep->insert(keep->end(), brow, brow + n_vocab);
                log_softmax(brow, n_vocab, lp_base);
                nll_base -= lp_base[next];
                double kl = 0;
                for (int64_t v = 0; v < n_vocab; ++v)
                    kl += std::exp(lp_base[static_cast<size_t>(v)]) * (lp_base[static_cast<size_t>(v)] - lp[static_cast<size_t>(v)]);
                kl_sum += std::max(0.0, kl);
                top1_same += (std::max_element(row, row + n_vocab) - row) == (std::max_element(brow, brow + n_vocab) - brow);
            }
        }
        const KvUsageReport usage = engine.kv_usage();
        r.kv_bytes_peak = std::max(r.kv_bytes_peak, usage.bytes_peak);
        r.kv_bytes_full = std::max(r.kv_bytes_full, usage.bytes_full);
        if (progress) progress(static_cast<int64_t>(w + 1), static_cast<int64_t>(n_windows));
    }
    const double dn = static_cast<double>(n);
    r.n_tokens_scored = n;
    r.n_windows = static_cast<int32_t>(n_windows);
    r.perplexity = std::exp(nll / dn);
    r.perplexity_baseline = std::exp(nll_base / dn);
    r.delta_ppl_pct = (r.perplexity / r.perplexity_baseline - 1.0) * 100.0;
    r.kl_mean = kl_sum / dn;
    r.top1_agreement = static_cast<double>(top1_same) / dn;
    return r;
}

Status check_windows(const Engine& engine, const Engine& baseline, const std::vector<TokenId>& tokens, const QualityOptions& options) {
    if (options.n_ctx < 4)
        return error(StatusCode::invalid_argument, "evaluation window " + std::to_string(options.n_ctx) + " is too short (at least 4 tokens)");
    if (scored_window_count(tokens, options) == 0)
        return error(StatusCode::invalid_argument, "the text has " + std::to_string(tokens.size()) +
                                                       " tokens, fewer than one window of " + std::to_string(options.n_ctx));
    if (baseline.model_info().n_vocab != engine.model_info().n_vocab)
        return error(StatusCode::invalid_argument, "the baseline's vocabulary differs from the model's: compare one model's configurations");
    return Status::ok_status();
}

}  // namespace

Result<QualityReport> evaluate_quality(Engine& engine, Engine& baseline, const std::vector<TokenId>& tokens,
                                       const QualityOptions& options, const ProgressCallback& progress,
                                       const std::atomic<bool>* cancel) {
    WB_RETURN_IF_ERROR(check_windows(engine, baseline, tokens, options));
    return score_windows(engine, &baseline, nullptr, nullptr, tokens, options, progress, cancel);
}

Result<QualityReport> evaluate_quality(Engine& engine, QualityBaseline& baseline, const std::vector<TokenId>& tokens,
                                       const QualityOptions& options, const ProgressCallback& progress,
                                       const std::atomic<bool>* cancel) {
    WB_RETURN_IF_ERROR(check_windows(engine, baseline.engine_, tokens, options));
    const size_t window = static_cast<size_t>(options.n_ctx), n_windows = scored_window_count(tokens, options);
    const std::span<const TokenId> windows(tokens.data(), n_windows * window);
    if (&engine != &baseline.engine_ && baseline.window_ == options.n_ctx && std::ranges::equal(windows, baseline.windows_))
        return score_windows(engine, nullptr, baseline.logits_.data(), nullptr, tokens, options, progress, cancel);
    const uint64_t bytes = static_cast<uint64_t>(n_windows) * (window - 1 - window / 2) *
                           static_cast<uint64_t>(engine.model_info().n_vocab) * sizeof(float);
    if (&engine == &baseline.engine_ || bytes > baseline.max_bytes_)
        return score_windows(engine, &baseline.engine_, nullptr, nullptr, tokens, options, progress, cancel);
    baseline.window_ = 0;
    baseline.windows_.clear();
    baseline.logits_.clear();
    baseline.logits_.reserve(static_cast<size_t>(bytes / sizeof(float)));
    auto r = score_windows(engine, &baseline.engine_, nullptr, &baseline.logits_, tokens, options, progress, cancel);
    if (!r.ok()) {
        baseline.logits_ = {};   // a cut-short pass keeps nothing
        return r;
    }
    baseline.window_ = options.n_ctx;
    baseline.windows_.assign(windows.begin(), windows.end());
    return r;
}

Result<GenerationMetrics> run_after_window(Engine& engine, const std::vector<TokenId>& text, int32_t n_windows, int32_t ctx,
                                           int32_t n_decode) {
    const size_t window = static_cast<size_t>(ctx), end = static_cast<size_t>(n_windows) * window;
    if (n_windows < 1 || ctx < 1 || end > text.size()) return error(StatusCode::invalid_argument, "no such window of the text");
    std::vector<TokenId> prompt(text.begin() + static_cast<std::ptrdiff_t>(end - window),
                                text.begin() + static_cast<std::ptrdiff_t>(std::min(end + 1, text.size())));
    GenerationRequest req;
    req.max_tokens = n_decode;
    req.ignore_eos = true;
    req.sampling.temperature = 0;
    // The window runs whole: its prefill speed is at this context, not a one-token step after the
    // blocks a quality evaluation left cached.
    engine.reset();
    engine.forget_cached_prompts();
    WB_ASSIGN_OR_RETURN(GenerationResult out, engine.generate_tokens(prompt, req));
    return out.metrics;
}

Result<ThroughputPoint> measure_batch_throughput(Engine& engine, int32_t batch, int32_t n_prompt, int32_t n_gen, uint32_t seed,
                                                 const std::atomic<bool>* cancel) {
    if (batch < 1 || n_prompt < 1 || n_gen < 0)
        return error(StatusCode::invalid_argument, "throughput: batch and n_prompt must be at least 1, n_gen at least 0 (got " +
                                                       std::to_string(batch) + ", " + std::to_string(n_prompt) + ", " + std::to_string(n_gen) + ")");
    std::mt19937 rng(seed);
    const int32_t n_vocab = engine.model_info().n_vocab;
    std::vector<BatchRequest> reqs(static_cast<size_t>(batch));
    for (auto& r : reqs) {
        r.prompt.resize(static_cast<size_t>(n_prompt));
        for (auto& t : r.prompt) t = static_cast<TokenId>(rng() % static_cast<unsigned>(n_vocab));
        r.generation.max_tokens = n_gen + 1;   // the first token comes from the prefill; n decode steps follow
        r.generation.ignore_eos = true;
        r.generation.sampling.temperature = 0;
    }
    BatchOptions o;
    o.max_running = batch;
    o.max_batch_tokens = std::max(512, batch);
    o.prefill_before_decode = true;
    std::vector<double> steps;
    double first_token_last = 0, last_token = 0;
    std::vector<bool> started(static_cast<size_t>(batch), false);
    const RequestEventCallback on_event = [&](const RequestEvent& ev) {
        if (ev.kind == RequestEvent::Kind::step) steps.push_back(ev.t_ms);
        if (ev.kind != RequestEvent::Kind::token) return;
        if (!started[static_cast<size_t>(ev.request)]) started[static_cast<size_t>(ev.request)] = true, first_token_last = ev.t_ms;
        last_token = ev.t_ms;
    };
    WB_ASSIGN_OR_RETURN(const BatchResult res, engine.run_batch(reqs, o, on_event, cancel));
    if (cancel && cancel->load()) return error(StatusCode::cancelled, "throughput measurement cancelled");
    for (const auto& c : res.completions)
        if (!c.ok) return error(StatusCode::internal, "throughput: a sequence failed: " + c.error);
    if (res.metrics.n_preemptions > 0)
        return error(StatusCode::resource_exhausted, "throughput: the KV pool ran out at batch " + std::to_string(batch) +
                                                         " (size the pool for batch · (prompt + generated) tokens)");
    ThroughputPoint p;
    p.batch = batch, p.n_prompt = n_prompt, p.n_gen = n_gen, p.max_batch_tokens = o.max_batch_tokens;
    const double t_pp = first_token_last / 1000.0, t_tg = (last_token - first_token_last) / 1000.0;
    if (t_pp > 0) p.pp_tok_s = static_cast<double>(batch) * n_prompt / t_pp;
    if (t_tg > 0) p.tg_tok_s = static_cast<double>(batch) * n_gen / t_tg;
    if (t_pp + t_tg > 0) p.total_tok_s = static_cast<double>(batch) * (n_prompt + n_gen) / (t_pp + t_tg);
    std::vector<double> decode_steps;
    for (size_t i = 1; i < steps.size(); ++i)
        if (steps[i - 1] >= first_token_last) decode_steps.push_back(steps[i] - steps[i - 1]);
    p.decode_step_ms_p50 = median(decode_steps);
    p.kv_bytes_peak = res.metrics.kv_bytes_peak;
    return p;
}

Result<SpeedTest> measure_speed(Engine& engine, SpeedTestKind kind, int32_t n_tokens, int32_t repetitions, uint32_t seed,
                                const ProgressCallback& progress, const std::atomic<bool>* cancel, int32_t n_depth) {
    const ModelInfo& info = engine.model_info();
    if (n_tokens < 1 || repetitions < 1 || n_depth < 0)
        return error(StatusCode::invalid_argument, "a speed test needs at least one token and one repetition, and a depth of 0 or more");
    if (static_cast<int64_t>(n_depth) + n_tokens + 1 > info.n_ctx)
        return error(StatusCode::invalid_argument, "a speed test of " + std::to_string(n_tokens) + " tokens at depth " +
                                                        std::to_string(n_depth) + " does not fit the " + std::to_string(info.n_ctx) +
                                                        "-token context");
    SpeedTest out;
    const bool prompt = kind == SpeedTestKind::prompt;
    out.test = (prompt ? "pp" : "tg") + std::to_string(n_tokens);
    (prompt ? out.n_prompt : out.n_gen) = n_tokens;
    out.n_depth = n_depth;
    std::mt19937 rng(seed);
    std::vector<TokenId> tokens(static_cast<size_t>(n_tokens)), depth(static_cast<size_t>(n_depth));
    for (int32_t run = -1; run < repetitions; ++run) {  // run −1: the warm-up
        if (cancel && cancel->load()) return error(StatusCode::cancelled, "speed test cancelled");
        engine.reset();
        if (n_depth > 0) {
            for (auto& t : depth) t = static_cast<TokenId>(rng() % static_cast<uint32_t>(info.n_vocab));
            WB_RETURN_IF_ERROR(engine.eval(depth));
        }
        for (auto& t : tokens) t = static_cast<TokenId>(rng() % static_cast<uint32_t>(info.n_vocab));
        const auto t0 = std::chrono::steady_clock::now();
        if (prompt) {
            WB_RETURN_IF_ERROR(engine.eval(tokens));
        } else {
            for (TokenId t : tokens) WB_RETURN_IF_ERROR(engine.eval({t}));
        }
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (run >= 0) out.samples_tok_s.push_back(static_cast<double>(n_tokens) / sec);
        if (progress) progress(run + 2, repetitions + 1);
    }
    const MeanStddev spread = mean_stddev(out.samples_tok_s);
    out.avg_tok_s = spread.mean;
    out.stddev_tok_s = spread.stddev;
    return out;
}

}  // namespace workbench
