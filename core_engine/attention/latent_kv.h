// The `latent:rank=R[,rope=P]` variant's weights: per layer, a down-projection A [R × n_embd]
// whose output c = A·x is what the cache keeps per token, and up-projections U_k, U_v [n_kv × R]
// rebuilding K (before RoPE) and V from it. Built at load from the layer's K/V projections and
// the attention inputs of a calibration text (activation-aware SVD, latent_factorization.h).
// With P > 0 each KV head's P RoPE pairs of largest mean |q|·|k| on that text (MHA2MLA's 2-norm
// score, summed over the head's query group) are cached exact instead, and the SVD factors the
// rest of K with V. Owned by the model.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/cpu/latent_layer.h"
#include "model_data/model_hparams.h"
#include "model_data/weight_tensors.h"
#include "workbench/status.h"

namespace workbench {

// `inputs[il]` holds the normed attention inputs of layer il for `n_samples` calibration tokens.
// invalid_argument when the rank does not fit the layer (1..min(2·n_kv − 2·P·n_kv_heads, n_embd))
// or P exceeds head_dim / 2.
Result<std::vector<LatentLayer>> build_latent_layers(const ModelWeights& w, const ModelHparams& hp,
                                                     const std::vector<std::vector<float>>& inputs, int32_t n_samples,
                                                     int32_t rank, int32_t rope_pairs = 0,
                                                     const std::function<void(int, int)>& progress = {});

// The kept key dimensions of one layer for rope=P (LatentLayer::rope_dims): per KV head, the P
// pairs with the largest Σ_h mean‖q_h pair‖ · mean‖k pair‖ over the calibration inputs x
// [n_samples, n_embd], q and k before RoPE (biases included). wq [n_head·hd, n_embd] and wk
// [n_kv_heads·hd, n_embd] are f32 row-major. Ties keep the lower pair.
std::vector<int32_t> select_rope_dims(const float* wq, const float* bq, const float* wk, const float* bk, const float* x,
                                      int32_t n_samples, const ModelHparams& hp, int32_t rope_pairs);

}  // namespace workbench
