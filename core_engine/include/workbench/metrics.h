// Measurements of one generation, as plain values. A figure that is undefined for a run (decode
// speed with a single generated token) is an empty optional, never NaN.
#pragma once

#include <cstdint>
#include <optional>

namespace workbench {

struct GenerationMetrics {
    int32_t n_prompt_tokens = 0;       // tokens in the prompt
    int32_t n_prompt_reused = 0;       // of those, already in the KV cache from an earlier turn
    int32_t n_generated = 0;           // tokens sampled
    double ttft_ms = 0;                // request start → first token sampled (includes prefill)
    double prefill_ms = 0;
    std::optional<double> prefill_tok_s;   // prefilled (not reused) tokens / prefill time
    std::optional<double> decode_tok_s;    // (n_generated − 1) / time from first to last token
    std::optional<double> itl_ms_p50;      // median gap between consecutive tokens
    double total_ms = 0;
    uint64_t kv_bytes = 0;             // KV bytes in use at the end
    uint64_t kv_bytes_peak = 0;        // most KV bytes in use during the run
    uint64_t kv_bytes_allocated = 0;   // KV bytes reserved
    uint64_t kv_bytes_full = 0;        // what full attention at the configured KV dtype holds for the same tokens
    uint64_t kv_bytes_read_per_token = 0;  // what the last decode step's attention read, indexer included
    int32_t n_context_tokens = 0;      // tokens in the sequence at the end
};

}  // namespace workbench

namespace workbench {

// Measures how fast `n_threads` threads can stream-read a buffer of `working_set_bytes` (best of
// several passes, GB/s = 1e9 bytes/s). Pick the working set of the workload being judged: the
// model's weight bytes tell whether decode streams from cache or from DRAM. Takes ~0.2–1 s.
double measure_read_bandwidth_gb_s(uint64_t working_set_bytes, int n_threads);

}  // namespace workbench

namespace workbench {

// This process's resident memory in bytes (Linux /proc/self/statm), 0 where unknown.
uint64_t process_resident_bytes();

}  // namespace workbench
