// Reading a decoder model's hyperparameters (model_data/model_hparams.h) from GGUF metadata under the
// architecture's prefix ("llama.block_count", "qwen2.attention.head_count_kv", ...). Missing required keys and
// inconsistent values (heads not dividing the width, GQA ratio not whole) are errors.
#pragma once

#include "gguf/gguf_file.h"
#include "model_data/model_hparams.h"
#include "workbench/status.h"

namespace workbench {

// Reads and validates the hyperparameters; `n_vocab` comes from the tokenizer's token list.
Result<ModelHparams> load_hparams(const GgufFile& file, int32_t n_vocab);

}  // namespace workbench
