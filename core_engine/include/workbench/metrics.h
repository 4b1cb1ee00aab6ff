// Measurements of one generation, as plain values. A figure that is undefined for a run (decode
// speed with a single generated token) is an empty optional, never NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace workbench {

// Mean and percentiles (linear interpolation, as numpy's default) of a set of latencies.
struct LatencyStats {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
    int64_t n = 0;
};
LatencyStats latency_stats(std::vector<double> values);

struct GenerationMetrics {
    int32_t n_prompt_tokens = 0;       // tokens in the prompt
    int32_t n_prompt_reused = 0;       // of those, already in the KV cache from an earlier turn
    int32_t n_generated = 0;           // tokens sampled
    double ttft_ms = 0;                // request start → first token sampled (includes prefill)
    // request start → the answer's first token, after the model's thinking (<think>…</think>);
    // empty when the reply was thinking only. Without thinking it equals ttft_ms.
    std::optional<double> first_answer_ms;
    double prefill_ms = 0;
    std::optional<double> prefill_tok_s;   // prefilled (not reused) tokens / prefill time
    std::optional<double> decode_tok_s;    // (n_generated − 1) / time from first to last token
    // Gaps between consecutive tokens: median, 90th and 99th percentiles (the loop's, RequestMetrics::itl).
    std::optional<double> itl_ms_p50, itl_ms_p90, itl_ms_p99;
    double total_ms = 0;
    uint64_t kv_bytes = 0;             // KV bytes in use at the end
    uint64_t kv_bytes_peak = 0;        // most KV bytes in use during the run
    uint64_t kv_bytes_allocated = 0;   // KV bytes reserved
    uint64_t kv_bytes_full = 0;        // what full attention at the configured KV dtype holds for the same tokens
    uint64_t kv_bytes_read_per_token = 0;  // what the last decode step's attention read, indexer included
    int32_t n_context_tokens = 0;      // tokens in the sequence at the end
    // Speculative decoding: tokens drafted and verified, of those accepted, and their ratio
    // (empty when nothing was drafted).
    int32_t n_draft_tokens = 0, n_accepted_tokens = 0;
    std::optional<double> acceptance_rate;
};

// One completion of a batch, with vLLM `bench serve`'s definitions. Times from its arrival.
struct RequestMetrics {
    int32_t n_prompt_tokens = 0;
    int32_t n_prompt_cached = 0;       // prompt tokens found in the cache (shared prefix, a fork)
    int32_t n_output_tokens = 0;
    double queue_ms = 0;               // arrival → first scheduled
    double ttft_ms = 0;                // arrival → first token (queueing included)
    std::optional<double> first_answer_ms;   // arrival → first token of the answer, after any thinking
    std::optional<double> tpot_ms;     // (e2e − ttft) / (n_output − 1)
    std::vector<double> itl_ms;        // every gap between consecutive tokens
    LatencyStats itl;                  // their statistics, computed once by the loop (n = 0: no gap)
    double e2e_ms = 0;                 // arrival → last token
    int32_t n_preemptions = 0;         // times it was paused for KV room and recomputed
    double prefill_ms = 0;             // first prompt step began → the step that completed the prompt ended
    // KV: the pool's bytes in use at most while it ran and reserved; its sequence at the end
    // (bytes held, what full attention would hold, what the last step's attention read, tokens).
    uint64_t kv_bytes_peak = 0, kv_bytes_allocated = 0;
    uint64_t kv_bytes = 0, kv_bytes_full = 0, kv_bytes_read_per_token = 0;
    int32_t n_context_tokens = 0;
    int32_t n_draft_tokens = 0, n_accepted_tokens = 0;   // speculative decoding: verified drafts, accepted ones
};

// One request's figures in the single-generation form (chat, run): derived from the loop's.
GenerationMetrics generation_metrics(const RequestMetrics& m);

// One part of a forward step on the roofline: operations (a multiply-add counts 2), the bytes
// that part had to read (weights once per step; KV entries once per step), and its time.
// Intensity = ops / bytes; achieved = ops / seconds.
struct RooflinePoint {
    double ops = 0, bytes = 0, seconds = 0;
};
// The matmuls (everything but attention: projections, MLP, output head), attention over the KV
// cache, and the indexer that chose what attention reads (top-k's block bounds, heavy's pooled
// keys; zero for variants without one), for one step of n_tokens query tokens.
struct StepRoofline {
    int64_t n_tokens = 0;
    RooflinePoint matmul, attention, index;
};

// Mean and sample standard deviation (n − 1; 0 for fewer than two values), as llama-bench
// reports repeated runs.
struct MeanStddev {
    double mean = 0, stddev = 0;
};
MeanStddev mean_stddev(const std::vector<double>& values);

// A whole batch.
struct BatchMetrics {
    int32_t n_completed = 0, n_failed = 0;
    int64_t n_prompt_tokens = 0, n_output_tokens = 0;
    double duration_ms = 0;
    double request_throughput = 0;     // completed requests / s
    double output_tok_s = 0;           // generated tokens / s
    double total_tok_s = 0;            // (prompt + generated tokens) / s
    LatencyStats ttft_ms, tpot_ms, itl_ms, e2e_ms;
    int32_t n_steps = 0, n_preemptions = 0, max_running = 0;
    uint64_t kv_bytes_peak = 0;
    int64_t n_draft_tokens = 0, n_accepted_tokens = 0;   // speculative decoding, over every completion
};

}  // namespace workbench

namespace workbench {

// Measures how fast `n_threads` threads can stream-read a buffer of `working_set_bytes` (best of
// up to `max_passes` passes within ~`budget_ms`, at least 3; GB/s = 1e9 bytes/s). Pick the working
// set of the workload being judged: the model's weight bytes tell whether decode streams from
// cache or from DRAM. Takes ~0.2–1 s with the defaults.
double measure_read_bandwidth_gb_s(uint64_t working_set_bytes, int n_threads, int max_passes = 12, int budget_ms = 400);

// The roofline's compute ceilings on `n_threads` threads (best of three ~0.1 s passes): fp32
// FMA and the AVX2 int8 dot product the quantized kernels use (a multiply-add counts 2 ops).
struct ComputePeaks {
    double fp32_gflop_s = 0;
    double int8_gop_s = 0;
};
ComputePeaks measure_compute_peaks(int n_threads);

}  // namespace workbench

namespace workbench {

// This process's resident memory in bytes (Linux /proc/self/statm), 0 where unknown.
uint64_t process_resident_bytes();

}  // namespace workbench
