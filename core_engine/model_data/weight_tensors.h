// The model's tensors as views into the mapped GGUF file (model/weights.h binds and checks them).
// Matrices follow ggml's convention: a weight of shape [n_in, n_out] stores n_out rows of n_in
// elements, so y = W·x is one dot product per row.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace workbench {

struct WeightTensor {
    DType type = DType::f32;
    const uint8_t* data = nullptr;  // null when the tensor is absent (optional biases)
    int64_t n_in = 0;               // elements per row (ne[0])
    int64_t n_out = 0;              // rows (ne[1]; 1 for vectors)
    uint64_t n_bytes = 0;
    int64_t n_mat = 1;              // matrices stacked one after another (ne[2]: a layer's experts)
    // From one matrix of the stack to the next; 0: n_bytes / n_mat (the stack is this tensor
    // alone, not rows of a merged one: ffn_gate_up_exps holds gate then up in each matrix).
    uint64_t mat_stride = 0;

    bool present() const { return data != nullptr; }
    // The values of an f32 tensor (norms, biases, sinks: the loader keeps those f32).
    const float* f32() const { return reinterpret_cast<const float*>(data); }
    const uint8_t* row(int64_t r) const { return data + r * (n_bytes / static_cast<uint64_t>(n_out * n_mat)); }
    // Matrix e of a stack, as a tensor of its own.
    WeightTensor mat(int64_t e) const {
        const uint64_t bytes = n_bytes / static_cast<uint64_t>(n_mat);
        return {type, data + static_cast<uint64_t>(e) * (mat_stride ? mat_stride : bytes), n_in, n_out, bytes};
    }
};

struct LayerWeights {
    WeightTensor attn_norm;               // [n_embd] f32
    WeightTensor wq, wk, wv, wo;          // [n_embd, n_embd_q], [n_embd, n_embd_kv] x2, [n_embd_q, n_embd]
    WeightTensor bq, bk, bv;              // [n_embd_q], [n_embd_kv] x2 (qwen2 only)
    WeightTensor bo;                      // [n_embd]: the output projection's bias (gpt-oss)
    WeightTensor attn_sinks;              // [n_head] f32: a sink logit per head (gpt-oss; kernels/cpu/attention.h)
    WeightTensor q_norm, k_norm;          // [head_dim] f32: RMSNorm of each Q and K head before RoPE (qwen3)
    WeightTensor attn_post_norm;          // [n_embd] f32: RMSNorm of the attention output before the residual add (Gemma)
    WeightTensor ffn_norm;                // [n_embd] f32
    WeightTensor ffn_post_norm;           // [n_embd] f32: likewise for the MLP output
    WeightTensor ffn_gate, ffn_up;        // [n_embd, n_ff]
    WeightTensor ffn_down;                // [n_ff, n_embd]
    // Mixture-of-experts layers, in place of the MLP above.
    WeightTensor ffn_gate_inp;            // [n_embd, n_expert]: the router
    WeightTensor ffn_gate_exps, ffn_up_exps;  // [n_embd, n_ff_exp, n_expert]
    WeightTensor ffn_down_exps;           // [n_ff_exp, n_embd, n_expert]
    WeightTensor ffn_gate_inp_b;          // [n_expert]: the router's bias (gpt-oss)
    WeightTensor ffn_gate_exps_b, ffn_up_exps_b;  // [n_ff_exp, n_expert]: each expert's biases (gpt-oss)
    WeightTensor ffn_down_exps_b;         // [n_embd, n_expert]
    WeightTensor exp_probs_b;             // [n_expert]: added to the scores that choose, not to the weights (DeepSeek-V3)
    WeightTensor ffn_gate_shexp, ffn_up_shexp;  // [n_embd, n_ff_exp · n_shared]: the shared experts
    WeightTensor ffn_down_shexp;          // [n_ff_exp · n_shared, n_embd]
    // Latent attention (model_hparams.h LatentAttentionHparams), L = kv_lora_rank, r = n_rot:
    WeightTensor wq_a, q_a_norm, wq_b;    // [n_embd, q_lora], [q_lora] f32, [q_lora, n_head·head_k] (wq when q_lora is 0)
    WeightTensor wkv_a_mqa;               // [n_embd, L + r]: c, then the RoPE key
    WeightTensor kv_a_norm;               // [L] f32
    WeightTensor wk_b;                    // [head_k − r, L, n_head]: per head, L rows (its nope key part, transposed)
    WeightTensor wv_b;                    // [L, head_v, n_head]: per head, head_v rows
    WeightTensor wkv_b;                   // [L, n_head·(head_k − r + head_v)]: older files' k_b and v_b in one (per head: key rows, then value rows)
};

// A layer's matrices: the one list every pass over them walks (a backend's packing, --weights
// conversion, the types a model reports, its roofline bytes). `Layer` is LayerWeights or a
// backend's layer with the same member names; absent ones (the dense MLP of a layer of experts)
// are skipped by their readers. The experts are stacks of matrices (WeightTensor::n_mat).
template <class Layer>
constexpr auto layer_matrices(Layer& l) {
    return std::array{&l.wq,        &l.wk,           &l.wv,           &l.wo,          &l.ffn_gate,       &l.ffn_up,
                      &l.ffn_down,  &l.ffn_gate_inp, &l.wq_a,         &l.wq_b,        &l.wkv_a_mqa,      &l.ffn_gate_shexp,
                      &l.ffn_up_shexp, &l.ffn_down_shexp, &l.wkv_b};
}
template <class Layer>
constexpr auto layer_expert_matrices(Layer& l) {
    return std::array{&l.ffn_gate_exps, &l.ffn_up_exps, &l.ffn_down_exps};
}
// Stacks of one matrix per attention head (latent attention's k_b and v_b): all read every step.
template <class Layer>
constexpr auto layer_head_matrices(Layer& l) {
    return std::array{&l.wk_b, &l.wv_b};
}
// Its vectors: norms and biases.
template <class Layer>
constexpr auto layer_vectors(Layer& l) {
    return std::array{&l.attn_norm, &l.ffn_norm,   &l.attn_post_norm, &l.ffn_post_norm,  &l.q_norm,          &l.k_norm,
                      &l.bq,        &l.bk,         &l.bv,             &l.bo,             &l.attn_sinks,      &l.ffn_gate_inp_b,
                      &l.ffn_gate_exps_b, &l.ffn_up_exps_b, &l.ffn_down_exps_b, &l.exp_probs_b, &l.q_a_norm, &l.kv_a_norm};
}
// Every tensor of a LayerWeights (matrices, stacks, vectors).
inline std::vector<const WeightTensor*> layer_tensors(const LayerWeights& l) {
    std::vector<const WeightTensor*> out;
    for (const WeightTensor* t : layer_matrices(l)) out.push_back(t);
    for (const WeightTensor* t : layer_expert_matrices(l)) out.push_back(t);
    for (const WeightTensor* t : layer_head_matrices(l)) out.push_back(t);
    for (const WeightTensor* t : layer_vectors(l)) out.push_back(t);
    return out;
}

struct ModelWeights {
    WeightTensor token_embd;              // [n_embd, n_vocab]
    WeightTensor output_norm;             // [n_embd] f32
    WeightTensor output;                  // [n_embd, n_vocab]; token_embd when tied
    bool tied_output = false;
    WeightTensor rope_freqs;              // [n_rot/2] f32, optional per-dimension frequency factors
    std::vector<LayerWeights> layers;
    uint64_t n_params = 0;
    uint64_t n_bytes = 0;                 // bytes of all tensors in the file
};

}  // namespace workbench
