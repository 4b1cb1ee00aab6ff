// The CUDA backend's attention; every path ends in the device's split-key attention kernel
// (kv_attention.cu) over the device copy of the layer's KV store (device arenas of the host
// KvStore's layout, kept by KvStoreMirror), reading exactly the spans the model's cache planned:
//  - device_written: full and cross_layer (no merge) with f32/f16/bf16/q8_0 KV — the device writes
//    the rows itself at the slots the model gives (rotating K by RoPE as it encodes it) and the
//    plan (which does not read the queries) is uploaded once per group and step;
//  - host_kept: the policies whose state lives on the host (a sliding window's sinks, top-k's
//    index, pooled entries, a cross-layer merge) and 4-bit/fp8 KV: K, V and Q come down
//    (host_rows), the cache writes and plans on the host exactly as on the CPU, the blocks it
//    wrote and any rows it built go up with the plan;
//  - host (heads over 256 dimensions): the CPU's attention kernel, the rows back up.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/attention_tiles.h"
#include "kernels/cuda/cuda_backend_impl.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/elementwise.h"
#include "kv_blocks/kv_row_codec.h"
#include "tensor/half_convert.h"

namespace workbench {
namespace {

// The KV types the device kernels read, as they name them.
std::optional<cuda::DeviceKvType> device_kv_type(KvDType type) {
    switch (type) {
        case KvDType::f32: return cuda::DeviceKvType::f32;
        case KvDType::f16: return cuda::DeviceKvType::f16;
        case KvDType::bf16: return cuda::DeviceKvType::bf16;
        case KvDType::q8_0: return cuda::DeviceKvType::q8_0;
        case KvDType::q4_0: return cuda::DeviceKvType::q4_0;
        case KvDType::fp8: return cuda::DeviceKvType::fp8;
        case KvDType::q2_0: return cuda::DeviceKvType::q2_0;
    }
    return std::nullopt;
}

// The types kv_append writes.
bool device_writes(KvDType type) { return type == KvDType::f32 || type == KvDType::f16 || type == KvDType::bf16 || type == KvDType::q8_0; }

}  // namespace

HostRows CudaBackend::host_rows(int32_t, const LayerKvStorage& kv, bool with_kv) {
    // A failed step writes nothing more into the cache (the model stops at the empty rows).
    if (!error_.ok()) return {};
    const int64_t n = n_;
    // The host reads this layer's K, V or Q: what was captured runs now, and steps on this
    // cache are not captured again (attach_kv sets it anew).
    graph_kv_ = false;
    keep(leave_capture());
    keep(rope_pending_keys());   // only the device's KV append rotates K itself
    // The device copy is made before the host's first write, so every write is followed.
    if (error_.ok() && attend_path(kv) == AttendPath::host_kept) keep(intact_device_kv(*kv.store).status());
    if (error_.ok()) keep(download(q_host_, q_, n * hp_.n_embd_q()));
    if (error_.ok() && with_kv) {
        keep(download(k_host_, k_, n * hp_.n_embd_kv()));
        keep(download(v_host_, v_, n * hp_.n_embd_kv()));
    }
    if (error_.ok()) keep(sync("the step's operations"));
    if (!error_.ok()) return {};
    return {q_host_.data(), with_kv ? k_host_.data() : nullptr, with_kv ? v_host_.data() : nullptr};
}

void CudaBackend::attend(int32_t, const LayerAttention& a) {
    if (!error_.ok()) return;
    switch (attend_path(a.kv)) {
        case AttendPath::device_written: keep(attend_device_written(a)); return;
        case AttendPath::host_kept: keep(attend_host_kept(a)); return;
        case AttendPath::host: attend_on_host(a); return;
    }
}

// Heads too wide for the device kernel: the cache wrote and planned from host_rows exactly as on
// the CPU, the CPU's attention kernel runs, the rows go back up.
void CudaBackend::attend_on_host(const LayerAttention& a) {
    const int64_t n = n_;
    const AttentionShape shape{hp_.n_head, hp_.n_head_kv, hp_.head_dim};
    const float kq_scale = hp_.attention_scale > 0 ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
    if (static_cast<int64_t>(attn_host_.size()) < n * hp_.n_embd_q()) attn_host_.resize(static_cast<size_t>(n * hp_.n_embd_q()));
    attend_spans(q_host_.data(), n, a.streams, *a.plan, shape, kq_scale, attn_host_.data(), *pool_);
    if (a.kv.rotated_values) unrotate_attention_rows(attn_host_.data(), n, shape, *pool_);
    keep(cuda::check(cudaMemcpyAsync(attn_.data(), attn_host_.data(), static_cast<size_t>(n * hp_.n_embd_q()) * 4, cudaMemcpyHostToDevice, stream_),
                     "copying attention rows to the device"));
    // The host buffer must stay as it is until the copy has read it.
    keep(sync("copying attention rows to the device"));
}

CudaBackend::AttendPath CudaBackend::attend_path(const LayerKvStorage& kv) const {
    if (hp_.head_dim > 256) return AttendPath::host;
    if (kv.token_rows_only && device_writes(kv.store->k_layout(0).type) && device_writes(kv.store->v_layout(0).type) && !kv.rotated_keys)
        return AttendPath::device_written;
    return AttendPath::host_kept;
}

Result<CudaBackend::DeviceKv*> CudaBackend::device_kv(KvStore& store) {
    if (auto it = device_kv_.find(store.id()); it != device_kv_.end()) return &it->second;
    // The store's bytes then live on the device only: a cache another backend writes (or mirrors)
    // would be read half from each.
    if (store.mirror() != nullptr)
        return error(StatusCode::unsupported, "this KV cache is already kept by another CUDA model: a KV cache serves one model");
    if (!store.uniform_rows())
        return error(StatusCode::unsupported, "this KV cache's rows differ in width by layer, which the CUDA cache does not hold");
    DeviceKv d;
    d.store = &store;
    const KvRowLayout& k = store.k_layout(0);
    const KvRowLayout& v = store.v_layout(0);
    d.layout = {*device_kv_type(k.type), *device_kv_type(v.type), k.row_bytes, k.token_stride, k.block_stride, v.row_bytes, v.token_stride, v.block_stride,
                store.n_tokens_per_block(), hp_.n_head_kv, hp_.head_dim, k.head_stride, v.head_stride};
    d.k_storage_bytes = k.block_stride * store.n_blocks();
    d.v_storage_bytes = v.block_stride * store.n_blocks();
    WB_ASSIGN_OR_RETURN(d.k, DeviceBuffer::allocate(static_cast<size_t>(d.k_storage_bytes * store.n_layers())));
    WB_ASSIGN_OR_RETURN(d.v, DeviceBuffer::allocate(static_cast<size_t>(d.v_storage_bytes * store.n_layers())));
    store.set_mirror(this);
    return &device_kv_.emplace(store.id(), std::move(d)).first->second;
}

Result<CudaBackend::DeviceKv*> CudaBackend::intact_device_kv(KvStore& store) {
    WB_ASSIGN_OR_RETURN(DeviceKv* d, device_kv(store));
    // Every later step on this cache fails alike: the engine's reload is the way back.
    if (!d->broken.ok()) return d->broken;
    return d;
}

void CudaBackend::block_written(uint64_t store_id, int32_t layer, BlockId block) {
    const auto it = device_kv_.find(store_id);
    if (it == device_kv_.end()) return;
    std::vector<std::pair<int32_t, BlockId>>& w = it->second.written;
    if (w.empty() || w.back() != std::make_pair(layer, block)) w.emplace_back(layer, block);
}

// The blocks the host wrote since the last upload, copied up (runs of adjacent blocks at once).
// The host's bytes are pageable: each copy has read them by the time it returns.
Status CudaBackend::upload_written(DeviceKv& d) {
    std::vector<std::pair<int32_t, BlockId>>& w = d.written;
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    for (size_t i = 0; i < w.size();) {
        size_t j = i + 1;
        while (j < w.size() && w[j].first == w[i].first && w[j].second == w[j - 1].second + 1) ++j;
        const int32_t layer = w[i].first;
        const int64_t first = w[i].second, count = static_cast<int64_t>(j - i);
        const int64_t ks = d.layout.k_block_stride, vs = d.layout.v_block_stride;
        WB_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.k.as<uint8_t>() + layer * d.k_storage_bytes + first * ks, d.store->k_base(layer) + first * ks,
                                                static_cast<size_t>(count * ks), cudaMemcpyHostToDevice, stream_),
                                "copying KV blocks the host wrote to the device");
        WB_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.v.as<uint8_t>() + layer * d.v_storage_bytes + first * vs, d.store->v_base(layer) + first * vs,
                                                static_cast<size_t>(count * vs), cudaMemcpyHostToDevice, stream_),
                                "copying KV blocks the host wrote to the device");
        i = j;
    }
    w.clear();
    return Status::ok_status();
}

void CudaBackend::block_copied(uint64_t store_id, BlockId src, BlockId dst) {
    const auto it = device_kv_.find(store_id);
    if (it == device_kv_.end()) return;
    DeviceKv& d = it->second;
    // The source must be current on the device before it is copied there.
    if (!d.written.empty() && d.broken.ok()) d.broken = upload_written(d);
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

// Copies `meta` into a pinned region of this step and queues its upload into meta_.
Status CudaBackend::stage(const std::vector<int32_t>& meta, int32_t*& device_meta) {
    if (meta_.size() < meta.size() * 4) {
        WB_RETURN_IF_ERROR(sync("the step's operations"));   // earlier kernels read meta_
        WB_ASSIGN_OR_RETURN(meta_, DeviceBuffer::allocate(std::max(meta.size() * 8, size_t{1} << 16)));
    }
    device_meta = meta_.as<int32_t>();
    return upload_staged(device_meta, meta.data(), meta.size() * 4, "uploading an attention plan");
}

Status CudaBackend::attend_device_written(const LayerAttention& a) {
    const int64_t n = n_;
    KvStore& store = *a.kv.store;
    WB_ASSIGN_OR_RETURN(DeviceKv* d, intact_device_kv(store));
    const int32_t storage = a.kv.storage;
    const AttendPlan& plan = *a.plan;
    if (plan.per_kv_head) return error(StatusCode::internal, "cuda: a per-head plan on the device-written path");
    // Every layer of a group reads the same plan in a step (the same lists over the same block
    // tables; only the storage differs): it is flattened and uploaded once, for the first.
    const bool same_plan = plan_store_ == &store && plan_step_ == step_ && plan.offsets == plan_offsets_ &&
                           std::equal(plan.spans.begin(), plan.spans.end(), plan_spans_.begin(), plan_spans_.end(),
                                      [](const KvSpan& x, const KvSpan& y) { return x.stream == y.stream && x.begin == y.begin && x.end == y.end; });
    if (!same_plan) {
        WB_RETURN_IF_ERROR(upload_plan(plan, a.streams, a.row_slots, store, storage));
        plan_store_ = &store;
        plan_step_ = step_;
        plan_offsets_ = plan.offsets;
        plan_spans_ = plan.spans;
    }
    if (a.write_kv) {
        // K's RoPE in the append (attention_in left it pending).
        const cuda::KeyRope rope = k_rope_pending_ ? rope_angles_for(k_rope_local_) : cuda::KeyRope{};
        k_rope_pending_ = false;
        WB_RETURN_IF_ERROR(cuda::kv_append(k_.as<float>(), v_.as<float>(), meta_.as<int32_t>(), n, d->layout,
                                           d->k.as<uint8_t>() + storage * d->k_storage_bytes, d->v.as<uint8_t>() + storage * d->v_storage_bytes,
                                           stream_, rope));
    }
    return run_attention(*d, storage);
}

Status CudaBackend::attend_host_kept(const LayerAttention& a) {
    const int64_t n = n_;
    KvStore& store = *a.kv.store;
    WB_ASSIGN_OR_RETURN(DeviceKv* d, intact_device_kv(store));
    if (a.queries_changed)   // rotated on the host (stored keys are): back up
        WB_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(q_.data(), q_host_.data(), static_cast<size_t>(n * hp_.n_embd_q()) * 4, cudaMemcpyHostToDevice, stream_),
                                "copying rotated queries to the device");
    WB_RETURN_IF_ERROR(upload_written(*d));
    // The plan and its host-built rows differ by layer (a selection, a layer's sinks): no reuse.
    plan_store_ = nullptr;
    WB_RETURN_IF_ERROR(upload_plan(*a.plan, a.streams, {}, store, a.kv.storage));
    WB_RETURN_IF_ERROR(run_attention(*d, a.kv.storage));
    // Values stored rotated: the output turns back, as the CPU backend's does.
    if (a.kv.rotated_values) return cuda::hadamard_rows(attn_.as<float>(), n * hp_.n_head, hp_.head_dim, stream_);
    return Status::ok_status();
}

// The split-key kernel over the uploaded plan (device_plan_), into attn_.
Status CudaBackend::run_attention(DeviceKv& d, int32_t storage) {
    const int64_t n = n_;
    const cuda::DeviceKvPlan& dp = device_plan_;
    const size_t scratch = cuda::attend_kv_scratch_bytes(n, hp_.n_head, hp_.head_dim, dp.max_keys, dp.tile_shared != nullptr);
    if (attention_scratch_.size() < scratch) {
        WB_RETURN_IF_ERROR(sync("the step's operations"));   // the old scratch may be in use
        WB_ASSIGN_OR_RETURN(attention_scratch_, DeviceBuffer::allocate(scratch * 2));
    }
    const float kq_scale = hp_.attention_scale > 0 ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
    return cuda::attend_kv(q_.as<float>(), n, hp_.n_head, kq_scale, dp, d.layout, d.k.as<uint8_t>() + storage * d.k_storage_bytes,
                           d.v.as<uint8_t>() + storage * d.v_storage_bytes, attention_scratch_.as<float>(), attn_.as<float>(), stream_);
}

// The plan flattened into one int32 array, staged and uploaded into meta_ (device_plan_ points
// into it): [slots: n][offsets: lists + 1][spans: 6 words each], then per stream the plan reads
// either its block table from the first block read (once, however many spans read it) or its
// host-built K and V rows (f32 bits), then the tiles' shared key counts when tiling pays.
// `row_slots` given (the model's, from the cache: row t's own slot in its token stream, where
// kv_append writes it) they lead the upload; else the upload's slots are unused.
Status CudaBackend::upload_plan(const AttendPlan& plan, std::span<const KvStreamView> streams, std::span<const int32_t> row_slots,
                                KvStore& store, int32_t storage) {
    const int64_t n = n_, n_lists = static_cast<int64_t>(plan.offsets.size()) - 1;
    if (n_lists != (plan.per_kv_head ? n * hp_.n_head_kv : n))
        return error(StatusCode::internal, "cuda: the plan has " + std::to_string(n_lists) + " lists for " + std::to_string(n) + " rows");
    const int32_t bt = store.n_tokens_per_block();
    const int64_t row_floats = static_cast<int64_t>(hp_.n_head_kv) * hp_.head_dim;
    std::vector<int32_t>& meta = meta_host_;
    meta.assign(static_cast<size_t>(n), -1);
    for (int64_t i = 0; i <= n_lists; ++i) meta.push_back(static_cast<int32_t>(plan.offsets[static_cast<size_t>(i)]));
    const size_t spans_at = meta.size();
    meta.resize(spans_at + plan.spans.size() * 6);
    std::vector<StreamUse>& use = stream_use_;
    use.assign(streams.size(), {});
    int32_t max_keys = 0;
    for (int64_t i = 0; i < n_lists; ++i) {
        int32_t keys = 0;
        for (const KvSpan& sp : plan.list(i)) {
            StreamUse& u = use[static_cast<size_t>(sp.stream)];
            u.first = u.entries == 0 ? sp.begin : std::min(u.first, sp.begin);
            u.entries = std::max(u.entries, sp.end);
            keys += sp.end - sp.begin;
        }
        max_keys = std::max(max_keys, keys);
    }
    for (size_t si = 0; si < streams.size(); ++si) {
        StreamUse& u = use[si];
        if (u.entries == 0) continue;
        const KvStreamView& view = streams[si];
        if (view.k_base == store.k_base(storage) && view.v_base == store.v_base(storage) && view.block_tokens == bt &&
            view.k.head_stride == store.k_layout(storage).head_stride && view.v.head_stride == store.v_layout(storage).head_stride) {
            // From the first block read: blocks released before it are never sent.
            u.table_at = static_cast<int32_t>(meta.size()) - u.first / bt;
            for (int32_t b = u.first / bt; b <= (u.entries - 1) / bt; ++b) meta.push_back(view.blocks[b]);
            continue;
        }
        // Anything else must be rows a policy built (f32) or the recent window's ring (f16): one
        // flat block of n_kv_heads rows a token, sent as f32.
        const KvDType type = view.k.type;
        const int64_t value_bytes = type == KvDType::f32 ? 4 : 2;
        const bool flat = (type == KvDType::f32 || type == KvDType::f16) && view.v.type == type && view.blocks[0] == 0 &&
                          view.k.token_stride == row_floats * value_bytes && view.v.token_stride == row_floats * value_bytes &&
                          u.entries <= view.block_tokens;
        if (!flat) return error(StatusCode::internal, "cuda: a span outside the layer's KV store that is not flat f32 or f16 rows");
        const size_t floats = static_cast<size_t>(u.entries * row_floats);
        const auto append_rows = [&](const uint8_t* rows) {
            const int32_t at = static_cast<int32_t>(meta.size());
            meta.resize(meta.size() + floats);
            if (type == KvDType::f32) {
                std::memcpy(meta.data() + at, rows, floats * 4);
            } else {
                const auto* halves = reinterpret_cast<const uint16_t*>(rows);
                for (size_t i = 0; i < floats; ++i) {
                    const float f = half_to_float(halves[i]);
                    std::memcpy(meta.data() + at + i, &f, 4);
                }
            }
            return at;
        };
        u.flat_k = append_rows(view.k_base);
        u.flat_v = append_rows(view.v_base);
    }
    for (size_t i = 0; i < plan.spans.size(); ++i) {
        const KvSpan& sp = plan.spans[i];
        const StreamUse& u = use[static_cast<size_t>(sp.stream)];
        const float bias = streams[static_cast<size_t>(sp.stream)].score_bias;
        int32_t* w = meta.data() + spans_at + 6 * i;
        w[0] = sp.begin;
        w[1] = sp.end;
        w[2] = u.flat_k < 0 ? u.table_at + sp.begin / bt : 0;
        w[3] = u.flat_k;
        w[4] = u.flat_v;
        std::memcpy(&w[5], &bias, 4);
    }
    // A prompt's rows share their first keys: the tiled kernel stages them once per tile.
    const size_t tiles_at = meta.size();
    const bool tiles = hp_.head_dim <= cuda::kAttendTileMaxHeadDim && cuda::tile_shared_keys(plan, n, hp_.n_head_kv, meta);
    for (int64_t t = 0; t < static_cast<int64_t>(row_slots.size()); ++t)
        if (!plan.list(t).empty()) meta[static_cast<size_t>(t)] = row_slots[static_cast<size_t>(t)];
    plan_store_ = nullptr;   // until the upload is queued
    int32_t* dm = nullptr;
    WB_RETURN_IF_ERROR(stage(meta, dm));
    device_plan_ = {};
    device_plan_.offsets = dm + n;
    device_plan_.spans = reinterpret_cast<const cuda::DeviceKvSpan*>(dm + spans_at);
    device_plan_.tables = dm;
    device_plan_.flat = reinterpret_cast<const float*>(dm);
    device_plan_.tile_shared = tiles ? dm + tiles_at : nullptr;
    device_plan_.per_kv_head = plan.per_kv_head;
    device_plan_.max_keys = max_keys;
    return Status::ok_status();
}

Status CudaBackend::attach_kv(std::span<const LayerKvStorage> layers) {
    bool device_written = true;   // steps are captured while every layer's KV is written on the device
    graph_kv_ = false;
    for (const LayerKvStorage& layer : layers) {
        const AttendPath path = attend_path(layer);
        device_written = device_written && path == AttendPath::device_written;
        if (path != AttendPath::host) WB_RETURN_IF_ERROR(device_kv(*layer.store).status());
    }
    graph_kv_ = device_written;   // the cache attached last decides: a backend serves one cache
    return Status::ok_status();
}

}  // namespace workbench
