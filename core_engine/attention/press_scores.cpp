// The presses' scorers and budget rules. Softmax sums run in double; every score is a plain
// average, so a scorer's output does not depend on the thread count.
#include "attention/press_scores.h"

#include <algorithm>
#include <cmath>

#include "attention/top_selection.h"
#include "kernels/cpu/dot_f32.h"
#include "kernels/cpu/thread_pool.h"

namespace workbench {
namespace {

// Adds each query's attention weights over the keys it sees, divided by `divisor`, for query head
// g into acc[0, n_keys).
void add_head_weights(const PressRows& r, int64_t g, double divisor, std::vector<double>& logits, double* acc) {
    const int64_t kvh = g / (r.n_head / r.n_kv_heads);
    for (size_t i = 0; i < r.query_pos.size(); ++i) {
        const float* q = r.queries + (static_cast<int64_t>(i) * r.n_head + g) * r.head_dim;
        const int64_t seen = std::clamp<int64_t>(r.query_pos[i] - r.key_pos0 + 1, 0, r.n_keys);
        if (seen == 0) continue;
        logits.resize(static_cast<size_t>(seen));
        double mx = -INFINITY;
        for (int64_t j = 0; j < seen; ++j) {
            logits[static_cast<size_t>(j)] = r.scale * dot_f32(q, r.keys + (j * r.n_kv_heads + kvh) * r.head_dim, r.head_dim);
            mx = std::max(mx, logits[static_cast<size_t>(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < seen; ++j) sum += logits[static_cast<size_t>(j)] = std::exp(logits[static_cast<size_t>(j)] - mx);
        for (int64_t j = 0; j < seen; ++j) acc[j] += logits[static_cast<size_t>(j)] / (sum * divisor);
    }
}

// Per query head: its weights averaged over the queries. [n_head][n_keys].
std::vector<double> head_weights(const PressRows& r, ThreadPool& pool) {
    std::vector<double> acc(static_cast<size_t>(r.n_head * r.n_keys), 0.0);
    const double n_q = static_cast<double>(std::max<size_t>(1, r.query_pos.size()));
    pool.parallel_for(r.n_head, [&](int64_t g0, int64_t g1) {
        std::vector<double> logits;
        for (int64_t g = g0; g < g1; ++g) add_head_weights(r, g, n_q, logits, acc.data() + g * r.n_keys);
    });
    return acc;
}

}  // namespace

void window_attention_scores(const PressRows& r, int32_t pool_kernel, std::vector<float>& out, ThreadPool& pool) {
    const std::vector<double> per_head = head_weights(r, pool);
    const int64_t group = r.n_head / r.n_kv_heads, n = r.n_keys, half = pool_kernel / 2;
    out.assign(static_cast<size_t>(r.n_kv_heads * n), 0.0f);
    std::vector<double> mean(static_cast<size_t>(n));
    for (int64_t kvh = 0; kvh < r.n_kv_heads; ++kvh) {
        std::fill(mean.begin(), mean.end(), 0.0);
        for (int64_t g = kvh * group; g < (kvh + 1) * group; ++g)
            for (int64_t j = 0; j < n; ++j) mean[static_cast<size_t>(j)] += per_head[static_cast<size_t>(g * n + j)] / static_cast<double>(group);
        // Neighbours pooled (a key near an attended one is likely part of the same phrase).
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t d = j - half; d <= j + half; ++d)
                if (d >= 0 && d < n) s += mean[static_cast<size_t>(d)];
            out[static_cast<size_t>(kvh * n + j)] = static_cast<float>(s / static_cast<double>(pool_kernel));
        }
    }
}

void last_query_scores(const PressRows& r, std::vector<float>& out, ThreadPool& pool) {
    PressRows last = r;
    if (!r.query_pos.empty()) {
        const size_t i = r.query_pos.size() - 1;
        last.queries = r.queries + static_cast<int64_t>(i) * r.n_head * r.head_dim;
        last.query_pos = r.query_pos.subspan(i, 1);
    }
    const std::vector<double> per_head = head_weights(last, pool);
    const int64_t n = r.n_keys;
    out.assign(static_cast<size_t>(r.n_kv_heads * n), 0.0f);
    for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t g = 0; g < r.n_head; ++g) s += per_head[static_cast<size_t>(g * n + j)];
        for (int64_t kvh = 0; kvh < r.n_kv_heads; ++kvh) out[static_cast<size_t>(kvh * n + j)] = static_cast<float>(s / static_cast<double>(r.n_head));
    }
}

void key_norm_scores(const PressRows& r, std::vector<float>& out) {
    out.assign(static_cast<size_t>(r.n_kv_heads * r.n_keys), 0.0f);
    for (int64_t j = 0; j < r.n_keys; ++j)
        for (int64_t kvh = 0; kvh < r.n_kv_heads; ++kvh) {
            const float* k = r.keys + (j * r.n_kv_heads + kvh) * r.head_dim;
            out[static_cast<size_t>(kvh * r.n_keys + j)] = -std::sqrt(dot_f32(k, k, r.head_dim));
        }
}

std::vector<int32_t> pyramid_layer_counts(int32_t n_layers, int32_t n_tokens, int32_t kept, int32_t window) {
    std::vector<int32_t> counts(static_cast<size_t>(std::max(n_layers, 0)), kept);
    if (n_layers < 2) return counts;
    const double beta = 20.0;
    double low = kept / beta, high = 2.0 * kept - low;
    if (high >= n_tokens - window) {
        high = n_tokens - window;
        low = 2.0 * kept - high;
    }
    // Where the pyramid would keep fewer than the window in its last layer (or more than there are
    // tokens in its first), every layer keeps the same.
    if (!(n_tokens >= high && high >= low && low >= window)) return counts;
    const double step = (high - low) / (n_layers - 1);
    for (int32_t l = 0; l < n_layers; ++l) counts[static_cast<size_t>(l)] = static_cast<int32_t>(std::lround(high - l * step));
    return counts;
}

void adaptive_head_selection(std::span<const float> scores, int64_t n_kv_heads, int64_t n, int32_t per_head, double alpha,
                             std::vector<std::vector<int32_t>>& kept) {
    kept.assign(static_cast<size_t>(n_kv_heads), {});
    std::vector<float> joint(scores.begin(), scores.end());
    std::vector<int32_t> order;
    // Each head's best ⌊alpha · per_head⌋ first: no head is starved by another's larger scores.
    const int32_t safe = static_cast<int32_t>(std::floor(alpha * per_head));
    for (int64_t h = 0; h < n_kv_heads; ++h) {
        keep_best(scores.subspan(static_cast<size_t>(h * n), static_cast<size_t>(n)), safe, order);
        for (int32_t j : order) joint[static_cast<size_t>(h * n + j)] = INFINITY;
    }
    const int64_t total = std::min<int64_t>(static_cast<int64_t>(per_head) * n_kv_heads, n_kv_heads * n);
    keep_best(joint, static_cast<int32_t>(total), order);
    for (int32_t flat : order) kept[static_cast<size_t>(flat / n)].push_back(static_cast<int32_t>(flat % n));
}

}  // namespace workbench
