// Measurements as JSON rows, built once for the CLI and the GUI. A benchmark row: llama-bench's
// fields, in its order and with its meaning, so a row of ours and a row of `llama-bench -o json`
// on the same file read alike; then the workbench's own figures (`bench --json`, the rows stored
// with --db, the GUI's Benchmark page). An evaluation row: a quality report's figures (`eval
// --json`, saved evaluations from the CLI and from Compare).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/measure.h"

namespace workbench {

struct BenchRow {
    std::string test;               // "pp512", "tg128"; "pp512+tg128" for a batch point
    int32_t n_prompt = 0, n_gen = 0, n_depth = 0;
    int32_t batch = 1;              // sequences run together
    int32_t n_batch = 0;            // tokens handed to the engine in one call (llama-bench's -b)
    std::vector<double> samples_ts; // tokens/s of each timed run
    int64_t test_time_unix_ms = 0;  // when the test started; 0: now
    // The workbench's figures; absent ones are null.
    std::optional<double> pp_tok_s, tg_tok_s, tpot_ms_p50;  // a batch point's parts
    std::optional<double> gb_s, roofline_pct;               // a tg test against memory bandwidth
    std::optional<uint64_t> kv_bytes_peak, rss_bytes;
};

// Tokens one run of the row's test processes: batch · (n_prompt + n_gen).
int64_t bench_row_tokens(const BenchRow& row);

// The row: avg_ts and stddev_ts (mean and sample standard deviation) from samples_ts, avg_ns and
// samples_ns from the same runs in nanoseconds; the model, machine and configuration from `info`.
Json bench_row_json(const BenchRow& row, const ModelInfo& info);

// ctx, windows, tokens_scored, attention, kv_type, weights, ppl, ppl_baseline, delta_ppl_pct,
// kl_mean, top1_agreement, kv_bytes_peak, kv_bytes_full.
Json evaluation_row_json(const QualityReport& report, const ModelInfo& info, int32_t n_ctx);

// Now, as test_time_unix_ms takes it.
int64_t unix_time_ms();

// "llama 135M Q4_1": llama-bench's model_type.
std::string bench_model_type(const ModelInfo& info);

}  // namespace workbench
