// The seam between the decoder skeleton (model/decoder_model.cpp: which operations a step runs,
// in which order, for an architecture) and the hardware that runs them. A backend owns the
// weights in its own layout, the step's activations and its workspace; the skeleton names
// operations by layer and role, never by buffer, so a device backend can keep everything
// resident. Fusions are declared by the role (MatmulGroup), not passed as code, so each backend
// fuses them its own way. kernels/cpu/cpu_backend is the reference: its arithmetic is the engine's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kv_blocks/attend_plan.h"
#include "model_data/rope_params.h"
#include "sampling/top_logits.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

class KvStore;
class ThreadPool;
struct LatentLayer;
struct WeightTensor;

// The matrices of one layer that share an input, and what runs fused with them:
//   attention_in   Q, K and V (Q alone on a layer that reads another layer's KV), then the
//                  biases, the per-head QK-norm and RoPE at the step's positions
//   attention_out  the output projection of the attention rows
//   mlp_in         gate and up, then the gate activation (SwiGLU or GeGLU) into the gate rows,
//                  ready for mlp_out in its input format
//   mlp_out        the down projection
enum class MatmulGroup { attention_in, attention_out, mlp_in, mlp_out };

// Where the sublayer's output joins the residual stream and the next sublayer's input is made.
struct ResidualNorm {
    bool add = true;                          // the sublayer's output joins (false: the first layer)
    const WeightTensor* post_norm = nullptr;  // the sublayer's own norm before it joins (sandwich blocks)
    const WeightTensor* norm = nullptr;       // the next pre-norm; null: none (the head norms its rows)
    int32_t next_layer = 0;                   // with next_group: who reads the normed rows, so
    MatmulGroup next_group = MatmulGroup::attention_in;   // they can be written in its input format
};

// Where one layer's K/V live in the model's KV cache: the store and storage index it reads (its
// own, or the layer's it shares), as the cache laid them out. A device backend keeps its own
// copy of the store's bytes and may write a layer's rows there itself.
struct LayerKvStorage {
    KvStore* store = nullptr;
    int32_t storage = 0;
    // The layer's policy stores each row at its token slot and nothing else, and plans without
    // reading the queries (full; cross_layer without a merge).
    bool token_rows_only = false;
    bool rotated_keys = false;   // keys are Hadamard-rotated before storage (4- and 2-bit K): so must queries be
    // Values likewise (4- and 2-bit V): the attention output comes out rotated, and the backend
    // turns it back (unrotate_attention_rows) before the output projection.
    bool rotated_values = false;
};

// The step's rows of a layer where the host can read and change them: queries and the rows the
// layer's cache stores (K and V of [n, n_embd_kv] each; latent rows hold V inside K, and k and v
// are then the same rows); k and v null when not asked for.
struct HostRows {
    float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
};

// One layer's attention as the model's KV cache planned it: the backend attends the step's
// queries over `streams` through `plan` into the attention rows.
struct LayerAttention {
    const AttendPlan* plan = nullptr;
    std::span<const KvStreamView> streams;
    LayerKvStorage kv;
    // When Backend::writes_kv said so: each row's token slot (block · block_tokens + slot) in
    // kv.storage, where the backend writes the row's K and V first when write_kv is set (a layer
    // reading another's KV writes none). Empty otherwise: the cache wrote them from host_rows.
    std::span<const int32_t> row_slots;
    bool write_kv = false;
    bool queries_changed = false;   // host_rows' queries were changed there (rotated)
    // The latent variant's absorbed form: the queries and rows are latent_absorbed_in's, one KV
    // head of latent->row_width() values whose first rank are V.
    const LatentLayer* latent = nullptr;
};

// Rows of each half of what a latent layer stores per token (LatentLayer::stored_half floats a
// row: kept RoPE dimensions, then c): the step's from Backend::latent_in, or every cached one of
// the sequence as the model read them back for attend_latent.
struct LatentRows {
    const float* k = nullptr;
    const float* v = nullptr;
};

// What the architecture decides for every backend.
struct BackendOptions {
    bool gelu_gate = false;          // GeGLU (tanh GELU) instead of SwiGLU
    bool clamped_swiglu = false;     // gpt-oss's clamped SwiGLU (kernels/cpu/swiglu.h) instead
    RopeParams rope, rope_local;     // the global layers' RoPE and the trained local layers'
};

// What a step's layers of experts read: the active experts' bytes (each once, however many
// tokens chose it) and their weights times the tokens routed to them (half the multiply-add
// count). A mixture-of-experts model's roofline counts these, not every expert it holds.
struct ExpertReads {
    double bytes = 0, params_x_tokens = 0;
};

// Memory a device backend holds on its device (all zero for the CPU's, whose memory is the
// process's own). kv: the device copies of KV stores, made when a layer first attends there.
struct DeviceMemory {
    uint64_t weights = 0, activations = 0, workspace = 0, kv = 0;
    uint64_t total() const { return weights + activations + workspace + kv; }
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;

    // A step over one row per token at `positions` (every sequence's rows, in order): the
    // activations are sized and the RoPE angles computed. `pool` runs the CPU's share.
    virtual void begin_step(std::span<const int32_t> positions, ThreadPool& pool) = 0;
    // The token rows of the embedding table (times the model's embedding scale) into the
    // residual stream.
    virtual void embed(std::span<const TokenId> tokens) = 0;
    virtual void residual_norm(const ResidualNorm& op) = 0;
    // `own_kv`: an attention_in group computes K and V too (the layer writes its own KV).
    virtual void matmul_group(int32_t layer, MatmulGroup group, bool own_kv = true) = 0;
    // The KV cache is the model's (decoder_model.cpp drives it); a layer's attention, after its
    // attention_in group, is either
    //  - writes_kv: the backend writes the rows itself into the slots the model gives, then attends;
    //  - host_rows: the cache writes the rows (and its policy may read or rotate the queries),
    //    then the backend attends over what the cache planned.
    // Whether the backend writes this layer's K/V rows into its own copy of the store itself.
    virtual bool writes_kv(const LayerKvStorage& /*kv*/) const { return false; }
    // The step's rows of `layer` on the host (Q; K and V when `with_kv`): the CPU's own rows; a
    // device backend copies them down. Valid until the layer's attend. Null rows once the step
    // has failed (end_step reports why): the model then writes and plans nothing for the layer.
    virtual HostRows host_rows(int32_t layer, const LayerKvStorage& kv, bool with_kv) = 0;
    virtual void attend(int32_t layer, const LayerAttention& attention) = 0;
    // The latent variant (CPU only), around the cache: latent_in computes Q and the step's
    // latents c = A·x from the normed rows; the model stores them and hands back every cached
    // one (`cached`, n_all rows in its own buffers); attend_latent rebuilds K for the whole
    // sequence, and the last `n_generated` rows sum over the latents while the others attend
    // over rebuilt V (the same result, computed the cheaper way for each kind).
    virtual LatentRows latent_in(int32_t layer, const LatentLayer& latent) = 0;
    virtual void attend_latent(int32_t layer, const LatentLayer& latent, LatentRows cached, int32_t n_all, int64_t n_generated) = 0;
    // Its absorbed form (CPU only), a layer like any other around the cache: latent_absorbed_in
    // makes each head's query [U_k,gᵀ q | its kept RoPE pairs in its KV head's slot] and the
    // step's rows [c | kept pairs] (k and v the same rows: V is each row's first rank values);
    // the model writes and plans them and calls attend with LayerAttention::latent; then
    // latent_absorbed_out takes each head's latent output through U_v,g (and b_v) into the
    // attention rows the output projection reads. Null rows: the step failed (end_step says why).
    virtual HostRows latent_absorbed_in(int32_t layer, const LatentLayer& latent) = 0;
    virtual void latent_absorbed_out(int32_t layer, const LatentLayer& latent) = 0;
    // The final norm, the output head and soft-capping for `rows` (ascending) into `logits`.
    virtual void output_head(std::span<const int64_t> rows, float* logits) = 0;
    // As output_head, but only each row's best `k` logits (sampling/top_logits.h) into `top`
    // (k per row, in `rows` order): a device backend selects them there and copies back those
    // pairs alone. k ≤ n_vocab. Rows may not be in both calls of a step.
    virtual void output_top_logits(std::span<const int64_t> rows, int32_t k, TopLogit* top) = 0;
    // The step's operations are done (a device backend waits for them here); the first error
    // any of them met (a device's operations report late), or ok. After an error the step's
    // results are not to be used.
    virtual Status end_step() { return Status::ok_status(); }

    // The normed rows of the step so far (n · n_embd), appended to `out`: the latent variant's
    // calibration reads each layer's attention input.
    virtual void append_normed_rows(std::vector<float>& out) const = 0;
    virtual DeviceMemory device_memory() const { return {}; }
    // Layers of experts: what the last step read of them, and for each of its rows the smallest
    // router margin over its layers (kernels/expert_routing.h: how near a different choice of
    // experts it came). Empty / zero for a model without experts.
    virtual ExpertReads expert_reads_last_step() const { return {}; }
    // Latent attention's per-head matrices as this backend reads them in layer `il` (those it made
    // at load: W_k_b of an attn_kv_b file, the expanded form's W_UK and W_UV), in place of the
    // file's k_b/v_b or kv_b; nullopt: the file's tensors as stored.
    virtual std::optional<uint64_t> latent_head_bytes(int32_t /*il*/) const { return std::nullopt; }
    virtual std::span<const float> router_margins_last_step() const { return {}; }
    // Makes what the backend keeps of a KV cache (`layers`: each model layer's storage; a device
    // backend: its copy of the stores it attends over), so a device without room fails at load.
    // The CPU's keeps nothing.
    virtual Status attach_kv(std::span<const LayerKvStorage> /*layers*/) { return Status::ok_status(); }
};

}  // namespace workbench
