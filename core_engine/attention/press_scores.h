// What the eviction presses rank a prompt's cached tokens by, and how they split a budget of
// kept tokens over layers and KV heads (after NVIDIA kvpress's presses): pure functions over
// f32 rows, so each scorer is tested on a hand-built attention pattern. They choose; the press
// mechanism (press_policy.h) moves the rows and frees the blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace workbench {

class ThreadPool;

// Keys and queries of one layer as a scorer reads them.
struct PressRows {
    const float* keys = nullptr;       // [n_keys, n_kv_heads, head_dim], key j at position key_pos0 + j
    int64_t n_keys = 0;
    int32_t key_pos0 = 0;
    const float* queries = nullptr;    // [n_queries, n_head, head_dim], rotated as the keys are
    std::span<const int32_t> query_pos;  // [n_queries]: each query's position (it sees keys up to it)
    int64_t n_head = 0, n_kv_heads = 0, head_dim = 0;
    float scale = 1.0f;                // on q·k before the softmax
};

// SnapKV: each query's softmax over the keys it sees, averaged over the queries and over the
// query heads of each KV head, then each key's score averaged with its neighbours (a window of
// `pool_kernel` keys, zeros beyond the ends counted). out: [n_kv_heads][n_keys].
void window_attention_scores(const PressRows& rows, int32_t pool_kernel, std::vector<float>& out, ThreadPool& pool);

// TOVA: the attention of the last query, averaged over every query head; the same score for
// every KV head. out: [n_kv_heads][n_keys].
void last_query_scores(const PressRows& rows, std::vector<float>& out, ThreadPool& pool);

// KNorm: minus each key's L2 norm (keys with small norms draw attention). out: [n_kv_heads][n_keys].
void key_norm_scores(const PressRows& rows, std::vector<float>& out);

// PyramidKV's per-layer counts (kvpress's budget rule, beta 20): kept tokens fall linearly from
// the first layer to the last around `kept` on average, given `n_tokens` candidates of which
// `window` are always kept; the uniform count in every layer where the pyramid would not fit.
std::vector<int32_t> pyramid_layer_counts(int32_t n_layers, int32_t n_tokens, int32_t kept, int32_t window);

// AdaKV: `per_head · n_kv_heads` kept over a layer's heads jointly by score, each head keeping at
// least its best ⌊alpha · per_head⌋. scores: [n_kv_heads][n]; kept: per head, positions ascending.
void adaptive_head_selection(std::span<const float> scores, int64_t n_kv_heads, int64_t n, int32_t per_head, double alpha,
                             std::vector<std::vector<int32_t>>& kept);

}  // namespace workbench
