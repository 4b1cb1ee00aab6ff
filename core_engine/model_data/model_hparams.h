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
    // Shared experts (DeepSeek): a dense SwiGLU MLP of width n_ff_exp · n_shared every token
    // runs beside its routed ones, added after them.
    int32_t n_shared = 0;
    bool merged_gate_up = false;  // the file stores gate and up in one stack (ffn_gate_up_exps)
    bool selection_bias = false;  // a per-expert bias added to the scores that choose (exp_probs_b)
};

// DeepSeek's multi-head latent attention (kv_lora_rank > 0). Each token's keys and values come
// from one latent c (kv_lora_rank values, RMS-normed) and one RoPE key of n_rot values shared by
// every head; a query head is head_k values (head_k − n_rot without position, then n_rot with),
// through a low-rank q_lora_rank step when that is > 0. The engine runs the absorbed form: the
// cache holds [c | RoPE key] per token and layer (one KV head of kv_lora_rank + n_rot values,
// V = its first kv_lora_rank), each head's position-free query is turned into c's space by its
// attn_k_b, and each head's output leaves c's space through its attn_v_b (value width head_v).
struct LatentAttentionHparams {
    int32_t q_lora_rank = 0, kv_lora_rank = 0;
    int32_t head_k = 0, head_v = 0;
    bool split_kv_b = true;       // attn_k_b / attn_v_b; false: the older files' single attn_kv_b
    // Expanded instead of absorbed (model/hparams.h expand_latent_attention): each head's K
    // (head_k: W_UK·c then the RoPE key) and V (head_v: W_UV·c) are cached as multi-head attention
    // — the form the older llama.cpp path runs, kept to measure what absorption saves.
    bool expanded = false;
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
    LatentAttentionHparams mla;
    // The values a KV row's reader sums (0: head_dim): the latent c of an MLA row. Then V is the
    // start of the K row itself and nothing else is stored.
    int32_t head_dim_v = 0;

    bool is_mla() const { return mla.kv_lora_rank > 0; }
    int32_t mla_nope() const { return mla.head_k - n_rot; }

    bool is_expert_layer(int32_t il) const { return experts.n_expert > 0 && il >= experts.n_dense_lead; }

    bool is_local_layer(int32_t il) const;
    int32_t n_embd_q() const { return n_head * head_dim; }
    int32_t n_embd_kv() const { return n_head_kv * head_dim; }
};

}  // namespace workbench
