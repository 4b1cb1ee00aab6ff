// The `latent:rank=R[,rope=P][,balance=none]` variant's weights: per layer, a down-projection A [R × n_embd]
// whose output c = A·x is what the cache keeps per token, and up-projections U_k, U_v [n_kv × R]
// rebuilding K (before RoPE) and V from it. Built at load from the layer's K/V projections and
// the attention inputs of a calibration text (activation-aware SVD, latent_factorization.h).
// With P > 0 each KV head's P RoPE pairs of largest mean |q|·|k| on that text (MHA2MLA's 2-norm
// score, summed over the head's query group) are cached exact instead, and the SVD factors the
// rest of K with V. With balance=energy (the default) each layer's K rows are scaled before the
// SVD so that K and V carry the same energy on those inputs (TransMLA's balancing); otherwise the
// SVD spends its rank where K's larger values are and V's error dominates. Owned by the model.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/cpu/latent_layer.h"
#include "model_data/model_hparams.h"
#include "model_data/weight_tensors.h"
#include "workbench/attention.h"
#include "workbench/status.h"

namespace workbench {

// `inputs[il]` holds the normed attention inputs of layer il for `n_samples` calibration tokens;
// `spec` is a latent spec (rank, rope, balance). invalid_argument when the rank does not fit the
// layer (1..min(2·n_kv − 2·P·n_kv_heads, n_embd)) or P exceeds head_dim / 2.
// `singular_values`, when given, receives each layer's singular values of the (whitened,
// balanced) stacked projection, descending: the σ² past a rank are what that rank drops.
Result<std::vector<LatentLayer>> build_latent_layers(const ModelWeights& w, const ModelHparams& hp,
                                                     const std::vector<std::vector<float>>& inputs, int32_t n_samples,
                                                     const AttentionSpec& spec, const std::function<void(int, int)>& progress = {},
                                                     std::vector<std::vector<double>>* singular_values = nullptr);

// Points the layer's matmul operands at its f32 factors (used in place) after they change, with
// the absorbed form's per-head matrices when the layer has a head_dim; false when out of memory.
bool pack_latent_layer(LatentLayer& layer, int64_t rank, int64_t n_embd);

// The largest rank a layer takes: min(2·n_kv − 2·P·n_kv_heads, n_embd).
int32_t max_latent_rank(const ModelHparams& hp, int32_t rope_pairs);

// Cuts the layer to its first `rank` latent directions. Its factors come from an SVD, ordered by
// singular value, so this is the rank-`rank` factorization itself; the output error is
// recomputed from the layer's `singular_values`. invalid_argument outside 1..its rank.
Status truncate_latent_layer(LatentLayer& layer, int32_t rank, int64_t n_embd, const std::vector<double>& singular_values);

// Ranks per layer for latent:ranks=measured: `start` in every layer to begin with (the same
// total at the end), then pieces of `step` move from the layer where they cost least to the one
// where they gain most while that lowers Σ_l w_l · Σ_{i ≥ r_l} σ_l,i², with w_l =
// sensitivity_l / (the σ² layer l drops at `probe_rank`): the KL that layer alone cut to
// `probe_rank` caused, spread over the energy it dropped. The loss is convex in each r_l, so no single move improves
// the result. Ranks stay in [step, max_rank] and congruent to `start` modulo `step`.
std::vector<int32_t> allocate_latent_ranks(const std::vector<std::vector<double>>& singular_values, const std::vector<double>& sensitivity,
                                           int32_t probe_rank, int32_t start, int32_t step, int32_t max_rank);

// The scale of layer K rows that gives them V's energy on the inputs x [n_samples, n_embd]:
// sqrt(Σ‖W_v x‖² / Σ‖W_k x‖²) over the stacked rows [W_k (n_k_rows); W_v] (row-major f32).
// 1 when K carries no energy.
double kv_balance_scale(const float* stacked, int64_t n_k_rows, int64_t n_rows, const float* x, int32_t n_samples, int64_t n_embd);

// The kept key dimensions of one layer for rope=P (LatentLayer::rope_dims): per KV head, the P
// pairs with the largest Σ_h mean‖q_h pair‖ · mean‖k pair‖ over the calibration inputs x
// [n_samples, n_embd], q and k before RoPE (biases included), with pick=norm; the P fastest-turning
// pairs (the first P: pair i turns base^(−2i/hd) a token, any frequency factors or scaling keep
// the order) with pick=frequency. wq [n_head·hd, n_embd] and wk [n_kv_heads·hd, n_embd] are f32
// row-major. Ties keep the lower pair.
std::vector<int32_t> select_rope_dims(const float* wq, const float* bq, const float* wk, const float* bk, const float* x,
                                      int32_t n_samples, const ModelHparams& hp, int32_t rope_pairs, LatentPick pick = LatentPick::norm);

}  // namespace workbench
