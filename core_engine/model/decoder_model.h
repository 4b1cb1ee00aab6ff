// The decoder forward pass, the skeleton every architecture runs (model/arch/ says what differs):
// embeddings (optionally scaled), then per layer RMSNorm → Q/K/V (+bias) → (QK-norm) → RoPE (the
// layer's own base on trained local layers) → KV write → causal GQA attention through the layer's
// attention policy → output projection → (post-norm) → residual → RMSNorm → SwiGLU or GeGLU MLP
// → (post-norm) → residual, then the final norm, the output head and optional logit soft-capping.
// It decides what runs in which order; a Backend (kernels/backend.h: the CPU's, or CUDA's where built) runs each
// operation on the weights and activations it owns. One instance per loaded model; forward() is
// called from the engine's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/backend.h"
#include "model_data/rope_params.h"
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
    // > 0 (with want_logits, without all_logits): only the best this many of those logits, best
    // first (sampling/top_logits.h), all its sampler reads: a device backend copies back those.
    int32_t top_logits = 0;
};

// The attention part of a step, for the roofline: its time and operations.
struct AttentionWork {
    double seconds = 0, ops = 0;
    double index_seconds = 0;   // within seconds: the policies choosing what to read
};

class DecoderModel {
public:
    // Prepares the weights for the backend (the CPU's repacks the matrices). Errors: resource_exhausted.
    // `on_repacked(data, n_bytes)` is told of each file range as soon as its repacked copy exists,
    // so the caller can release those pages one matrix at a time (peak memory stays near the
    // file's size instead of twice it).
    // The backend holds references to the hyperparameters and weights: the model stays where it is.
    DecoderModel(const DecoderModel&) = delete;
    DecoderModel& operator=(const DecoderModel&) = delete;

    // `backend`: "cpu" or "cuda" (unsupported when this build or machine has none).
    static Result<std::unique_ptr<DecoderModel>> create(ModelHparams hp, ModelWeights weights, const std::string& backend = "cpu",
                                                      const std::function<void(const uint8_t*, uint64_t)>& on_repacked = {});

    const ModelHparams& hparams() const { return hp_; }
    const ModelWeights& weights() const { return w_; }
    // The RoPE of the global layers, or of the trained local ones (their own base and scale).
    RopeParams rope_params(bool local_layer = false) const;
    // The KV cache geometry this model needs (PagedKv::create).
    // With latent factors built, their rank per layer too (a latent cache takes its widths from it).
    PagedKvShape kv_shape() const;
    // Layers of experts: for each row of the last step, the smallest router margin over its
    // layers (how near a different choice of experts it came); empty for a model without them.
    std::span<const float> router_margins() const { return backend_->router_margins_last_step(); }

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
    // sequences' last tokens in batch order. With `top`, the sequences asking for top_logits
    // get theirs there instead, k per sequence in batch order, k the batch's largest top_logits
    // (without it they get all their logits). A latent cache runs the sequences one by one.
    // Errors as forward(); on error no sequence keeps any of the step. `no_kv_room`, when given,
    // says whether the step did not run because the KV cache could not take its tokens (the
    // error says what it needs): freeing a sequence may make room, unlike any other error.
    Status forward_batch(std::span<const BatchSequence> batch, PagedKv& kv, std::vector<float>& logits, ThreadPool& pool,
                         std::vector<TopLogit>* top = nullptr, bool* no_kv_room = nullptr);

    // Builds the factors of the latent spec `latent` (its rank, exact RoPE pairs per KV head,
    // K/V balance) from the attention inputs of `calibration` (run once with full attention). With
    // ranks=measured it factors at full rank, measures on `held_out` (text the factors never saw)
    // how far each layer alone cut to 2/3 of the spec's rank moves the output (KL against the full-rank
    // latent path, over the second half of its tokens), and cuts each layer to its rank from
    // allocate_latent_ranks (steps of `rank_step`, which keeps every row width a whole number of
    // the KV type's blocks). After this, a cache created with a latent spec and kv_shape() runs
    // through them. Errors: invalid_argument for a rank or a number of pairs that does not fit, or
    // a held-out text under 16 tokens with ranks=measured; the decomposition's errors. Returns
    // each layer's relative output error on the calibration.
    Result<std::vector<double>> enable_latent(const AttentionSpec& latent, std::span<const TokenId> calibration,
                                              std::span<const TokenId> held_out, int32_t rank_step, ThreadPool& pool,
                                              const std::function<void(int, int)>& progress = {});
    // Each layer's latent rank (empty before enable_latent).
    std::vector<int32_t> latent_ranks() const;

    // The last step's work for the roofline picture (latent steps count their matmuls only).
    const StepRoofline& last_step_roofline() const { return last_step_; }
    DeviceMemory device_memory() const { return backend_->device_memory(); }
    // The backend's share of a KV cache this model will run (Backend::attach_kv).
    Status attach_kv(PagedKv& kv);

private:
    Status check_tokens(std::span<const TokenId> tokens, const PagedKv& kv) const;
    // The rows of a step that go through the output head: `full` (ascending) into `logits`,
    // `top` (ascending) as their best `k` into `best`.
    struct HeadRows {
        std::span<const int64_t> full;
        float* logits = nullptr;
        std::span<const int64_t> top;
        int32_t k = 0;
        TopLogit* best = nullptr;
    };
    // Runs the step begun on `kv` over its `tokens` (all sequences' rows), then the head over
    // `head`'s rows. The backend's error (the step is then not to be kept).
    Status forward_rows(PagedKv& kv, std::span<const TokenId> tokens, const HeadRows& head, ThreadPool& pool);
    // One layer's attention: the cache writes (or tells the backend where to write) the layer's
    // K/V and plans, the backend attends.
    void attend(int32_t layer, PagedKv& kv, ThreadPool& pool);
    // The latent variant's: the backend computes the latents, the cache keeps them, the model
    // reads every cached one back into its own rows, the backend rebuilds K and attends.
    void attend_latent(int32_t layer, PagedKv& kv, ThreadPool& pool);
    void attend_latent_absorbed(int32_t layer, PagedKv& kv, ThreadPool& pool);
    static LayerKvStorage layer_kv(PagedKv& kv, int32_t layer);
    void record_step(int64_t n, int64_t n_logit_rows, const PagedKv& kv, std::chrono::steady_clock::time_point t_step);
    DecoderModel(ModelHparams hp, ModelWeights weights) : hp_(std::move(hp)), w_(std::move(weights)) {}

    ModelHparams hp_;
    ModelWeights w_;
    std::unique_ptr<Backend> backend_;    // reads hp_ and w_: declared after them
    std::vector<TokenId> batch_tokens_;   // a batched step's tokens, sequence after sequence
    StepRoofline last_step_;
    AttentionWork attention_;             // the step in flight's attention (non-latent layers)
    std::vector<int64_t> logit_rows_, top_rows_;
    // The latent variant's factors.
    std::vector<LatentLayer> latent_;
    int64_t lat_generated_ = 0;   // this step's generated rows (BatchSequence::n_generated), at the end
    std::vector<float> lat_cached_k_, lat_cached_v_;   // every cached latent of the layer in flight, read back from the cache
    // KL of the output with each layer alone cut to `rank`, against the latent path as it is.
    Result<std::vector<double>> latent_sensitivity(const AttentionSpec& latent, std::span<const TokenId> held_out, int32_t rank,
                                                   ThreadPool& pool, const std::function<void(int, int)>& progress);
    // Set while enable_latent captures each layer's attention inputs.
    std::vector<std::vector<float>>* capture_ = nullptr;
};

}  // namespace workbench
