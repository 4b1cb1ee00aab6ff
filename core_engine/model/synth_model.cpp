// `synth`: random-weight models of a named shape, laid out as an architecture file declares its
// tensors (model/arch/), so every architecture the engine runs can be written at any size for
// tests and benchmarks without downloading weights.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/synth_model.h"
#include "model/requantize.h"
#include "model/arch/architecture.h"
#include "tensor/dequantize.h"
#include "tensor/dtype.h"
#include "workbench/model_file.h"

namespace workbench {
namespace {

struct SynthShape {
    const char* name;
    int32_t n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim, n_vocab, n_ctx;
    // An architecture with layers of experts: how many, how many a token runs, their width
    // (0: 8 experts, 2 a token, a quarter of n_ff each, at least 32).
    int32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    // Latent attention (deepseek2): head_dim is a query head (position-free part + RoPE part),
    // then its RoPE part, value width, the KV latent's and the queries' ranks (0: one matrix),
    // the leading dense layers and the shared experts. 0 everywhere: derived from head_dim.
    int32_t rope_dims = 0, head_v = 0, kv_lora_rank = 0, q_lora_rank = 0, n_dense_lead = 0, n_shared = 0;
};

// tiny: what the architecture tests use; small: the smallest with 32-wide heads (what quantized KV
// types need); the others: published models' dimensions.
constexpr SynthShape kShapes[] = {
    {"tiny", 3, 64, 96, 4, 2, 16, 97, 128},
    {"small", 2, 256, 512, 8, 4, 32, 512, 1024},
    {"llama-1b", 16, 2048, 8192, 32, 8, 64, 32000, 4096},      // Llama 3.2 1B's block
    {"llama-3b", 28, 3072, 8192, 24, 8, 128, 32000, 4096},     // Llama 3.2 3B's block
    {"llama-8b", 32, 4096, 14336, 32, 8, 128, 32000, 8192},    // Llama 3.1 8B's block (its vocabulary is 128k)
    {"qwen3-0.6b", 28, 1024, 3072, 16, 8, 128, 32000, 4096},   // Qwen3 0.6B's block
    {"gemma3-270m", 18, 640, 2048, 4, 1, 256, 32000, 32768},   // Gemma 3 270M's block (its vocabulary is 262k)
    // Qwen3-30B-A3B's block (128 experts of 768, 8 a token) in 12 of its 48 layers: about 0.7 B
    // weights read per token of 7.5 B held.
    {"qwen3moe-a3b-12l", 12, 2048, 6144, 32, 4, 128, 32000, 4096, 128, 8, 768},
    // The same block in 18 layers: the 1B-active class (about 1.1 B weights read per token of
    // 11.3 B held; 6.3 GB at q4_k).
    {"qwen3moe-a3b-18l", 18, 2048, 6144, 32, 4, 128, 32000, 4096, 128, 8, 768},
    // DeepSeek-V2-Lite's block (latent rank 512 + a 64-value RoPE key, 16 heads of 128 + 64,
    // 64 experts of 1408, 6 a token, 2 shared, the first layer dense) in 8 of its 27 layers.
    {"deepseek-v2-lite-8l", 8, 2048, 10944, 16, 16, 192, 32000, 4096, 64, 6, 1408, 64, 128, 512, 0, 1, 2},
};

// Uniform in [-a, a) from a splitmix64 stream: the variance of N(0, s²) for a = s·√3, and fast
// enough for a billion weights.
class Noise {
public:
    explicit Noise(uint64_t seed) : state_(seed) {}
    float next(float a) {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return a * (static_cast<float>(z >> 40) / static_cast<float>(1ull << 23) - 1.0f);
    }

private:
    uint64_t state_;
};

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "synth: " + what); }

}  // namespace

void add_placeholder_vocab(GgufWriter& w, int32_t n_vocab) {
    std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types{2, 3, 3};  // unknown, control, control
    for (int32_t i = 3; i < n_vocab; ++i) tokens.push_back(std::string("t").append(std::to_string(i))), types.push_back(1);
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_string_array("tokenizer.ggml.tokens", tokens);
    w.set_float32_array("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f));
    w.set_int32_array("tokenizer.ggml.token_type", types);
    w.set_uint32("tokenizer.ggml.bos_token_id", 1);
    w.set_uint32("tokenizer.ggml.eos_token_id", 2);
    w.set_bool("tokenizer.ggml.add_bos_token", false);
}

std::vector<std::string> synth_shape_names() {
    std::vector<std::string> out;
    for (const SynthShape& s : kShapes) out.emplace_back(s.name);
    return out;
}

Status write_synth_model(const std::string& arch_name, const std::string& shape_name, const std::string& type_name,
                         const std::string& vocab_from, const std::string& out_path, uint64_t seed, const std::string& expert_type_name) {
    const Architecture* arch = find_architecture(arch_name);
    if (!arch) return bad("architecture '" + arch_name + "' is not one the engine runs (" + supported_architectures() + ")");
    const SynthShape* shape = nullptr;
    std::string names;
    for (const SynthShape& s : kShapes) {
        names += (names.empty() ? "" : ", ") + std::string(s.name);
        if (shape_name == s.name) shape = &s;
    }
    if (!shape) return bad("shape '" + shape_name + "' is not known (" + names + ")");
    const std::optional<DType> type = dtype_from_name(type_name);
    if (!type || !dtype_traits(*type).dequantizable || !quantize_row(*type, nullptr, nullptr, 0))
        return bad("type '" + type_name + "' cannot be written (" + requantize_type_names() + ")");
    const std::optional<DType> expert_type = expert_type_name.empty() ? type : dtype_from_name(expert_type_name);
    if (!expert_type || !dtype_traits(*expert_type).dequantizable || !quantize_row(*expert_type, nullptr, nullptr, 0))
        return bad("expert type '" + expert_type_name + "' cannot be written (mxfp4, q8_0, q4_0, ...)");

    GgufWriter w;
    int32_t n_vocab = shape->n_vocab;
    if (!vocab_from.empty()) {
        WB_ASSIGN_OR_RETURN(auto source, GgufFile::open(vocab_from));
        for (const auto& [key, value] : source->metadata())
            if (key.rfind("tokenizer.", 0) == 0) w.set_value(key, value);
        const auto tokens = source->metadata().find("tokenizer.ggml.tokens");
        if (tokens == source->metadata().end()) return bad(vocab_from + " has no tokenizer.ggml.tokens to copy");
        n_vocab = static_cast<int32_t>(tokens->second.array_count);
    } else {
        add_placeholder_vocab(w, n_vocab);
    }
    const std::string p = arch_name + ".";
    w.set_string("general.architecture", arch_name);
    // The name leaves out the architecture: llama.cpp keys token fix-ups on model names ("phi3").
    w.set_string("general.name", "synth " + shape_name);
    w.set_uint32(p + "block_count", static_cast<uint32_t>(shape->n_layer));
    w.set_uint32(p + "context_length", static_cast<uint32_t>(shape->n_ctx));
    w.set_uint32(p + "embedding_length", static_cast<uint32_t>(shape->n_embd));
    w.set_uint32(p + "feed_forward_length", static_cast<uint32_t>(shape->n_ff));
    w.set_uint32(p + "attention.head_count", static_cast<uint32_t>(shape->n_head));
    w.set_uint32(p + "attention.head_count_kv", static_cast<uint32_t>(shape->n_head_kv));
    w.set_uint32(p + "attention.key_length", static_cast<uint32_t>(shape->head_dim));
    w.set_uint32(p + "attention.value_length", static_cast<uint32_t>(shape->head_dim));
    w.set_uint32(p + "rope.dimension_count", static_cast<uint32_t>(shape->head_dim));
    w.set_float32(p + "attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_float32(p + "rope.freq_base", arch->write_synth_hparams ? 1e6f : 10000.0f);  // a trained local pattern: local layers rotate at 10k
    if (arch->write_synth_hparams) arch->write_synth_hparams(w, shape->n_layer, shape->n_ctx);

    ModelHparams hp;  // the shape in the loader's terms, so sizes come from the same function
    hp.n_embd = shape->n_embd;
    hp.n_ff = shape->n_ff;
    hp.n_head = shape->n_head;
    hp.n_head_kv = shape->n_head_kv;
    hp.head_dim = shape->head_dim;
    const bool experts = std::any_of(arch->layer_tensors.begin(), arch->layer_tensors.end(),
                                     [](const LayerTensor& t) { return t.n_mat == TensorDim::expert; });
    if (experts) {
        ExpertHparams& e = hp.experts;
        e.n_expert = shape->n_expert > 0 ? shape->n_expert : 8;
        e.n_expert_used = shape->n_expert > 0 ? shape->n_expert_used : 2;
        e.n_ff_exp = shape->n_expert > 0 ? shape->n_ff_exp : std::max(32, shape->n_ff / 4 / 32 * 32);
        w.set_uint32(p + "expert_count", static_cast<uint32_t>(e.n_expert));
        w.set_uint32(p + "expert_used_count", static_cast<uint32_t>(e.n_expert_used));
        w.set_uint32(p + "expert_feed_forward_length", static_cast<uint32_t>(e.n_ff_exp));
    }
    const bool latent = std::any_of(arch->layer_tensors.begin(), arch->layer_tensors.end(),
                                    [](const LayerTensor& t) { return t.n_out == TensorDim::kv_lora_rope; });
    if (latent) {
        // The file as DeepSeek's converter writes it: one KV head of [c | RoPE key], V = c.
        LatentAttentionHparams& m = hp.mla;
        hp.n_rot = shape->rope_dims > 0 ? shape->rope_dims : std::max(16, shape->head_dim);
        // Derived widths stay multiples of 32, so block types can store every matrix.
        m.head_k = shape->rope_dims > 0 ? shape->head_dim : std::max(32, shape->head_dim) + hp.n_rot;
        m.head_v = shape->head_v > 0 ? shape->head_v : std::max(32, shape->head_dim);
        m.kv_lora_rank = shape->kv_lora_rank > 0 ? shape->kv_lora_rank : std::max(64, 4 * shape->head_dim);
        m.q_lora_rank = shape->q_lora_rank;
        hp.experts.n_dense_lead = shape->n_expert > 0 ? shape->n_dense_lead : 1;
        hp.experts.n_shared = shape->n_expert > 0 ? shape->n_shared : 1;
        w.set_uint32(p + "attention.head_count_kv", 1);
        w.set_uint32(p + "attention.key_length", static_cast<uint32_t>(m.kv_lora_rank + hp.n_rot));
        w.set_uint32(p + "attention.value_length", static_cast<uint32_t>(m.kv_lora_rank));
        w.set_uint32(p + "attention.key_length_mla", static_cast<uint32_t>(m.head_k));
        w.set_uint32(p + "attention.value_length_mla", static_cast<uint32_t>(m.head_v));
        w.set_uint32(p + "rope.dimension_count", static_cast<uint32_t>(hp.n_rot));
        w.set_uint32(p + "attention.kv_lora_rank", static_cast<uint32_t>(m.kv_lora_rank));
        w.set_uint32(p + "attention.q_lora_rank", static_cast<uint32_t>(m.q_lora_rank));
        w.set_uint32(p + "leading_dense_block_count", static_cast<uint32_t>(hp.experts.n_dense_lead));
        w.set_uint32(p + "expert_shared_count", static_cast<uint32_t>(hp.experts.n_shared));
        w.set_float32(p + "expert_weights_scale", 1.0f);
        w.set_bool(p + "expert_weights_norm", false);
        w.set_uint32(p + "expert_gating_func", 1);
    }
    auto dim = [&](TensorDim d) { return tensor_dim(d, hp); };
    Noise noise(seed);
    std::vector<float> values;
    // Norms are f32 near 1, biases and sink logits f32 near 0; matrices are `type` with the
    // variance of 1/n_in; a router stays f32 (as llama-quantize keeps it), its rows spread
    // 3/sqrt(n_in) so its choices are clear.
    auto add = [&](const std::string& name, int64_t n_in, int64_t n_out, int64_t n_mat = 1) -> Status {
        const bool vector = n_out == 1 || name.ends_with(".bias");
        const bool norm = name.find("norm") != std::string::npos;
        const bool router = name.find("ffn_gate_inp.weight") != std::string::npos;
        const DType t = vector || router ? DType::f32 : n_mat > 1 ? *expert_type : *type;
        const auto& traits = dtype_traits(t);
        if (n_in % traits.block_elements != 0)
            return bad("type " + std::string(dtype_name(t)) + " stores rows in blocks of " + std::to_string(traits.block_elements) + "; " + name +
                       "'s rows of " + std::to_string(n_in) + " do not divide (pick another shape or type)");
        const int64_t n = n_in * n_out * n_mat;
        values.resize(static_cast<size_t>(n));
        const float a = vector ? 0.1f : std::sqrt(3.0f / static_cast<float>(n_in)) * (router ? 3.0f : 1.0f);
        for (float& v : values) v = (norm ? 1.0f : 0.0f) + noise.next(a);
        std::vector<uint8_t> bytes(static_cast<size_t>(n / traits.block_elements * traits.block_bytes));
        if (t == DType::f32) std::memcpy(bytes.data(), values.data(), bytes.size());
        else quantize_row(t, values.data(), bytes.data(), n);
        std::vector<uint64_t> ne{static_cast<uint64_t>(n_in)};
        if (n_out > 1 || n_mat > 1) ne.push_back(static_cast<uint64_t>(n_out));
        if (n_mat > 1) ne.push_back(static_cast<uint64_t>(n_mat));
        return w.add_tensor(name, ne, t, bytes);
    };
    WB_RETURN_IF_ERROR(add("token_embd.weight", shape->n_embd, n_vocab));  // tied (no output.weight) where the architecture allows
    WB_RETURN_IF_ERROR(add("output_norm.weight", shape->n_embd, 1));
    if (arch->untied_output) WB_RETURN_IF_ERROR(add("output.weight", shape->n_embd, n_vocab));
    for (int32_t il = 0; il < shape->n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        for (const LayerTensor& t : arch->layer_tensors)
            if (t.required && (!t.present_if || t.present_if(hp, il))) WB_RETURN_IF_ERROR(add(b + t.name, dim(t.n_in), dim(t.n_out), dim(t.n_mat)));
        for (const FusedLayerTensor& t : arch->fused_layer_tensors)
            if (!t.present_if || t.present_if(hp, il)) WB_RETURN_IF_ERROR(add(b + t.name, dim(t.n_in), fused_rows(t, hp), dim(t.n_mat)));
    }
    return w.write_to(out_path);
}

}  // namespace workbench
