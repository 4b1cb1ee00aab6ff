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
    if (arch == "phi3") return s;  // fused attn_qkv and gate/up
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
