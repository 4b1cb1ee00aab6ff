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

// An integer key in [lo, hi] (errors name the key; a per-layer array is refused); absent: `out`
// keeps its value, or not_found when `required`.
Status read_count(const GgufFile& file, const std::string& key, int32_t& out, bool required, int64_t lo, int64_t hi);

// The mixture-of-experts keys every such architecture has, for its read_hparams hook:
// expert_count (1..1024), expert_used_count (1..expert_count), expert_feed_forward_length
// (default: feed_forward_length / expert_used_count, as llama.cpp) and, when the file has them,
// expert_group_count / expert_group_used_count. What the architecture fixes (gating,
// normalisation) it sets itself. A per-layer array where one value is expected is refused.
Status read_expert_hparams(const GgufFile& file, ModelHparams& hp);

// Turns a latent-attention model's cache from its absorbed rows [c | RoPE key] (one KV head) to
// per-head keys of head_k and values of head_v (n_head KV heads): invalid_argument without latent
// attention.
Status expand_latent_attention(ModelHparams& hp);

// Trained local layers (hp.local_layers, hp.sliding_window), as llama.cpp reads them:
// attention.sliding_window, and attention.sliding_window_pattern — every Nth layer global, the
// others local (N = `default_period` when absent), or one boolean per layer (true: local). No
// window in the file: no local layers, or an error when `required`.
Status read_local_layers(const GgufFile& file, ModelHparams& hp, uint32_t default_period, bool required);

}  // namespace workbench
