// Measurements built on the engine API, shared by the CLI (eval, bench) and the GUI (Compare's
// quality column, the Benchmark page): text quality against a baseline configuration, one point
// of the batch throughput curve, and llama-bench's pp/tg speed tests. Each runs on the calling thread (the
// engine's owner), reports progress through a callback and stops early on `cancel`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "workbench/engine.h"

namespace workbench {

// progress(done, total): windows scored, runs finished, ...
using ProgressCallback = std::function<void(int64_t done, int64_t total)>;

struct QualityOptions {
    int32_t n_ctx = 512;          // window length; the second half of each window is scored
    int32_t max_windows = 0;      // 0: the whole text
};

struct QualityReport {
    int64_t n_tokens_scored = 0;
    int32_t n_windows = 0;
    double perplexity = 0;          // under `engine`
    double perplexity_baseline = 0; // under `baseline`
    double delta_ppl_pct = 0;       // (ppl / ppl_baseline − 1) · 100
    double kl_mean = 0;             // mean KL(baseline ‖ engine) per scored token
    double top1_agreement = 0;      // share of scored tokens whose argmax agrees
    uint64_t kv_bytes_peak = 0;     // `engine`'s KV at a window's end, at most
    uint64_t kv_bytes_full = 0;     // what full attention would hold there
};

// Perplexity of `tokens` under `engine`, and KL / top-1 against `baseline` (the same model with
// full attention and f16 KV, say), window by window with each window from an empty cache, as
// llama-perplexity --kl-divergence does. Both engines' caches are reset. Errors: invalid_argument
// when the text is shorter than one window (names both lengths); cancelled; the engines' errors.
Result<QualityReport> evaluate_quality(Engine& engine, Engine& baseline, const std::vector<TokenId>& tokens,
                                       const QualityOptions& options, const ProgressCallback& progress = {},
                                       const std::atomic<bool>* cancel = nullptr);

// Full attention's side of evaluate_quality when many configurations are scored on one text
// (a sweep, a calibration): the baseline engine runs beside the first configuration, and its
// logits on the scored positions are kept when they fit in max_bytes (windows · n_ctx/2 ·
// n_vocab · 4), so each later configuration on the same windows costs one pass over the text,
// not two, with the same figures. Another text or window runs the engine again and keeps that.
class QualityBaseline {
public:
    explicit QualityBaseline(Engine& engine, uint64_t max_bytes = uint64_t{1} << 30) : engine_(engine), max_bytes_(max_bytes) {}
    Engine& engine() { return engine_; }
    bool holds_logits() const { return !logits_.empty(); }

private:
    friend Result<QualityReport> evaluate_quality(Engine&, QualityBaseline&, const std::vector<TokenId>&, const QualityOptions&,
                                                  const ProgressCallback&, const std::atomic<bool>*);
    Engine& engine_;
    uint64_t max_bytes_;
    int32_t window_ = 0;             // the n_ctx and tokens the kept logits were computed on
    std::vector<TokenId> windows_;
    std::vector<float> logits_;      // per window, positions n_ctx/2 … n_ctx−2, n_vocab floats each
};
Result<QualityReport> evaluate_quality(Engine& engine, QualityBaseline& baseline, const std::vector<TokenId>& tokens,
                                       const QualityOptions& options, const ProgressCallback& progress = {},
                                       const std::atomic<bool>* cancel = nullptr);

// The speed at a context: window `n_windows` of `text` (the ctx tokens ending at n_windows · ctx,
// plus the next one) run whole from an empty cache, then n_decode greedy tokens past it; the run's
// metrics (prefill and decode speed, KV held and read). Errors: invalid_argument when the text has
// no such window; the engine's.
Result<GenerationMetrics> run_after_window(Engine& engine, const std::vector<TokenId>& text, int32_t n_windows, int32_t ctx,
                                           int32_t n_decode);

// One point of the throughput-vs-batch curve, in llama-batched-bench's phases: `batch` prompts
// of `n_prompt` random tokens prefilled, then all decode `n_gen` tokens together. The engine's KV
// pool must hold batch · (n_prompt + n_gen + 1) tokens (EngineConfig::n_seq_max, n_ctx): a point
// that would preempt is an error (resource_exhausted) rather than a distorted figure.
struct ThroughputPoint {
    int32_t batch = 0, n_prompt = 0, n_gen = 0;
    double pp_tok_s = 0;            // batch · n_prompt / prefill time
    double tg_tok_s = 0;            // batch · n_gen / decode time: all sequences together
    double decode_step_ms_p50 = 0;  // median decode step: each sequence's time per output token
    double total_tok_s = 0;         // batch · (n_prompt + n_gen) / whole time
    uint64_t kv_bytes_peak = 0;
    int32_t max_batch_tokens = 0;   // tokens one step carried at most (prompt chunks and decodes)
};
Result<ThroughputPoint> measure_batch_throughput(Engine& engine, int32_t batch, int32_t n_prompt, int32_t n_gen,
                                                 uint32_t seed = 1234, const std::atomic<bool>* cancel = nullptr);

// llama-bench's pp and tg tests: one warm-up, then `repetitions` timed runs, each from an empty
// cache with fresh random tokens — pp<N>: a prompt of N tokens in one step; tg<N>: N single-token
// steps; with n_depth (llama-bench's -d) each run first fills the cache with that many tokens,
// untimed, so the test runs at that context. Tokens/s per run, their mean and sample standard
// deviation.
enum class SpeedTestKind { prompt, generation };
struct SpeedTest {
    std::string test;                   // "pp512", "tg128"
    int32_t n_prompt = 0, n_gen = 0;    // as llama-bench reports them
    int32_t n_depth = 0;
    std::vector<double> samples_tok_s;
    double avg_tok_s = 0, stddev_tok_s = 0;
};
// progress(done, total) after each run (the warm-up counts). Errors: invalid_argument (no tokens
// or repetitions, or depth + tokens more than the context holds), cancelled, the engine's errors.
Result<SpeedTest> measure_speed(Engine& engine, SpeedTestKind kind, int32_t n_tokens, int32_t repetitions,
                                uint32_t seed = 1234, const ProgressCallback& progress = {},
                                const std::atomic<bool>* cancel = nullptr, int32_t n_depth = 0);

}  // namespace workbench
