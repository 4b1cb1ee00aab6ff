// A tiny random llama-family model written with GgufWriter, for unit tests of loading and of the
// forward pass (no tokenizer: tests drive DecoderModel with token ids directly).
#pragma once

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/synth_model.h"
#include "tensor/dequantize.h"

namespace tiny {

struct Spec {
    std::string arch = "llama";
    int n_vocab = 97, n_embd = 64, n_head = 4, n_head_kv = 2, n_ff = 96, n_layer = 2, n_ctx = 128;
    bool qkv_bias = false;
    std::string rope_scaling;  // rope.scaling.type; empty: not written
    float rope_scaling_factor = 0.0f;  // rope.scaling.factor when > 0
    int rope_orig_ctx = 0;             // rope.scaling.original_context_length when > 0
    bool qk_norm = false;      // attn_q_norm / attn_k_norm per head (qwen3)
    bool with_vocab = false;   // a placeholder SentencePiece vocab, so llama.cpp can load the file
    bool rope_freqs = false;   // Llama 3.x scaling: per-dimension RoPE frequency divisors (rope_freqs.weight)
    bool long_rope = false;    // Phi-3 128k's rope_factors_long.weight (which the engine refuses)
    bool sandwich_norms = false;  // post_attention_norm / post_ffw_norm (gemma3)
    int sliding_window = 0, sliding_pattern = 0;  // gemma3's trained local layers: window, every Nth layer global
    float rope_base = 10000.0f;
    float final_logit_softcap = 0.0f;  // <arch>.final_logit_softcapping when > 0
    // Layers of experts (qwen3moe) in place of the MLP: a router and n_expert stacked SwiGLU
    // experts of width n_ff_exp, n_expert_used per token. The router's rows are spread
    // router_scale / sqrt(n_embd), so its logits differ by whole units and rarely near-tie.
    int n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    float router_scale = 3.0f;
    // gpt-oss's block: an untied output head, attn_output.bias, a sink logit per head, biases on
    // the router and every expert, and its pre-MLP norm under another name.
    bool untied_output = false, output_bias = false, sink_logits = false, expert_biases = false;
    std::string ffn_norm_name = "ffn_norm.weight";
    bool mxfp4_experts = false;  // the experts in MXFP4 (gpt-oss's files), the rest in weight_type
    // deepseek2: latent attention (kv_lora_rank > 0) with a RoPE key of mla_rope values, heads of
    // mla_nope + mla_rope query/key values and mla_v values, queries through q_lora_rank (0: one
    // matrix); the split attn_k_b/attn_v_b, or (mla_joint_kv_b) the older files' attn_kv_b with
    // multi-head key/value lengths. n_dense_lead dense layers first, then experts with n_shared
    // shared ones; gating 1 softmax / 2 sigmoid, a selection bias, groups, norm and scale as
    // the keys say; the experts' gate and up in one stack when merged_gate_up.
    int q_lora_rank = 0, kv_lora_rank = 0, mla_rope = 0, mla_nope = 0, mla_v = 0;
    bool mla_joint_kv_b = false;
    int n_dense_lead = 0, n_shared = 0, gating_func = 0, n_groups = 0, n_group_used = 0;
    bool selection_bias = false, weights_norm = false, merged_gate_up = false;
    float weights_scale = 0.0f, yarn_log_mul = 0.0f;
    workbench::DType weight_type = workbench::DType::f32;
    uint32_t seed = 1;
};

// Weights as float (what the reference uses) and the GGUF bytes (what the engine loads).
struct Model {
    Spec spec;
    std::map<std::string, std::vector<float>> tensors;  // dequantized values, row-major [n_out][n_in]
    std::vector<uint8_t> gguf;
};

inline Model make(const Spec& s, const std::vector<std::string>& skip = {}, const std::string& bad_shape = {}) {
    Model m;
    m.spec = s;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    workbench::GgufWriter w;
    w.set_string("general.architecture", s.arch);
    w.set_string("general.name", "tiny");
    const std::string p = s.arch + ".";
    w.set_uint32(p + "block_count", static_cast<uint32_t>(s.n_layer));
    w.set_uint32(p + "context_length", static_cast<uint32_t>(s.n_ctx));
    w.set_uint32(p + "embedding_length", static_cast<uint32_t>(s.n_embd));
    w.set_uint32(p + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
    w.set_uint32(p + "attention.head_count", static_cast<uint32_t>(s.n_head));
    w.set_uint32(p + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
    w.set_float32(p + "attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_float32(p + "rope.freq_base", s.rope_base);
    if (s.sliding_window > 0) w.set_uint32(p + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
    if (s.final_logit_softcap > 0) w.set_float32(p + "final_logit_softcapping", s.final_logit_softcap);
    if (s.sliding_pattern > 0) w.set_uint32(p + "attention.sliding_window_pattern", static_cast<uint32_t>(s.sliding_pattern));
    if (!s.rope_scaling.empty()) w.set_string(p + "rope.scaling.type", s.rope_scaling);
    if (s.rope_scaling_factor > 0) w.set_float32(p + "rope.scaling.factor", s.rope_scaling_factor);
    if (s.rope_orig_ctx > 0) w.set_uint32(p + "rope.scaling.original_context_length", static_cast<uint32_t>(s.rope_orig_ctx));
    if (s.n_expert > 0) {
        w.set_uint32(p + "expert_count", static_cast<uint32_t>(s.n_expert));
        w.set_uint32(p + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
        w.set_uint32(p + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp));
    }
    if (s.kv_lora_rank > 0) {
        const bool joint = s.mla_joint_kv_b;
        w.set_uint32(p + "rope.dimension_count", static_cast<uint32_t>(s.mla_rope));
        w.set_uint32(p + "attention.q_lora_rank", static_cast<uint32_t>(s.q_lora_rank));
        w.set_uint32(p + "attention.kv_lora_rank", static_cast<uint32_t>(s.kv_lora_rank));
        w.set_uint32(p + "attention.key_length", static_cast<uint32_t>(joint ? s.mla_nope + s.mla_rope : s.kv_lora_rank + s.mla_rope));
        w.set_uint32(p + "attention.value_length", static_cast<uint32_t>(joint ? s.mla_v : s.kv_lora_rank));
        if (!joint) {
            w.set_uint32(p + "attention.key_length_mla", static_cast<uint32_t>(s.mla_nope + s.mla_rope));
            w.set_uint32(p + "attention.value_length_mla", static_cast<uint32_t>(s.mla_v));
        }
        w.set_uint32(p + "leading_dense_block_count", static_cast<uint32_t>(s.n_dense_lead));
        w.set_uint32(p + "expert_shared_count", static_cast<uint32_t>(s.n_shared));
        if (s.weights_scale > 0) w.set_float32(p + "expert_weights_scale", s.weights_scale);
        w.set_bool(p + "expert_weights_norm", s.weights_norm);
        if (s.gating_func > 0) w.set_uint32(p + "expert_gating_func", static_cast<uint32_t>(s.gating_func));
        if (s.n_groups > 0) {
            w.set_uint32(p + "expert_group_count", static_cast<uint32_t>(s.n_groups));
            w.set_uint32(p + "expert_group_used_count", static_cast<uint32_t>(s.n_group_used));
        }
        if (s.yarn_log_mul > 0) w.set_float32(p + "rope.scaling.yarn_log_multiplier", 0.1f * s.yarn_log_mul);
    }
    if (s.with_vocab) workbench::add_placeholder_vocab(w, s.n_vocab);

    auto add = [&](const std::string& name, int n_in, int n_out, float scale, bool is_norm, bool quantizable, int n_mat = 1) {
        for (const auto& sk : skip)
            if (sk == name) return;
        std::vector<float> v(static_cast<size_t>(n_in) * n_out * n_mat);
        for (auto& x : v) x = is_norm ? 1.0f + 0.1f * normal(rng) : scale * normal(rng);
        std::vector<uint64_t> shape = {static_cast<uint64_t>(n_in)};
        if (n_out > 1 || n_mat > 1) shape.push_back(static_cast<uint64_t>(n_out));
        if (n_mat > 1) shape.push_back(static_cast<uint64_t>(n_mat));
        if (name == bad_shape) shape[0] += 32;
        workbench::DType type = !quantizable ? workbench::DType::f32 : n_mat > 1 && s.mxfp4_experts ? workbench::DType::mxfp4 : s.weight_type;
        const auto& t = workbench::dtype_traits(type);
        std::vector<uint8_t> bytes(v.size() / t.block_elements * t.block_bytes);
        if (type == workbench::DType::f32) std::memcpy(bytes.data(), v.data(), bytes.size());
        else workbench::quantize_row(type, v.data(), bytes.data(), static_cast<int64_t>(v.size()));
        if (type != workbench::DType::f32) workbench::dequantize_row(type, bytes.data(), v.data(), static_cast<int64_t>(v.size()));
        if (name == bad_shape) bytes.resize(bytes.size() + static_cast<size_t>(n_out * n_mat) * 32 / t.block_elements * t.block_bytes);
        (void)w.add_tensor(name, shape, type, bytes);
        m.tensors[name] = std::move(v);
    };
    const int hd = s.n_embd / s.n_head;
    add("token_embd.weight", s.n_embd, s.n_vocab, 1.0f, false, true);
    add("output_norm.weight", s.n_embd, 1, 0, true, false);
    if (s.untied_output) add("output.weight", s.n_embd, s.n_vocab, 1.0f, false, true);  // as the tied head: logits of tens
    if (s.long_rope) add("rope_factors_long.weight", s.n_embd / s.n_head / 2, 1, 0, true, false);
    if (s.rope_freqs) {
        // As the converter writes Llama 3.1's: 1 for high frequencies, the scaling factor for
        // low ones, a smooth ramp between.
        const int half = s.n_embd / s.n_head / 2;
        std::vector<float> f(static_cast<size_t>(half));
        for (int i = 0; i < half; ++i) f[static_cast<size_t>(i)] = i < half / 3 ? 1.0f : i >= 2 * half / 3 ? 8.0f : 1.0f + 7.0f * (3.0f * i / half - 1.0f);
        std::vector<uint8_t> bytes(f.size() * sizeof(float));
        std::memcpy(bytes.data(), f.data(), bytes.size());
        (void)w.add_tensor("rope_freqs.weight", {static_cast<uint64_t>(half)}, workbench::DType::f32, bytes);
        m.tensors["rope_freqs.weight"] = f;
    }
    for (int il = 0; il < s.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        const float ws = 1.0f / std::sqrt(static_cast<float>(s.n_embd));
        add(b + "attn_norm.weight", s.n_embd, 1, 0, true, false);
        auto scaled = [](int n_in) { return 1.0f / std::sqrt(static_cast<float>(n_in)); };
        if (s.kv_lora_rank > 0) {
            const int hk = s.mla_nope + s.mla_rope, L = s.kv_lora_rank;
            if (s.q_lora_rank > 0) {
                add(b + "attn_q_a.weight", s.n_embd, s.q_lora_rank, ws, false, true);
                add(b + "attn_q_a_norm.weight", s.q_lora_rank, 1, 0, true, false);
                add(b + "attn_q_b.weight", s.q_lora_rank, s.n_head * hk, scaled(s.q_lora_rank), false, true);
            } else {
                add(b + "attn_q.weight", s.n_embd, s.n_head * hk, ws, false, true);
            }
            add(b + "attn_kv_a_mqa.weight", s.n_embd, L + s.mla_rope, ws, false, true);
            add(b + "attn_kv_a_norm.weight", L, 1, 0, true, false);
            if (s.mla_joint_kv_b) {
                add(b + "attn_kv_b.weight", L, s.n_head * (s.mla_nope + s.mla_v), scaled(L), false, true);
            } else {
                add(b + "attn_k_b.weight", s.mla_nope, L, scaled(s.mla_nope), false, true, s.n_head);
                add(b + "attn_v_b.weight", L, s.mla_v, scaled(L), false, true, s.n_head);
            }
            add(b + "attn_output.weight", s.n_head * s.mla_v, s.n_embd, scaled(s.n_head * s.mla_v), false, true);
            add(b + "ffn_norm.weight", s.n_embd, 1, 0, true, false);
            if (il < s.n_dense_lead) {
                add(b + "ffn_gate.weight", s.n_embd, s.n_ff, ws, false, true);
                add(b + "ffn_up.weight", s.n_embd, s.n_ff, ws, false, true);
                add(b + "ffn_down.weight", s.n_ff, s.n_embd, scaled(s.n_ff), false, true);
                continue;
            }
            add(b + "ffn_gate_inp.weight", s.n_embd, s.n_expert, s.router_scale / std::sqrt(static_cast<float>(s.n_embd)), false, false);
            if (s.selection_bias) add(b + "exp_probs_b.bias", s.n_expert, 1, 0.5f, false, false);
            if (s.merged_gate_up) add(b + "ffn_gate_up_exps.weight", s.n_embd, 2 * s.n_ff_exp, ws, false, true, s.n_expert);
            else {
                add(b + "ffn_gate_exps.weight", s.n_embd, s.n_ff_exp, ws, false, true, s.n_expert);
                add(b + "ffn_up_exps.weight", s.n_embd, s.n_ff_exp, ws, false, true, s.n_expert);
            }
            add(b + "ffn_down_exps.weight", s.n_ff_exp, s.n_embd, scaled(s.n_ff_exp), false, true, s.n_expert);
            const int shexp = s.n_ff_exp * s.n_shared;
            add(b + "ffn_gate_shexp.weight", s.n_embd, shexp, ws, false, true);
            add(b + "ffn_up_shexp.weight", s.n_embd, shexp, ws, false, true);
            add(b + "ffn_down_shexp.weight", shexp, s.n_embd, scaled(shexp), false, true);
            continue;
        }
        if (s.arch == "phi3") {
            add(b + "attn_qkv.weight", s.n_embd, (s.n_head + 2 * s.n_head_kv) * hd, ws, false, true);
        } else {
            add(b + "attn_q.weight", s.n_embd, s.n_head * hd, ws, false, true);
            add(b + "attn_k.weight", s.n_embd, s.n_head_kv * hd, ws, false, true);
            add(b + "attn_v.weight", s.n_embd, s.n_head_kv * hd, ws, false, true);
        }
        add(b + "attn_output.weight", s.n_head * hd, s.n_embd, ws, false, true);
        if (s.output_bias) add(b + "attn_output.bias", s.n_embd, 1, 0.1f, false, false);
        if (s.sink_logits) add(b + "attn_sinks.weight", s.n_head, 1, 1.0f, false, false);
        if (s.qk_norm) {
            add(b + "attn_q_norm.weight", hd, 1, 0, true, false);
            add(b + "attn_k_norm.weight", hd, 1, 0, true, false);
        }
        if (s.qkv_bias) {
            add(b + "attn_q.bias", s.n_head * hd, 1, 0.1f, false, false);
            add(b + "attn_k.bias", s.n_head_kv * hd, 1, 0.1f, false, false);
            add(b + "attn_v.bias", s.n_head_kv * hd, 1, 0.1f, false, false);
        }
        if (s.sandwich_norms) add(b + "post_attention_norm.weight", s.n_embd, 1, 0, true, false);
        add(b + s.ffn_norm_name, s.n_embd, 1, 0, true, false);
        if (s.n_expert > 0) {
            add(b + "ffn_gate_inp.weight", s.n_embd, s.n_expert, s.router_scale / std::sqrt(static_cast<float>(s.n_embd)), false, false);
            add(b + "ffn_gate_exps.weight", s.n_embd, s.n_ff_exp, ws, false, true, s.n_expert);
            add(b + "ffn_up_exps.weight", s.n_embd, s.n_ff_exp, ws, false, true, s.n_expert);
            add(b + "ffn_down_exps.weight", s.n_ff_exp, s.n_embd, 1.0f / std::sqrt(static_cast<float>(s.n_ff_exp)), false, true, s.n_expert);
            if (s.expert_biases) {
                add(b + "ffn_gate_inp.bias", s.n_expert, 1, 0.5f, false, false);
                add(b + "ffn_gate_exps.bias", s.n_ff_exp, s.n_expert, 0.1f, false, false);
                add(b + "ffn_up_exps.bias", s.n_ff_exp, s.n_expert, 0.1f, false, false);
                add(b + "ffn_down_exps.bias", s.n_embd, s.n_expert, 0.1f, false, false);
            }
        } else if (s.arch == "phi3") {
            add(b + "ffn_up.weight", s.n_embd, 2 * s.n_ff, ws, false, true);  // gate rows, then up rows
        } else {
            add(b + "ffn_gate.weight", s.n_embd, s.n_ff, ws, false, true);
            add(b + "ffn_up.weight", s.n_embd, s.n_ff, ws, false, true);
        }
        if (s.n_expert == 0) add(b + "ffn_down.weight", s.n_ff, s.n_embd, 1.0f / std::sqrt(static_cast<float>(s.n_ff)), false, true);
        if (s.sandwich_norms) add(b + "post_ffw_norm.weight", s.n_embd, 1, 0, true, false);
    }
    m.gguf = w.to_bytes();
    return m;
}

}  // namespace tiny
