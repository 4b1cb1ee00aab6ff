// Binding the model's tensors (model_data/weight_tensors.h) to the mapped GGUF file, each checked for
// presence, dtype and shape against the hyperparameters.
#pragma once

#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model_data/weight_tensors.h"
#include "workbench/status.h"

namespace workbench {

// Binds every tensor. Errors name the tensor, its shape or type, and what was expected:
// "model.gguf: tensor 'blk.3.attn_q.weight' has shape [576, 192], expected [576, 576]".
Result<ModelWeights> load_weights(const GgufFile& file, const ModelHparams& hp);

}  // namespace workbench
