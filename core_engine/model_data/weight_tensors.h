// The model's tensors as views into the mapped GGUF file (model/weights.h binds and checks them).
// Matrices follow ggml's convention: a weight of shape [n_in, n_out] stores n_out rows of n_in
// elements, so y = W·x is one dot product per row.
#pragma once

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

    bool present() const { return data != nullptr; }
    const uint8_t* row(int64_t r) const { return data + r * (n_bytes / n_out); }
};

struct LayerWeights {
    WeightTensor attn_norm;               // [n_embd] f32
    WeightTensor wq, wk, wv, wo;          // [n_embd, n_embd_q], [n_embd, n_embd_kv] x2, [n_embd_q, n_embd]
    WeightTensor bq, bk, bv;              // [n_embd_q], [n_embd_kv] x2 (qwen2 only)
    WeightTensor q_norm, k_norm;          // [head_dim] f32: RMSNorm of each Q and K head before RoPE (qwen3)
    WeightTensor attn_post_norm;          // [n_embd] f32: RMSNorm of the attention output before the residual add (Gemma)
    WeightTensor ffn_norm;                // [n_embd] f32
    WeightTensor ffn_post_norm;           // [n_embd] f32: likewise for the MLP output
    WeightTensor ffn_gate, ffn_up;        // [n_embd, n_ff]
    WeightTensor ffn_down;                // [n_ff, n_embd]
};

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
