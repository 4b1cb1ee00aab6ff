// The architectures the engine loads: one registration per file in this folder.
#include "model/arch/architecture.h"
#include "workbench/model_file.h"

namespace workbench {

extern const ArchitectureRegistration kLlamaArchitecture, kMistralArchitecture, kQwen2Architecture, kQwen3Architecture,
    kPhi3Architecture, kGemma3Architecture, kQwen3MoeArchitecture, kGptOssArchitecture, kDeepseek2Architecture;

namespace {

const std::vector<Architecture>& registry() {
    static const std::vector<Architecture> all = [] {
        std::vector<Architecture> out;
        for (const ArchitectureRegistration* r : {&kLlamaArchitecture, &kMistralArchitecture, &kQwen2Architecture, &kQwen3Architecture,
                                                 &kPhi3Architecture, &kGemma3Architecture, &kQwen3MoeArchitecture,
                                                 &kGptOssArchitecture, &kDeepseek2Architecture})
            out.push_back(r->describe());
        return out;
    }();
    return all;
}

}  // namespace

const Architecture* find_architecture(std::string_view name) {
    for (const Architecture& a : registry())
        if (a.name == name) return &a;
    return nullptr;
}

std::vector<std::string> architecture_names() {
    std::vector<std::string> out;
    for (const Architecture& a : registry()) out.push_back(a.name);
    return out;
}

std::string supported_architectures() {
    std::string out;
    for (const std::string& name : architecture_names()) out += (out.empty() ? "" : ", ") + name;
    return out;
}

int64_t tensor_dim(TensorDim d, const ModelHparams& hp) {
    switch (d) {
    case TensorDim::one: return 1;
    case TensorDim::embd: return hp.n_embd;
    case TensorDim::embd_q: return hp.n_embd_q();
    case TensorDim::embd_kv: return hp.n_embd_kv();
    case TensorDim::ff: return hp.n_ff;
    case TensorDim::head: return hp.head_dim;
    case TensorDim::expert: return hp.experts.n_expert;
    case TensorDim::ff_exp: return hp.experts.n_ff_exp;
    case TensorDim::heads: return hp.n_head;
    case TensorDim::ff_shexp: return static_cast<int64_t>(hp.experts.n_ff_exp) * hp.experts.n_shared;
    case TensorDim::q_lora: return hp.mla.q_lora_rank;
    case TensorDim::kv_lora: return hp.mla.kv_lora_rank;
    case TensorDim::kv_lora_rope: return static_cast<int64_t>(hp.mla.kv_lora_rank) + hp.n_rot;
    case TensorDim::mla_q: return static_cast<int64_t>(hp.n_head) * hp.mla.head_k;
    case TensorDim::mla_nope: return hp.mla_nope();
    case TensorDim::mla_v: return hp.mla.head_v;
    case TensorDim::mla_o: return static_cast<int64_t>(hp.n_head) * hp.mla.head_v;
    case TensorDim::mla_kv_b: return static_cast<int64_t>(hp.n_head) * (hp.mla_nope() + hp.mla.head_v);
    }
    return 0;
}

int64_t fused_rows(const FusedLayerTensor& t, const ModelHparams& hp) {
    int64_t rows = 0;
    for (const auto& part : t.parts) rows += tensor_dim(part.second, hp);
    return rows;
}

Architecture llama_block_architecture(std::string name, RopeStyle rope_style, bool qkv_bias) {
    Architecture a;
    a.name = std::move(name);
    a.rope_style = rope_style;
    a.rope_scaling = {"none", "linear"};
    a.layer_tensors = llama_block_tensors(qkv_bias);
    return a;
}

void add_qk_norm_tensors(std::vector<LayerTensor>& tensors) {
    tensors.push_back({"attn_q_norm.weight", &LayerWeights::q_norm, TensorDim::head, TensorDim::one});
    tensors.push_back({"attn_k_norm.weight", &LayerWeights::k_norm, TensorDim::head, TensorDim::one});
}

std::vector<LayerTensor> llama_block_tensors(bool qkv_bias) {
    using D = TensorDim;
    return {
        {"attn_norm.weight", &LayerWeights::attn_norm, D::embd, D::one},
        {"attn_q.weight", &LayerWeights::wq, D::embd, D::embd_q},
        {"attn_k.weight", &LayerWeights::wk, D::embd, D::embd_kv},
        {"attn_v.weight", &LayerWeights::wv, D::embd, D::embd_kv},
        {"attn_output.weight", &LayerWeights::wo, D::embd_q, D::embd},
        {"attn_q.bias", &LayerWeights::bq, D::embd_q, D::one, qkv_bias},
        {"attn_k.bias", &LayerWeights::bk, D::embd_kv, D::one, qkv_bias},
        {"attn_v.bias", &LayerWeights::bv, D::embd_kv, D::one, qkv_bias},
        {"ffn_norm.weight", &LayerWeights::ffn_norm, D::embd, D::one},
        {"ffn_gate.weight", &LayerWeights::ffn_gate, D::embd, D::ff},
        {"ffn_up.weight", &LayerWeights::ffn_up, D::embd, D::ff},
        {"ffn_down.weight", &LayerWeights::ffn_down, D::ff, D::embd},
    };
}

std::vector<LayerTensor> llama_expert_block_tensors(bool qkv_bias) {
    using D = TensorDim;
    std::vector<LayerTensor> out;
    for (const LayerTensor& t : llama_block_tensors(qkv_bias))
        if (t.slot != &LayerWeights::ffn_gate && t.slot != &LayerWeights::ffn_up && t.slot != &LayerWeights::ffn_down) out.push_back(t);
    out.push_back({"ffn_gate_inp.weight", &LayerWeights::ffn_gate_inp, D::embd, D::expert});
    out.push_back({"ffn_gate_exps.weight", &LayerWeights::ffn_gate_exps, D::embd, D::ff_exp, true, D::expert});
    out.push_back({"ffn_up_exps.weight", &LayerWeights::ffn_up_exps, D::embd, D::ff_exp, true, D::expert});
    out.push_back({"ffn_down_exps.weight", &LayerWeights::ffn_down_exps, D::ff_exp, D::embd, true, D::expert});
    return out;
}

}  // namespace workbench
