// The decoder forward pass on the CPU, the skeleton every architecture runs (model/arch/ says what
// differs): embeddings (optionally scaled), then per layer RMSNorm → Q/K/V (+bias) → (QK-norm) →
// RoPE (the layer's own base on trained local layers) → KV write → causal GQA attention through
// the layer's attention policy → output projection → (post-norm) → residual → RMSNorm → SwiGLU or
// GeGLU MLP → (post-norm) → residual, then the final norm, the output head and optional logit
// soft-capping. One instance per loaded model; forward() is called from the
// engine's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/cpu/huge_page_arena.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/thread_pool.h"
#include "model/hparams.h"
#include "attention/latent_kv.h"
#include "attention/paged_kv.h"
#include "model/weights.h"
#include "workbench/metrics.h"
#include "workbench/types.h"

namespace workbench {

// One sequence's tokens in a batched step.
struct BatchSequence {
    SeqId seq = 0;
    std::span<const TokenId> tokens;
    bool want_logits = false;   // the logits after its last token (a prompt's last chunk, a decode)
    bool all_logits = false;    // the logits after every one of its tokens (scoring a prompt)
    // The last rows of `tokens` that the model generated (sampled or drafted) rather than read
    // from a prompt. Only the latent variant looks: it computes the two kinds differently, and
    // by kind rather than by step size, so a recomputed or re-chunked row gets the same result.
    int32_t n_generated = 0;
};

class DecoderModel {
public:
    // Repacks the weight matrices for the CPU kernels. Errors: resource_exhausted.
    // `on_repacked(data, n_bytes)` is told of each file range as soon as its repacked copy exists,
    // so the caller can release those pages one matrix at a time (peak memory stays near the
    // file's size instead of twice it).
    static Result<std::unique_ptr<DecoderModel>> create(ModelHparams hp, ModelWeights weights,
                                                      const std::function<void(const uint8_t*, uint64_t)>& on_repacked = {});

    const ModelHparams& hparams() const { return hp_; }
    const ModelWeights& weights() const { return w_; }
    // The RoPE of the global layers, or of the trained local ones (their own base and scale).
    RopeParams rope_params(bool local_layer = false) const;
    // The KV cache geometry this model needs (PagedKv::create).
    PagedKvShape kv_shape() const { return {hp_.n_layer, hp_.n_head_kv, hp_.head_dim, hp_.n_head, rope_params()}; }

    // Appends `tokens` to sequence `seq` of `kv` (its attention variant decides what is stored
    // and read). Logits go to `logits`: every position's ([n, n_vocab]) when all_logits, else
    // only the last ([n_vocab]). Errors: out_of_range for an id outside the vocabulary; the
    // cache's own errors when it has no room. On error the sequence keeps the chunks that
    // completed before it (whole chunks of kChunk tokens).
    Status forward(std::span<const TokenId> tokens, SeqId seq, PagedKv& kv, bool all_logits,
                   std::vector<float>& logits, ThreadPool& pool);

    // One step over several sequences (continuous batching): every matmul runs over all their
    // tokens at once, so weights are read once per step; attention reads each sequence's own
    // cache. Each row's arithmetic is the same whatever else shares the step, so a sequence's
    // outputs equal its solo run's bit for bit. Logits: [n_wanted, n_vocab], the wanted
    // sequences' last tokens in batch order. A latent cache runs the sequences one by one.
    // Errors as forward(); on error no sequence keeps any of the step.
    Status forward_batch(std::span<const BatchSequence> batch, PagedKv& kv, std::vector<float>& logits, ThreadPool& pool);

    // Builds the latent variant's factors of rank `rank` from the attention inputs of
    // `calibration` (run once with full attention). After this, a cache created with a latent
    // spec runs through them. Errors: invalid_argument for a rank that does not fit; the
    // decomposition's errors. Returns each layer's relative output error on the calibration.
    Result<std::vector<double>> enable_latent(int32_t rank, std::span<const TokenId> calibration, ThreadPool& pool,
                                              const std::function<void(int, int)>& progress = {});
    bool has_latent() const { return !latent_.empty(); }

    // The last step's work for the roofline picture (latent steps count their matmuls only).
    const StepRoofline& last_step_roofline() const { return last_step_; }

private:
    Status check_tokens(std::span<const TokenId> tokens, const PagedKv& kv) const;
    // Runs the step begun on `kv` over its `tokens` (all sequences' rows); the rows in
    // `logit_rows` (ascending) go through the output head into `logits`.
    void forward_rows(PagedKv& kv, std::span<const TokenId> tokens, std::span<const int64_t> logit_rows, float* logits,
                      ThreadPool& pool);
    void ensure_scratch(int64_t n_tokens);
    void output_head(std::span<const int64_t> logit_rows, float* logits, ThreadPool& pool);
    void record_step(int64_t n, int64_t n_logit_rows, const PagedKv& kv, std::chrono::steady_clock::time_point t_step);
    void standard_attention(int32_t il, int64_t n, PagedKv& kv, ThreadPool& pool);
    void latent_attention(int32_t il, int64_t n, PagedKv& kv, std::span<const int32_t> pos, ThreadPool& pool);
    DecoderModel(ModelHparams hp, ModelWeights weights) : hp_(std::move(hp)), w_(std::move(weights)) {}
    // The MLP's gate activation on n elements (in place into gate), SwiGLU or GeGLU.
    void activate(float* gate, const float* up, int64_t n) const;

    struct PackedLayer {
        PackedMatrix wq, wk, wv, wo, ffn_gate, ffn_up, ffn_down;
    };

    ModelHparams hp_;
    ModelWeights w_;
    bool gelu_gate_ = false;     // GeGLU (tanh GELU) instead of SwiGLU
    HugePageArena weight_memory_;  // the repacked matrices' bytes (declared first: it outlives them)
    std::vector<PackedLayer> packed_;
    PackedMatrix output_;        // the output head (the embedding table when tied)
    MatmulScratch mm_;
    // Activations for one chunk of tokens.
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
    std::vector<float> up_;     // [n, n_ff]
    std::vector<TokenId> batch_tokens_;   // a batched step's tokens, sequence after sequence
    StepRoofline last_step_;
    double attention_s_ = 0, attention_ops_ = 0;   // the step in flight
    std::vector<int64_t> logit_rows_;
    // The latent variant: its factors, and the rebuilt K and V of the whole sequence per layer.
    std::vector<LatentLayer> latent_;
    std::vector<float> lat_c_, lat_k_, lat_v_, lat_all_, lat_kfull_, lat_vfull_;
    AttendPlan lat_plan_;
    int64_t lat_generated_ = 0;   // this step's generated rows (BatchSequence::n_generated), at the end
    std::vector<int32_t> lat_pos_;
    // Set while enable_latent captures each layer's attention inputs.
    std::vector<std::vector<float>>* capture_ = nullptr;
};

}  // namespace workbench
