// The RoPE a model's layers run, from its hyperparameters: base, linear scale and per-pair
// factors, and for rope.scaling.type yarn the ramp's pairs and the cos/sin magnitude as
// llama.cpp derives them (its context's yarn_attn_factor and ggml_rope_yarn_corr_dims, with
// beta_fast 32 and beta_slow 1), so the angles match its rope op.
#pragma once

#include "model_data/model_hparams.h"
#include "model_data/rope_params.h"

namespace workbench {

// `local_layer`: the trained local layers' base and scale (they share the YaRN ramp's shape).
RopeParams model_rope(const ModelHparams& hp, bool local_layer, const float* freq_factors);

}  // namespace workbench
