// The tiny model of each architecture whose forward pass is checked against llama.cpp
// (tests/reference/data/tiny_<arch>_logits.txt): a few layers, GQA, the architecture's own
// tensors, F32 weights and a placeholder vocab. The generator is seeded, so the test and
// wb-write-tiny-model produce the same bytes.
#pragma once

#include <optional>
#include <string>

#include "tests/core_engine/model/tiny_model.h"

namespace tiny {

inline std::optional<Spec> arch_spec(const std::string& arch) {
    Spec s;
    s.arch = arch;
    s.n_layer = 3;
    s.with_vocab = true;
    s.seed = 7;
    if (arch == "llama") return s;
    if (arch == "llama3") return s.arch = "llama", s.rope_freqs = true, s;  // Llama 3.x RoPE scaling
    if (arch == "qwen2") return s.qkv_bias = true, s;
    if (arch == "qwen3") return s.qk_norm = true, s;
    if (arch == "llama_q8") return s.arch = "llama", s.weight_type = workbench::DType::q8_0, s;  // quantized activations' baseline
    if (arch == "gpt-oss" || arch == "gpt-oss_mxfp4") {
        // Biases everywhere, sink logits, an untied head; layers 0 and 2 local over 8 tokens
        // (the oracle's 24 + 16 tokens pass the window), 1 and 3 global; YaRN 4× over 32 tokens
        // on both; 8 experts with biases, 2 a token, clamped SwiGLU.
        s.n_layer = 4;
        s.qkv_bias = s.untied_output = s.output_bias = s.sink_logits = s.expert_biases = true;
        s.ffn_norm_name = "post_attention_norm.weight";
        s.sliding_window = 8;
        s.rope_scaling = "yarn";
        s.rope_scaling_factor = 4.0f;
        s.rope_orig_ctx = 32;
        s.n_expert = 8;
        s.n_expert_used = 2;
        s.n_ff_exp = 32;
        s.mxfp4_experts = arch == "gpt-oss_mxfp4";  // as the released files: the experts MXFP4, the rest f32 here
        s.arch = "gpt-oss";
        return s;
    }
    if (arch == "qwen3_yarn") {
        // YaRN stretching a 32-token training context 4×: the ramp spans the head's pairs, and
        // cos/sin carry its magnitude.
        s.arch = "qwen3";
        s.qk_norm = true;
        s.rope_scaling = "yarn";
        s.rope_scaling_factor = 4.0f;
        s.rope_orig_ctx = 32;
        return s;
    }
    if (arch == "phi3") return s;  // fused attn_qkv and gate/up
    if (arch == "qwen3moe") {
        // qwen3's attention, 8 experts of width 32, 2 per token, weights renormalised.
        s.qk_norm = true;
        s.n_expert = 8;
        s.n_expert_used = 2;
        s.n_ff_exp = 32;
        return s;
    }
    if (arch.starts_with("deepseek2")) {
        // Latent attention (rank 32, RoPE key 16, heads of 32 + 16 → values of 32), 4 heads, the
        // q LoRA (rank 32); layer 0 dense, 1 and 2 of 8 experts (2 a token) and one shared;
        // YaRN 4× over 32 tokens with DeepSeek's log multiplier in the score scale.
        s.arch = "deepseek2";
        s.n_head_kv = 1;
        s.q_lora_rank = 32;
        s.kv_lora_rank = 32;
        s.mla_rope = 16;
        s.mla_nope = 32;
        s.mla_v = 32;
        s.n_dense_lead = 1;
        s.n_expert = 8;
        s.n_expert_used = 2;
        s.n_ff_exp = 32;
        s.n_shared = 1;
        s.weights_scale = 1.0f;
        s.rope_scaling = "yarn";
        s.rope_scaling_factor = 4.0f;
        s.rope_orig_ctx = 32;
        s.yarn_log_mul = 0.707f;
        if (arch == "deepseek2") return s;
        if (arch == "deepseek2_lite") return s.q_lora_rank = 0, s;  // V2-Lite: one query matrix
        if (arch == "deepseek2_legacy") {
            // The older layout: one attn_kv_b, the heads stated as multi-head attention.
            s.mla_joint_kv_b = true;
            s.n_head_kv = s.n_head;
            return s;
        }
        if (arch == "deepseek2_v3") {
            // DeepSeek-V3's router: sigmoid, a selection bias, 2 groups of which 1 is kept,
            // weights normalised then scaled by 2.5; gate and up merged in one stack.
            s.gating_func = 2;
            s.selection_bias = true;
            s.n_groups = 2;
            s.n_group_used = 1;
            s.weights_norm = true;
            s.weights_scale = 2.5f;
            s.merged_gate_up = true;
            return s;
        }
        return std::nullopt;
    }
    if (arch == "gemma3" || arch == "gemma3_softcap") {
        // Sandwich norms, QK-norm, GeGLU, scaled embeddings; layers 0 and 2 local over 8 tokens
        // (RoPE base 10k), 1 and 3 global (base 1M): the oracle's 24 + 16 tokens pass the window.
        s.n_layer = 4;
        s.qk_norm = s.sandwich_norms = true;
        s.sliding_window = 8;
        s.sliding_pattern = 2;
        s.rope_base = 1e6f;
        if (arch == "gemma3_softcap") s.final_logit_softcap = 30.0f;  // logits = 30·tanh(logits / 30)
        s.arch = "gemma3";
        return s;
    }
    return std::nullopt;
}

}  // namespace tiny
