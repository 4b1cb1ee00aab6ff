// The CUDA backend's attention. A layer whose policy reads only its store's token streams (full,
// cross_layer without a merge) and whose KV types the device kernels read runs on the device: its
// KV store mirrored in device arenas of the same layout (block copies followed through
// KvStoreMirror), the rows written there by the device, the policy's plan flattened and uploaded
// once per group and step, then the split-key attention kernel (kv_attention.cu). Other layers take the host
// path: Q/K/V down, the policy and the CPU's attention kernel on the host paged KV cache, the
// rows back up.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/cuda_backend_impl.h"
#include "kernels/cuda/cuda_status.h"
#include "kv_cache/kv_row_codec.h"

namespace workbench {
namespace {

// The KV types the device kernels read, as they name them.
std::optional<cuda::DeviceKvType> device_kv_type(KvDType type) {
    switch (type) {
        case KvDType::f32: return cuda::DeviceKvType::f32;
        case KvDType::f16: return cuda::DeviceKvType::f16;
        case KvDType::bf16: return cuda::DeviceKvType::bf16;
        case KvDType::q8_0: return cuda::DeviceKvType::q8_0;
        default: return std::nullopt;
    }
}

}  // namespace

void CudaBackend::attend(int32_t il, PagedKv& kv) {
    if (!error_.ok()) return;
    KvGroup& group = kv.group_of(il);
    if (on_device(group, kv)) keep(attend_on_device(il, kv, group));
    else attend_on_host(il, kv);
}

// The policy's state lives on the host (a sliding window's sinks, top-k's index, pooled entries,
// 4-bit keys' rotation) or its KV type has no device kernel: Q, K and V go down, the policy
// writes and plans exactly as on the CPU, the CPU's attention kernel runs, the rows come back up.
void CudaBackend::attend_on_host(int32_t il, PagedKv& kv) {
    const auto t_attention = std::chrono::steady_clock::now();
    const int64_t n = n_;
    const bool own_kv = kv.layer_computes_kv(il);
    keep(download(q_host_, q_, n * hp_.n_embd_q()));
    if (own_kv) {
        keep(download(k_host_, k_, n * hp_.n_embd_kv()));
        keep(download(v_host_, v_, n * hp_.n_embd_kv()));
    }
    keep(cuda::check(cudaStreamSynchronize(stream_), "the step's operations"));
    if (!error_.ok()) return;
    ThreadPool& pool = *pool_;
    const AttentionShape shape{hp_.n_head, hp_.n_head_kv, hp_.head_dim};
    const float kq_scale = hp_.attention_scale > 0 ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
    if (own_kv) kv.write(il, k_host_.data(), v_host_.data(), pool);
    if (kv.rotates_keys())
        for (int64_t r = 0; r < n * hp_.n_head; ++r) hadamard_rotate(q_host_.data() + r * hp_.head_dim, hp_.head_dim);
    const AttendPlan& plan = kv.plan(il, q_host_.data());
    if (static_cast<int64_t>(attn_host_.size()) < n * hp_.n_embd_q()) attn_host_.resize(static_cast<size_t>(n * hp_.n_embd_q()));
    attend_spans(q_host_.data(), n, kv.streams(il), plan, shape, kq_scale, attn_host_.data(), pool);
    keep(cuda::check(cudaMemcpyAsync(attn_.data(), attn_host_.data(), static_cast<size_t>(n * hp_.n_embd_q()) * 4, cudaMemcpyHostToDevice, stream_),
                     "copying attention rows to the device"));
    // The host buffer must stay as it is until the copy has read it.
    keep(cuda::check(cudaStreamSynchronize(stream_), "copying attention rows to the device"));
    const double heads_per_list = static_cast<double>(plan.per_kv_head ? hp_.n_head / hp_.n_head_kv : hp_.n_head);
    double keys = 0;
    for (const KvSpan& sp : plan.spans) keys += sp.end - sp.begin;
    attention_.ops += 4.0 * keys * heads_per_list * static_cast<double>(hp_.head_dim);
    attention_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_attention).count();
}

bool CudaBackend::on_device(const KvGroup& group, const PagedKv& kv) const {
    const AttentionSpec& spec = group.spec();
    const bool token_streams_only = spec.kind == AttentionKind::full || (spec.kind == AttentionKind::cross_layer && spec.merge == LayerMerge::none);
    return token_streams_only && device_kv_type(group.types().k) && device_kv_type(group.types().v) && !kv.rotates_keys() &&
           hp_.head_dim <= 256;
}

Result<CudaBackend::DeviceKv*> CudaBackend::device_kv(KvStore& store) {
    if (auto it = device_kv_.find(store.id()); it != device_kv_.end()) return &it->second;
    // The store's bytes then live on the device only: a cache another backend writes (or mirrors)
    // would be read half from each.
    if (store.mirror() != nullptr)
        return error(StatusCode::unsupported, "this KV cache is already kept by another CUDA model: a KV cache serves one model");
    DeviceKv d;
    d.store = &store;
    const KvRowLayout& k = store.k_layout();
    const KvRowLayout& v = store.v_layout();
    d.layout = {*device_kv_type(k.type), *device_kv_type(v.type), k.row_bytes, k.token_stride, k.block_stride, v.row_bytes, v.token_stride, v.block_stride,
                store.n_tokens_per_block(), hp_.n_head_kv, hp_.head_dim};
    d.k_storage_bytes = k.block_stride * store.n_blocks();
    d.v_storage_bytes = v.block_stride * store.n_blocks();
    WB_ASSIGN_OR_RETURN(d.k, DeviceBuffer::allocate(static_cast<size_t>(d.k_storage_bytes * store.n_layers())));
    WB_ASSIGN_OR_RETURN(d.v, DeviceBuffer::allocate(static_cast<size_t>(d.v_storage_bytes * store.n_layers())));
    store.set_mirror(this);
    return &device_kv_.emplace(store.id(), std::move(d)).first->second;
}

void CudaBackend::block_copied(uint64_t store_id, BlockId src, BlockId dst) {
    const auto it = device_kv_.find(store_id);
    if (it == device_kv_.end()) return;
    DeviceKv& d = it->second;
    for (int32_t s = 0; s < d.store->n_layers() && d.broken.ok(); ++s) {
        uint8_t* k = d.k.as<uint8_t>() + s * d.k_storage_bytes;
        uint8_t* v = d.v.as<uint8_t>() + s * d.v_storage_bytes;
        const cudaError_t ek = cudaMemcpyAsync(k + dst * d.layout.k_block_stride, k + src * d.layout.k_block_stride,
                                               static_cast<size_t>(d.layout.k_block_stride), cudaMemcpyDeviceToDevice, stream_);
        const cudaError_t ev = cudaMemcpyAsync(v + dst * d.layout.v_block_stride, v + src * d.layout.v_block_stride,
                                               static_cast<size_t>(d.layout.v_block_stride), cudaMemcpyDeviceToDevice, stream_);
        d.broken = cuda::check(ek != cudaSuccess ? ek : ev, "copying a KV block on the device");
    }
}

// Copies `meta` into this layer's region of the pinned staging buffer and queues its upload.
Status CudaBackend::stage(const std::vector<int32_t>& meta, int32_t*& device_meta) {
    if (pinned_used_ + meta.size() > pinned_capacity_) {
        // Regions of earlier layers may still be queued for copying: wait before replacing them.
        WB_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "the step's operations");
        pinned_used_ = 0;
        if (meta.size() > pinned_capacity_) {
            if (pinned_) (void)cudaFreeHost(pinned_);
            pinned_ = nullptr;
            pinned_capacity_ = 0;
            const size_t capacity = std::max<size_t>(meta.size() * 2, size_t{1} << 16);
            void* p = nullptr;
            WB_CUDA_RETURN_IF_ERROR(cudaMallocHost(&p, capacity * 4), "allocating pinned host memory for attention plans");
            pinned_ = static_cast<int32_t*>(p);
            pinned_capacity_ = capacity;
        }
    }
    if (meta_.size() < meta.size() * 4) {
        WB_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "the step's operations");   // earlier kernels read meta_
        WB_ASSIGN_OR_RETURN(meta_, DeviceBuffer::allocate(std::max(meta.size() * 8, size_t{1} << 16)));
    }
    int32_t* region = pinned_ + pinned_used_;
    std::copy(meta.begin(), meta.end(), region);
    pinned_used_ += meta.size();
    device_meta = meta_.as<int32_t>();
    return cuda::check(cudaMemcpyAsync(device_meta, region, meta.size() * 4, cudaMemcpyHostToDevice, stream_), "uploading an attention plan");
}

Status CudaBackend::attend_on_device(int32_t il, PagedKv& kv, KvGroup& group) {
    const auto t_attention = std::chrono::steady_clock::now();
    const int64_t n = n_;
    KvStore& store = group.store();
    WB_ASSIGN_OR_RETURN(DeviceKv* d, device_kv(store));
    // Every later step on this cache fails alike: the engine's reload is the way back.
    if (!d->broken.ok()) return d->broken;
    const int32_t storage = group.storage_of(il);
    const std::span<const int32_t> positions = group.positions();
    const bool own_kv = kv.layer_computes_kv(il);
    if (static_cast<int64_t>(q_host_.size()) < n * hp_.n_embd_q()) q_host_.resize(static_cast<size_t>(n * hp_.n_embd_q()));
    const AttendPlan& plan = kv.plan(il, q_host_.data());   // these policies do not read the queries
    const std::span<const KvStreamView> streams = kv.streams(il);
    if (plan.per_kv_head) return error(StatusCode::internal, "cuda: a per-head plan on the device path");
    const int64_t n_lists = static_cast<int64_t>(plan.offsets.size()) - 1;
    if (n_lists != n) return error(StatusCode::internal, "cuda: the plan has " + std::to_string(n_lists) + " lists for " + std::to_string(n) + " rows");
    // Every layer of a group reads the same plan in a step (the same lists over the same block
    // tables; only the storage differs): it is flattened and uploaded once, for the first.
    const bool same_plan = plan_group_ == &group && plan_step_ == step_ && plan.offsets == plan_offsets_ &&
                           std::equal(plan.spans.begin(), plan.spans.end(), plan_spans_.begin(), plan_spans_.end(),
                                      [](const KvSpan& a, const KvSpan& b) { return a.stream == b.stream && a.begin == b.begin && a.end == b.end; });
    if (!same_plan) WB_RETURN_IF_ERROR(upload_plan(plan, streams, positions, store, storage));
    plan_group_ = &group;
    plan_step_ = step_;
    const cuda::DeviceKvPlan& dp = device_plan_;
    const int32_t* slots = meta_.as<int32_t>();
    uint8_t* k_arena = d->k.as<uint8_t>() + storage * d->k_storage_bytes;
    uint8_t* v_arena = d->v.as<uint8_t>() + storage * d->v_storage_bytes;
    if (own_kv) WB_RETURN_IF_ERROR(cuda::kv_append(k_.as<float>(), v_.as<float>(), slots, n, d->layout, k_arena, v_arena, stream_));
    const size_t scratch = cuda::attend_kv_scratch_bytes(n, hp_.n_head, hp_.head_dim, dp.max_keys);
    if (attention_scratch_.size() < scratch) {
        WB_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "the step's operations");   // the old scratch may be in use
        WB_ASSIGN_OR_RETURN(attention_scratch_, DeviceBuffer::allocate(scratch * 2));
    }
    const float kq_scale = hp_.attention_scale > 0 ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
    WB_RETURN_IF_ERROR(cuda::attend_kv(q_.as<float>(), n, hp_.n_head, kq_scale, dp, d->layout, k_arena, v_arena,
                                       attention_scratch_.as<float>(), attn_.as<float>(), stream_));
    double keys = 0;
    for (const KvSpan& sp : plan.spans) keys += sp.end - sp.begin;
    attention_.ops += 4.0 * keys * static_cast<double>(hp_.n_head) * static_cast<double>(hp_.head_dim);
    // The time to queue it: the device runs it later, inside the step's total.
    attention_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_attention).count();
    return Status::ok_status();
}

// The plan flattened into one int32 array — [slots: n][offsets: lists + 1][spans: 3 each][tables]
// — staged and uploaded into meta_; device_plan_ points into it.
Status CudaBackend::upload_plan(const AttendPlan& plan, std::span<const KvStreamView> streams, std::span<const int32_t> positions,
                                KvStore& store, int32_t storage) {
    const int64_t n = n_, n_lists = n;
    const int32_t bt = store.n_tokens_per_block();
    std::vector<int32_t>& meta = meta_host_;
    meta.assign(static_cast<size_t>(n), -1);
    for (int64_t i = 0; i <= n_lists; ++i) meta.push_back(static_cast<int32_t>(plan.offsets[static_cast<size_t>(i)]));
    const size_t spans_at = meta.size();
    meta.resize(spans_at + plan.spans.size() * 3);
    int32_t max_keys = 0;
    for (int64_t t = 0; t < n_lists; ++t) {
        int32_t keys = 0;
        for (const KvSpan& sp : plan.list(t)) {
            const KvStreamView& view = streams[static_cast<size_t>(sp.stream)];
            if (view.k_base != store.k_base(storage))
                return error(StatusCode::internal, "cuda: a span outside the layer's KV store on the device path");
            const size_t i = static_cast<size_t>(&sp - plan.spans.data());
            meta[spans_at + 3 * i] = sp.begin;
            meta[spans_at + 3 * i + 1] = sp.end;
            meta[spans_at + 3 * i + 2] = static_cast<int32_t>(meta.size() - spans_at - 3 * plan.spans.size());
            for (int32_t b = sp.begin / bt; b <= (sp.end - 1) / bt; ++b) meta.push_back(view.blocks[b]);
            keys += sp.end - sp.begin;
        }
        max_keys = std::max(max_keys, keys);
        // The row's own slot: its position in its sequence's token stream (every list here reads
        // its sequence from 0); written by the layers that compute their KV.
        const std::span<const KvSpan> list = plan.list(t);
        if (!list.empty()) {
            const int32_t pos = positions[static_cast<size_t>(t)];
            meta[static_cast<size_t>(t)] = streams[static_cast<size_t>(list.front().stream)].blocks[pos / bt] * bt + pos % bt;
        }
    }
    plan_group_ = nullptr;   // until the upload is queued
    int32_t* dm = nullptr;
    WB_RETURN_IF_ERROR(stage(meta, dm));
    device_plan_ = {};
    device_plan_.offsets = dm + n;
    device_plan_.spans = reinterpret_cast<const cuda::DeviceKvSpan*>(dm + spans_at);
    device_plan_.tables = dm + spans_at + plan.spans.size() * 3;
    device_plan_.max_keys = max_keys;
    plan_offsets_ = plan.offsets;
    plan_spans_ = plan.spans;
    return Status::ok_status();
}

Status CudaBackend::attach_kv(PagedKv& kv) {
    for (int32_t il = 0; il < hp_.n_layer; ++il)
        if (KvGroup& group = kv.group_of(il); on_device(group, kv)) WB_RETURN_IF_ERROR(device_kv(group.store()).status());
    return Status::ok_status();
}

}  // namespace workbench
