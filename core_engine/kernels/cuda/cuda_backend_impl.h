// The CUDA backend's class, shared by its two files: cuda_backend.cpp (weights, the step's
// buffers, matmuls and elementwise ops, the head) and cuda_attention.cpp (both attention paths and
// the device copy of the KV cache). Private to kernels/cuda: the engine sees cuda_backend.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/kv_attention.h"
#include "kernels/cuda/lt_matmul.h"
#include "kv_blocks/kv_store.h"
#include "model_data/model_hparams.h"
#include "model_data/weight_tensors.h"

namespace workbench {

using cuda::DeviceBuffer;
using cuda::DeviceMatrix;

class CudaBackend final : public Backend, private KvStoreMirror {
public:
    static Result<std::unique_ptr<CudaBackend>> create(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                       const std::function<void(const uint8_t*, uint64_t)>& on_uploaded);
    ~CudaBackend() override {
        for (auto& [id, kv] : device_kv_)
            if (kv.store->mirror() == this) kv.store->set_mirror(nullptr);
        discard_capture();
        for (auto& [n, exec] : graph_execs_)
            if (exec) (void)cudaGraphExecDestroy(exec);
        if (pinned_) (void)cudaFreeHost(pinned_);
        if (pinned_out_) (void)cudaFreeHost(pinned_out_);
        lt_.reset();
        if (stream_) (void)cudaStreamDestroy(stream_);
    }

    const char* name() const override { return "cuda"; }
    void begin_step(std::span<const int32_t> positions, ThreadPool& pool) override;
    void embed(std::span<const TokenId> tokens) override;
    void residual_norm(const ResidualNorm& op) override;
    void matmul_group(int32_t layer, MatmulGroup group, bool own_kv = true) override;
    bool writes_kv(const LayerKvStorage& kv) const override { return attend_path(kv) == AttendPath::device_written; }
    HostRows host_rows(int32_t layer, const LayerKvStorage& kv, bool with_kv) override;
    void attend(int32_t layer, const LayerAttention& attention) override;
    // The latent variant is refused; the model stops at the empty rows.
    LatentRows latent_in(int32_t, const LatentLayer&) override {
        keep(error(StatusCode::unsupported, "the latent variant is not supported on cuda (use --backend cpu)"));
        return {};
    }
    void attend_latent(int32_t, const LatentLayer&, LatentRows, int32_t, int64_t) override {}
    HostRows latent_absorbed_in(int32_t layer, const LatentLayer& latent) override {
        (void)latent_in(layer, latent);
        return {};
    }
    void latent_absorbed_out(int32_t, const LatentLayer&) override {}
    void output_head(std::span<const int64_t> rows, float* logits) override;
    void output_top_logits(std::span<const int64_t> rows, int32_t k, TopLogit* top) override;
    Status end_step() override;
    void append_normed_rows(std::vector<float>& out) const override;
    DeviceMemory device_memory() const override;
    Status attach_kv(std::span<const LayerKvStorage> layers) override;

private:
    struct Layer {
        // LayerWeights' names (layer_matrices walks both); the router, shared experts and latent
        // attention's matrices stay empty: those models are refused before a CUDA backend is made.
        DeviceMatrix wq, wk, wv, wo, ffn_gate, ffn_up, ffn_down, ffn_gate_inp, wq_a, wq_b, wkv_a_mqa, ffn_gate_shexp, ffn_up_shexp,
            ffn_down_shexp, wkv_b;
        const float *q_norm = nullptr, *k_norm = nullptr, *bq = nullptr, *bk = nullptr, *bv = nullptr;  // null when absent
    };

    // Steps up to gemv_max_tokens_ multiply with the GEMV (no conversion; the weights read once
    // per 8 tokens), longer ones decode each matrix to bf16 for cuBLASLt: 16 until measured at
    // load (cuda_gemv_crossover.cpp). GEMV steps up to kGraphMaxTokens may run as a CUDA graph.
    static constexpr int64_t kGemvDefaultTokens = 16, kGraphMaxTokens = 32;

    CudaBackend(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options)
        : hp_(hp), w_(w), options_(options), graphs_(graphs_wanted()) {}
    Status upload_weights(const std::function<void(const uint8_t*, uint64_t)>& on_uploaded);
    Status ensure_capacity(int64_t n_tokens);
    // The first error of the step is the one reported; later ops are skipped.
    void keep(Status s) {
        if (error_.ok() && !s.ok()) error_ = std::move(s);
    }
    // y = x · Wᵀ (+ bias): the GEMV up to gemv_max_tokens_ tokens (bias fused), else matmul_lt:
    // cuBLASLt over W decoded to bf16 (bias by its epilogue while the library offers one).
    Status matmul(const DeviceMatrix& w, const float* x, float* y, int64_t n, const float* bias = nullptr);
    Status matmul_lt(const DeviceMatrix& w, const float* x, float* y, int64_t n, const float* bias);
    void measure_gemv_crossover();
    Status attention_in(int32_t layer, bool own_kv);
    Status rope(float* x, int64_t width, bool local);
    cuda::KeyRope rope_angles_for(bool local) const;
    Status rope_pending_keys();   // K's RoPE, where the KV append does not apply it
    Status download(std::vector<float>& host, const DeviceBuffer& from, int64_t count);
    // The final norm, the head and soft-capping for `rows` into logits_.
    void head_logits(std::span<const int64_t> rows);
    // A step's output for the caller: queued into pinned memory and handed over at end_step, so
    // the host does not wait for it mid-step (straight into `host`, waited for, when larger than
    // the pinned buffer: a prompt's every logit).
    void copy_to_host(void* host, const void* device, size_t bytes, const char* what);
    bool ensure_pinned_out();

    // The device copy of one KvStore: its K and V arenas, storage after storage.
    struct DeviceKv {
        KvStore* store = nullptr;
        DeviceBuffer k, v;
        cuda::DeviceKvLayout layout;
        int64_t k_storage_bytes = 0, v_storage_bytes = 0;
        Status broken;   // a block copy (or the upload before it) failed: the device copy no longer matches the tables
        std::vector<std::pair<int32_t, BlockId>> written;   // (storage, block) the host wrote, not yet uploaded
    };
    // Where a layer attends (cuda_attention.cpp says what each path does).
    enum class AttendPath { device_written, host_kept, host };
    AttendPath attend_path(const LayerKvStorage& kv) const;
    Result<DeviceKv*> device_kv(KvStore& store);
    Result<DeviceKv*> intact_device_kv(KvStore& store);   // its error once a block copy failed
    Status attend_device_written(const LayerAttention& a);
    Status attend_host_kept(const LayerAttention& a);
    void attend_on_host(const LayerAttention& a);
    Status run_attention(DeviceKv& d, int32_t storage);
    Status upload_written(DeviceKv& d);
    Status stage(const std::vector<int32_t>& meta, int32_t*& device_meta);
    // cuda_step_graph.cpp: a decode step captured and replayed as one CUDA graph; pinned staging.
    static bool graphs_wanted();
    void begin_capture();             // when graphs are on, the cache allows and the step is a GEMV step
    void discard_capture();           // a capture a step left open (it never reached end_step): dropped unrun
    Status fit_staging();             // between steps: pinned staging for all of the last step's uploads
    Result<cudaGraph_t> end_capture();   // a failure turns graphs off
    Status leave_capture();           // what was captured runs now; the step goes on uncaptured
    Status replay_step_graph();       // end_step's: the step's graph updated or instantiated, launched
    Status sync(const char* what);    // leave_capture, then wait for the stream
    Result<uint8_t*> pinned_region(size_t bytes);   // this step's, untouched until it ends
    Status upload_staged(void* device, const void* host, size_t bytes, const char* what);
    Status upload_plan(const AttendPlan& plan, std::span<const KvStreamView> streams, std::span<const int32_t> row_slots,
                       KvStore& store, int32_t storage);
    void block_copied(uint64_t store_id, BlockId src, BlockId dst) override;
    void block_written(uint64_t store_id, int32_t layer, BlockId block) override;
    void store_released(uint64_t store_id) override { device_kv_.erase(store_id); }

    const ModelHparams& hp_;
    const ModelWeights& w_;
    const BackendOptions options_;
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<cuda::LtMatmul> lt_;
    bool lt_bias_epilogue_ = true;
    DeviceBuffer weight_memory_;
    std::vector<Layer> layers_;
    DeviceMatrix output_, token_embd_;
    const float* output_norm_ = nullptr;
    // Every norm and bias by its host tensor, so ops name them as the skeleton does.
    std::unordered_map<const WeightTensor*, const float*> vectors_;
    DeviceBuffer w_bf16_;            // one matrix decoded to bf16 for cuBLASLt (the largest fits)
    int64_t gemv_max_tokens_ = kGemvDefaultTokens;
    int64_t max_n_in_ = 0;

    // The step.
    Status error_;
    ThreadPool* pool_ = nullptr;
    int64_t n_ = 0, capacity_ = 0;
    bool k_rope_pending_ = false, k_rope_local_ = false;   // k_ not yet rotated (attention_in leaves it to attend)
    // CUDA graphs: on unless turned off; whether the attached cache attends on the device only;
    // one executable per step size.
    bool graphs_ = true, graph_kv_ = false, capturing_ = false;
    std::unordered_map<int64_t, cudaGraphExec_t> graph_execs_;
    // The step's outputs in pinned memory (room for kGraphMaxTokens rows, each its logits or its
    // best), copied to the caller's at end_step.
    struct HostCopy {
        void* to;
        size_t offset, bytes;
    };
    uint8_t* pinned_out_ = nullptr;
    size_t pinned_out_capacity_ = 0, pinned_out_used_ = 0;
    bool pinned_out_failed_ = false;
    std::vector<HostCopy> host_copies_;
    RopeAngles angles_, angles_local_;
    DeviceBuffer x_, xn_, q_, k_, v_, attn_, proj_, gate_, up_, head_rows_, logits_, top_logits_, x_bf16_, tokens_, rows_;
    DeviceBuffer cos_, sin_, cos_local_, sin_local_;
    std::vector<float> q_host_, k_host_, v_host_, attn_host_;
    // The device KV: one per mirrored store; a layer's plan staged in pinned memory (each upload
    // of a step its own region, so a copy still queued is never overwritten) and uploaded to meta_.
    std::unordered_map<uint64_t, DeviceKv> device_kv_;
    std::vector<int32_t> meta_host_;
    uint8_t* pinned_ = nullptr;
    size_t pinned_capacity_ = 0, pinned_used_ = 0, pinned_step_bytes_ = 0;   // bytes; the last one: all of this step's uploads
    DeviceBuffer meta_, attention_scratch_;
    // The plan in meta_: which store (one per group of layers) and step it was made for, and
    // what it was made from.
    int64_t step_ = 0, plan_step_ = -1;
    const KvStore* plan_store_ = nullptr;
    std::vector<uint32_t> plan_offsets_;
    std::vector<KvSpan> plan_spans_;
    cuda::DeviceKvPlan device_plan_;
    // Per stream a plan reads, while it is flattened: the entries read, [first, entries), and
    // where its block table (indexed by block number, so table_at may point before the upload's
    // first word) or its host-built rows start in the upload.
    struct StreamUse {
        int32_t first = 0, entries = 0, table_at = -1, flat_k = -1, flat_v = -1;
    };
    std::vector<StreamUse> stream_use_;
};

}  // namespace workbench
