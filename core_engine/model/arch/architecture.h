// What one architecture file declares, and the registry that finds it by the GGUF's
// general.architecture: its hyperparameter conventions (RoPE pairing, accepted RoPE scaling),
// the tensors each layer carries with the shapes the weights loader checks, and its block
// structure as the forward skeleton (model/decoder_model.cpp) runs it. Adding an architecture is
// one file here and one line in registry.cpp; a structure the skeleton does not run yet arrives
// as a field here with the architecture that needs it.
#pragma once

#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/chat_template.h"

namespace workbench {

// A layer tensor's shape in the model's dimensions ([n_in, n_out] as ggml lists them).
// expert: the experts a layer holds (a stack's ne[2]); ff_exp: an expert's MLP width.
// heads: the query heads (a value per head: gpt-oss's sink logits). ff_shexp: the shared
// experts' width. Latent attention (LatentAttentionHparams): q_lora, kv_lora (L), kv_lora_rope
// (L + n_rot), mla_q (n_head · head_k), mla_nope (head_k − n_rot), mla_v (head_v), mla_o
// (n_head · head_v), mla_kv_b (n_head · (head_k − n_rot + head_v)).
enum class TensorDim {
    one, embd, embd_q, embd_kv, ff, head, expert, ff_exp, heads, ff_shexp,
    q_lora, kv_lora, kv_lora_rope, mla_q, mla_nope, mla_v, mla_o, mla_kv_b
};

// Which layers of a model carry a tensor, when not all (a model's leading dense layers, its
// layers of experts, one of two forms a file may take).
using LayerPredicate = bool (*)(const ModelHparams& hp, int32_t layer);

struct LayerTensor {
    const char* name;                 // after "blk.N.": "attn_q.weight"
    WeightTensor LayerWeights::*slot;
    TensorDim n_in, n_out;
    bool required = true;
    TensorDim n_mat = TensorDim::one; // matrices stacked (the experts' [n_in, n_out, n_expert])
    LayerPredicate present_if = nullptr;  // null: every layer
};

// One stored tensor holding several slots' rows one after another (Phi-3's attn_qkv: Q, K, V;
// its ffn_up: gate then up; DeepSeek's ffn_gate_up_exps: gate then up in each expert's
// matrix): bound once, each slot a view of its rows.
struct FusedLayerTensor {
    const char* name;
    TensorDim n_in;
    std::vector<std::pair<WeightTensor LayerWeights::*, TensorDim>> parts;  // in row order
    TensorDim n_mat = TensorDim::one;
    LayerPredicate present_if = nullptr;
};

// A tensor whose presence means a feature the engine does not run: refused with `feature`.
struct RefusedTensor {
    const char* name;     // "rope_factors_long.weight"
    const char* feature;  // "LongRoPE (the 128k-context Phi-3 models)"
};

// The MLP's gate activation: silu (SwiGLU), tanh-approximated GELU (GeGLU) or gpt-oss's clamped SwiGLU.
enum class FfnActivation { silu, gelu_tanh, swiglu_clamped };

struct Architecture {
    std::string name;                              // general.architecture
    RopeStyle rope_style = RopeStyle::normal;
    FfnActivation activation = FfnActivation::silu;
    bool scale_embeddings = false;                 // token embeddings times sqrt(n_embd)
    // Keys only this architecture reads (its local/global layer pattern, soft-capping, ...),
    // after the common ones; errors name the key.
    Status (*read_hparams)(const GgufFile& file, ModelHparams& hp) = nullptr;
    // What `synth` writes beyond the common keys (a trained local/global pattern), for a model of
    // n_layer layers and context n_ctx.
    void (*write_synth_hparams)(GgufWriter& w, int32_t n_layer, int32_t n_ctx) = nullptr;
    // The chat format a file of this architecture gets when it carries no template.
    ChatTemplateFamily chat_family = ChatTemplateFamily::chatml;
    bool untied_output = false;                    // output.weight is required (no tying to the embedding)
    std::vector<std::string> rope_scaling;         // rope.scaling.type values it runs ("none", "linear")
    std::vector<LayerTensor> layer_tensors;
    std::vector<FusedLayerTensor> fused_layer_tensors;
    std::vector<RefusedTensor> refused_tensors;
};

// What an architecture file registers.
struct ArchitectureRegistration {
    Architecture (*describe)();
};

// A dimension's size in a model of hyperparameters `hp`; the rows a fused tensor stores.
int64_t tensor_dim(TensorDim d, const ModelHparams& hp);
int64_t fused_rows(const FusedLayerTensor& t, const ModelHparams& hp);

// The architecture named `name`, or nullptr.
const Architecture* find_architecture(std::string_view name);
// "llama, mistral, qwen2": the names the engine loads, for messages.
std::string supported_architectures();

// An architecture of the pre-norm llama block (llama_block_tensors), accepting no or linear RoPE scaling.
Architecture llama_block_architecture(std::string name, RopeStyle rope_style, bool qkv_bias);

// The pre-norm llama block's tensors: attention norm, Q/K/V/O, FFN norm, SwiGLU gate/up/down,
// and Q/K/V biases (required when `qkv_bias`, else taken when present).
std::vector<LayerTensor> llama_block_tensors(bool qkv_bias);
// The same block with a layer of experts in place of its MLP: the router (ffn_gate_inp) and the
// stacked SwiGLU experts (ffn_gate_exps, ffn_up_exps, ffn_down_exps).
std::vector<LayerTensor> llama_expert_block_tensors(bool qkv_bias);
// Appends the per-head QK-norm weights (attn_q_norm, attn_k_norm: [head_dim] each) to `tensors`.
void add_qk_norm_tensors(std::vector<LayerTensor>& tensors);

}  // namespace workbench
