// The seam between the decoder skeleton (model/decoder_model.cpp: which operations a step runs,
// in which order, for an architecture) and the hardware that runs them. A backend owns the
// weights in its own layout, the step's activations and its workspace; the skeleton names
// operations by layer and role, never by buffer, so a device backend can keep everything
// resident. Fusions are declared by the role (MatmulGroup), not passed as code, so each backend
// fuses them its own way. kernels/cpu/cpu_backend is the reference: its arithmetic is the engine's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/rope.h"
#include "sampling/top_logits.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

class PagedKv;
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

// The attention part of a step, for the roofline: its time and operations.
struct AttentionWork {
    double seconds = 0, ops = 0;
};

// What the architecture decides for every backend.
struct BackendOptions {
    bool gelu_gate = false;          // GeGLU (tanh GELU) instead of SwiGLU
    RopeParams rope, rope_local;     // the global layers' RoPE and the trained local layers'
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
    // Writes the layer's K/V rows (when it computes its own) and attends through the layer's
    // policy: the spans its plan selects, over the streams it stores.
    virtual void attend(int32_t layer, PagedKv& kv) = 0;
    // The latent variant (CPU only): Q and the latents from the normed rows, K rebuilt for the
    // whole sequence; the last `n_generated` rows sum over the latents, the others attend over
    // rebuilt V (the same result, computed the cheaper way for each kind).
    virtual void attend_latent(int32_t layer, PagedKv& kv, const LatentLayer& latent, int64_t n_generated) = 0;
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
    virtual AttentionWork attention_work() const = 0;
    virtual DeviceMemory device_memory() const { return {}; }
    // Makes what the backend keeps of `kv` (a device backend: its copy of the KV stores it
    // attends over), so a device without room fails at load. The CPU's keeps nothing.
    virtual Status attach_kv(PagedKv& /*kv*/) { return Status::ok_status(); }
};

}  // namespace workbench
