// A decoder model's hyperparameters as plain data: what model/ reads from a GGUF file
// (model/hparams.h) and every backend sizes its work by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace workbench {

enum class RopeStyle { normal, neox };  // normal: adjacent pairs (GGUF llama); neox: halves (qwen2)

// How a mixture-of-experts router turns its logits into weights (kernels/expert_routing.h).
enum class ExpertGating { softmax, sigmoid, softmax_weight };

// Layers of experts (n_expert > 0): each token runs n_expert_used of n_expert SwiGLU MLPs of
// width n_ff_exp, chosen and weighted by the layer's router; the first n_dense_lead layers keep
// a dense MLP. Groups (n_groups > 1): a token chooses within its n_group_used best groups.
struct ExpertHparams {
    int32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    int32_t n_dense_lead = 0;
    ExpertGating gating = ExpertGating::softmax;
    bool norm_weights = false;    // a token's weights divided by their sum
    float weights_scale = 0.0f;   // then multiplied by it (0 or 1: not)
    int32_t n_groups = 0, n_group_used = 0;
};

struct ModelHparams {
    std::string arch;             // general.architecture
    std::string name;             // general.name (display)
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;           // model width
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;         // n_embd / n_head unless the file says otherwise
    int32_t n_ff = 0;
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f; // 1 / linear scaling factor
    int32_t n_rot = 0;            // rotated dims per head (rope.dimension_count)
    RopeStyle rope_style = RopeStyle::normal;
    // rope.scaling.type yarn (model/rope_scaling.h derives the angles' parameters from these).
    bool rope_yarn = false;
    int32_t n_ctx_orig_yarn = 0;       // rope.scaling.original_context_length (default n_ctx_train)
    float rope_attn_factor = 1.0f;     // rope.scaling.attn_factor
    float rope_yarn_log_mul = 0.0f;    // DeepSeek's mscale_all_dim
    float rope_yarn_mscale = 1.0f;     // DeepSeek-V2's mscale (llama.cpp takes it equal to the above)
    // Trained local layers (Gemma 3): they attend over the last `sliding_window` tokens and rotate
    // with their own RoPE base and scale; the others are global. Empty: every layer global.
    std::vector<int32_t> local_layers;
    int32_t sliding_window = 0;
    float rope_freq_base_local = 10000.0f;
    float rope_freq_scale_local = 1.0f;
    float attention_scale = 0.0f;    // the query's scale before QK^T; 0: 1/sqrt(head_dim)
    float embedding_scale = 1.0f;    // token embeddings are multiplied by it (Gemma: sqrt(n_embd))
    float final_logit_softcap = 0.0f;  // logits = c·tanh(logits / c) when > 0
    ExpertHparams experts;

    bool is_expert_layer(int32_t il) const { return experts.n_expert > 0 && il >= experts.n_dense_lead; }

    bool is_local_layer(int32_t il) const;
    int32_t n_embd_q() const { return n_head * head_dim; }
    int32_t n_embd_kv() const { return n_head_kv * head_dim; }
};

}  // namespace workbench
