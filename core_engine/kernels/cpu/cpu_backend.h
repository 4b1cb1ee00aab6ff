// The CPU backend: the model's matrices repacked for the SIMD kernels (in huge-page slabs), the
// step's activations as f32 rows (and the 8-bit blocks quantized matrices read), the thread pool
// of the step, and each Backend operation run by the kernels of this folder with the fusions that
// pay on a CPU — biases, QK-norm and RoPE in the Q/K/V matmul's epilogue and SwiGLU in the
// gate/up one for a few tokens, as passes over token rows for a prompt.
#pragma once

#include <functional>
#include <memory>

#include "kernels/backend.h"
#include "kernels/expert_routing.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/latent_layer.h"
#include "kernels/cpu/huge_page_arena.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/rope.h"
#include "model_data/model_hparams.h"
#include "model_data/weight_tensors.h"
#include "workbench/status.h"

namespace workbench {

class CpuBackend final : public Backend {
public:
    // Repacks every matrix of `w`, which (like `hp`) must outlive the backend. Errors:
    // resource_exhausted. `on_repacked(data, n_bytes)` is told of each file range as soon as its
    // repacked copy exists, so the caller can release those pages one matrix at a time.
    static Result<std::unique_ptr<CpuBackend>> create(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                      const std::function<void(const uint8_t*, uint64_t)>& on_repacked = {});

    const char* name() const override { return "cpu"; }
    void begin_step(std::span<const int32_t> positions, ThreadPool& pool) override;
    void embed(std::span<const TokenId> tokens) override;
    void residual_norm(const ResidualNorm& op) override;
    void matmul_group(int32_t layer, MatmulGroup group, bool own_kv = true) override;
    HostRows host_rows(int32_t layer, const LayerKvStorage& kv, bool with_kv) override;
    void attend(int32_t layer, const LayerAttention& attention) override;
    LatentRows latent_in(int32_t layer, const LatentLayer& latent) override;
    void attend_latent(int32_t layer, const LatentLayer& latent, LatentRows cached, int32_t n_all, int64_t n_generated) override;
    HostRows latent_absorbed_in(int32_t layer, const LatentLayer& latent) override;
    void latent_absorbed_out(int32_t layer, const LatentLayer& latent) override;
    void output_head(std::span<const int64_t> rows, float* logits) override;
    void output_top_logits(std::span<const int64_t> rows, int32_t k, TopLogit* top) override;
    void append_normed_rows(std::vector<float>& out) const override;
    ExpertReads expert_reads_last_step() const override { return expert_reads_; }
    std::span<const float> router_margins_last_step() const override { return router_margins_; }
    std::optional<uint64_t> latent_head_bytes(int32_t il) const override;

private:
    struct PackedLayer {  // the member names of LayerWeights (layer_matrices walks both)
        PackedMatrix wq, wk, wv, wo, ffn_gate, ffn_up, ffn_down, ffn_gate_inp, wq_a, wq_b, wkv_a_mqa, ffn_gate_shexp, ffn_up_shexp,
            ffn_down_shexp;
        PackedMatrix wkv_b;  // never packed: latent_heads_from_kv_b makes wk_b and wv_b of it
        std::vector<PackedMatrix> ffn_gate_exps, ffn_up_exps, ffn_down_exps;  // one per expert
        std::vector<PackedMatrix> wk_b, wv_b;                                 // one per head
        PackedMatrix wk_up, wv_up;   // latent attention expanded: every head's W_UK, W_UV as one matrix each
    };
    using PackFn = std::function<Status(const WeightTensor&, PackedMatrix&)>;

    CpuBackend(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options) : hp_(hp), w_(w), options_(options) {}
    void ensure_scratch(int64_t n_tokens);
    static void fit(std::vector<float>& v, int64_t size);  // grows v to at least size
    static void add_bias(float* rows, const WeightTensor& bias, int64_t n_rows);  // bias.n_in values a row; none when absent
    // Elementwise work over token rows: split across the pool for a prompt, inline for a few tokens.
    void token_rows(const std::function<void(int64_t, int64_t)>& fn);
    void attention_in(int32_t layer, bool own_kv);
    void mlp_in(int32_t layer);
    void mlp_out(int32_t layer);
    // A SwiGLU MLP over the normed rows (the dense MLP, or the shared experts beside routed
    // ones): gate and up into gate_ (activated, and as 8-bit blocks in ff_q_ when `down` is
    // quantized), then down into `out`.
    void swiglu_mlp_in(const PackedMatrix& gate, const PackedMatrix& up, const PackedMatrix& down);
    void swiglu_mlp_out(const PackedMatrix& down, float* out);
    // Latent attention in place of attention_in and the output projection (cpu_backend_mla.cpp).
    void latent_attention_in(int32_t layer);
    void latent_attention_out(int32_t layer);
    // y[t·ldy + h·head_stride + r] = ws[h / group] · x_h[t] for every head h < ws.size() · group, x holding each
    // head's n_ rows of n_in in turn.
    void head_products(const std::vector<PackedMatrix>& ws, const float* x, int64_t n_in, float* y, int64_t head_stride, int64_t ldy,
                       int64_t group = 1);
    Status latent_heads_from_kv_b(const LayerWeights& l, PackedLayer& p, const PackFn& pack);
    Status latent_up_projections(const LayerWeights& l, PackedLayer& p, const PackFn& pack);
    Status pack_made_matrix(std::vector<float> values, int64_t n_in, int64_t n_out, DType file_type, const PackFn& pack, PackedMatrix& out);
    void expanded_attention_rows(int32_t layer);
    // A layer of experts in place of mlp_in / mlp_out (cpu_backend_experts.cpp).
    void experts_in(int32_t layer);
    void experts_out(int32_t layer);
    void add_expert_biases(const WeightTensor& bias, float* rows, int64_t width) const;
    // The MLP's gate activation on n elements (in place into gate), SwiGLU or GeGLU.
    void activate(float* gate, const float* up, int64_t n) const;

    const ModelHparams& hp_;
    const ModelWeights& w_;
    const BackendOptions options_;
    HugePageArena weight_memory_;  // the repacked matrices' bytes (declared first: it outlives them)
    std::vector<PackedLayer> packed_;
    PackedMatrix output_;        // the output head (the embedding table when tied)
    MatmulScratch mm_;
    ThreadPool* pool_ = nullptr; // the step's
    int64_t n_ = 0;              // the step's token rows
    std::span<const int32_t> pos_;
    bool quantize_ff_ = false;   // the step's mlp_in wrote ff_q_ for mlp_out
    // Activations for one step.
    std::vector<float> x_;      // [n, n_embd] residual stream
    std::vector<float> xn_;     // [n, n_embd] normed
    QuantizedActivations xn_q_; // xn_ as 8-bit blocks, written by the norm for quantized weights (valid when its n_tokens is the step's)
    RopeAngles angles_;         // the step's RoPE angles, shared by every (global) layer
    RopeAngles angles_local_;   // the same for the trained local layers, when they rotate differently
    QuantizedActivations ff_q_; // SwiGLU's output as 8-bit blocks, written by the gate/up matmul's epilogue
    std::vector<float> q_;      // [n, n_embd_q]
    std::vector<float> k_;      // [n, n_embd_kv]
    std::vector<float> v_;      // [n, n_embd_kv]
    std::vector<float> attn_;   // [n, n_embd_q]
    std::vector<float> proj_;   // [n, n_embd]
    std::vector<float> gate_;   // [n, n_ff]
    std::vector<float> head_logits_;   // output_top_logits' rows before their selection
    std::vector<float> up_;     // [n, n_ff]
    // Layers of experts: the router's logits, each token's choices, the rows gathered per
    // expert (input as f32 or 8-bit blocks; gate_/up_ hold their gate/up products, ff_q_ the
    // activation's blocks) and each gathered row's down product.
    std::vector<float> router_logits_;
    std::vector<ExpertChoice> choices_;
    ExpertPlan plan_;
    std::vector<float> routed_x_;
    QuantizedActivations routed_q_;
    std::vector<float> expert_out_;
    std::vector<MatmulItem> items_;
    ExpertReads expert_reads_;        // the step's, summed over its layers
    std::vector<float> router_margins_, layer_margins_;  // per token: the step's smallest, this layer's
    std::vector<float> shared_out_;   // the shared experts' output, added to the routed ones'
    // Latent attention: the raw queries [n, n_head·head_k], the q LoRA's rows, [c | RoPE key]
    // before the norm and rotation, the RoPE parts being rotated, each head's gathered rows
    // (its nope queries, or its latent outputs) and their 8-bit blocks, the heads' outputs.
    std::vector<float> mla_q_, mla_qa_, mla_kv_, mla_rope_, mla_heads_, mla_o_, mla_c_;
    QuantizedActivations heads_q_;
    std::vector<std::vector<float>> owned_f32_;   // matrices made at load (older files' W_k_b)
    // The latent variant: the rebuilt K and V of the whole sequence per layer.
    std::vector<float> lat_c_, lat_k_, lat_v_, lat_all_, lat_kfull_, lat_vfull_;
    std::vector<float> lat_rope_;   // the cached kept RoPE dimensions, [n_all, rope_dims]
    std::vector<float> lat_row_;    // one stored row, both halves: [kept dimensions, c]; absorbed: the step's rows [c | kept]
    std::vector<float> lat_q_, lat_z_;   // absorbed: each head's query row and latent output
    AttendPlan lat_plan_;
    std::vector<int32_t> lat_pos_;
};

}  // namespace workbench
