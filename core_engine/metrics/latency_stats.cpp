// Latency percentiles as vLLM's benchmark reports them (numpy's linear interpolation), so our
// p50/p90/p99 read the same as theirs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "workbench/metrics.h"

namespace workbench {

LatencyStats latency_stats(std::vector<double> values) {
    LatencyStats s;
    s.n = static_cast<int64_t>(values.size());
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    auto at = [&](double q) {
        const double pos = q * static_cast<double>(values.size() - 1);
        const size_t lo = static_cast<size_t>(std::floor(pos));
        const size_t hi = std::min(lo + 1, values.size() - 1);
        return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
    };
    s.p50 = at(0.50);
    s.p90 = at(0.90);
    s.p99 = at(0.99);
    return s;
}

MeanStddev mean_stddev(const std::vector<double>& values) {
    MeanStddev out;
    if (values.empty()) return out;
    const double n = static_cast<double>(values.size());
    out.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
    double var = 0;
    for (double v : values) var += (v - out.mean) * (v - out.mean);
    out.stddev = values.size() > 1 ? std::sqrt(var / (n - 1)) : 0;
    return out;
}

}  // namespace workbench

namespace workbench {

GenerationMetrics generation_metrics(const RequestMetrics& m) {
    GenerationMetrics g;
    g.n_prompt_tokens = m.n_prompt_tokens;
    g.n_prompt_reused = m.n_prompt_cached;
    g.n_generated = m.n_output_tokens;
    g.ttft_ms = m.ttft_ms;
    g.first_answer_ms = m.first_answer_ms;
    g.prefill_ms = m.prefill_ms;
    const int32_t n_prefilled = m.n_prompt_tokens - m.n_prompt_cached;
    if (m.prefill_ms > 0 && n_prefilled > 0) g.prefill_tok_s = n_prefilled / (m.prefill_ms / 1000.0);
    if (!m.itl_ms.empty()) {
        const double decode_ms = std::accumulate(m.itl_ms.begin(), m.itl_ms.end(), 0.0);
        if (decode_ms > 0) g.decode_tok_s = static_cast<double>(m.itl_ms.size()) / (decode_ms / 1000.0);
    }
    if (m.itl.n > 0) {
        g.itl_ms_p50 = m.itl.p50;
        g.itl_ms_p90 = m.itl.p90;
        g.itl_ms_p99 = m.itl.p99;
    }
    g.total_ms = m.e2e_ms;
    g.kv_bytes = m.kv_bytes;
    g.kv_bytes_peak = m.kv_bytes_peak;
    g.kv_bytes_allocated = m.kv_bytes_allocated;
    g.kv_bytes_full = m.kv_bytes_full;
    g.kv_bytes_read_per_token = m.kv_bytes_read_per_token;
    g.n_context_tokens = m.n_context_tokens;
    g.n_draft_tokens = m.n_draft_tokens;
    g.n_accepted_tokens = m.n_accepted_tokens;
    if (m.n_draft_tokens > 0) g.acceptance_rate = static_cast<double>(m.n_accepted_tokens) / m.n_draft_tokens;
    return g;
}

}  // namespace workbench
