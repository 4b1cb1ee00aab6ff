// The `latent:rank=R` variant's weights: per layer, a down-projection A [R × n_embd] whose output
// c = A·x is all the cache keeps per token, and up-projections U_k, U_v [n_kv × R] rebuilding K
// (before RoPE) and V from it. Built at load from the layer's K/V projections and the attention
// inputs of a calibration text (activation-aware SVD, latent_factorization.h). Owned by the model.
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
// invalid_argument when the rank does not fit the layer (1..min(2·n_kv, n_embd)).
Result<std::vector<LatentLayer>> build_latent_layers(const ModelWeights& w, const ModelHparams& hp,
                                                     const std::vector<std::vector<float>>& inputs, int32_t n_samples,
                                                     int32_t rank, const std::function<void(int, int)>& progress = {});

}  // namespace workbench
