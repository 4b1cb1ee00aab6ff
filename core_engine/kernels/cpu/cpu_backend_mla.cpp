// The CPU backend's multi-head latent attention (DeepSeek's MLA, model_hparams.h), absorbed:
// attention_in makes each token's cache row [c | RoPE key] and each head's query
// [W_k_b·q_nope | RoPE query], so the kernel attends over one latent KV head whose values are c
// (attention.h head_dim_v) and reads kv_lora_rank + n_rot values per token and layer;
// attention_out takes each head's latent output through its W_v_b, then the output projection.
// The heads' products run as one group over each head's gathered rows (matmul_items). Older
// files' single attn_kv_b becomes the same per-head matrices at load (latent_heads_from_kv_b).
#include <algorithm>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/rms_norm.h"
#include "tensor/dequantize.h"

namespace workbench {
// Rows made at load (`values`: n_out rows of n_in, f32), packed as 8-bit blocks when the file's
// weights are quantized — so they read no more bytes than the file's would — else kept as f32.
Status CpuBackend::pack_made_matrix(std::vector<float> values, int64_t n_in, int64_t n_out, DType file_type, const PackFn& pack,
                                    PackedMatrix& out) {
    if (file_type != DType::f32 && file_type != DType::f16 && file_type != DType::bf16 && n_in % 32 == 0) {
        std::vector<uint8_t> q8(static_cast<size_t>(n_out * n_in / 32 * 34));
        quantize_row(DType::q8_0, values.data(), q8.data(), n_out * n_in);
        WB_RETURN_IF_ERROR(pack(WeightTensor{DType::q8_0, q8.data(), n_in, n_out, q8.size()}, out));
        if (!out.owned && out.data == q8.data())   // used in place: the bytes must stay
            return error(StatusCode::internal, "latent attention: a matrix made at load was not repacked");
        return {};
    }
    std::vector<float>& kept = owned_f32_.emplace_back(std::move(values));
    return pack(WeightTensor{DType::f32, reinterpret_cast<const uint8_t*>(kept.data()), n_in, n_out, kept.size() * sizeof(float)}, out);
}

Status CpuBackend::latent_heads_from_kv_b(const LayerWeights& l, PackedLayer& p, const PackFn& pack) {
    const int64_t n_head = hp_.n_head, rank = hp_.mla.kv_lora_rank, nope = hp_.mla_nope(), hv = hp_.mla.head_v;
    const WeightTensor& kv_b = l.wkv_b;
    const uint64_t row_bytes = kv_b.n_bytes / static_cast<uint64_t>(kv_b.n_out);
    std::vector<float> rows(static_cast<size_t>(nope * rank));
    p.wk_b.resize(static_cast<size_t>(n_head));
    p.wv_b.resize(static_cast<size_t>(n_head));
    for (int64_t h = 0; h < n_head; ++h) {
        const int64_t first = h * (nope + hv);
        // W_k_b[h] is the head's key rows transposed: rank rows of nope values.
        dequantize_row(kv_b.type, kv_b.data + static_cast<uint64_t>(first) * row_bytes, rows.data(), nope * rank);
        std::vector<float> k_b(static_cast<size_t>(rank * nope));
        for (int64_t i = 0; i < nope; ++i)
            for (int64_t j = 0; j < rank; ++j) k_b[static_cast<size_t>(j * nope + i)] = rows[static_cast<size_t>(i * rank + j)];
        WB_RETURN_IF_ERROR(pack_made_matrix(std::move(k_b), nope, rank, kv_b.type, pack, p.wk_b[static_cast<size_t>(h)]));
        // W_v_b[h] is the head's value rows as they are.
        WB_RETURN_IF_ERROR(pack(WeightTensor{kv_b.type, kv_b.data + static_cast<uint64_t>(first + nope) * row_bytes, rank, hv,
                                             static_cast<uint64_t>(hv) * row_bytes},
                                p.wv_b[static_cast<size_t>(h)]));
    }
    return {};
}

std::optional<uint64_t> CpuBackend::latent_head_bytes(int32_t il) const {
    if (!hp_.is_mla()) return std::nullopt;
    const PackedLayer& p = packed_[static_cast<size_t>(il)];
    if (hp_.mla.expanded) return p.wk_up.n_bytes + p.wv_up.n_bytes;
    uint64_t bytes = 0;
    for (const std::vector<PackedMatrix>* heads : {&p.wk_b, &p.wv_b})
        for (const PackedMatrix& m : *heads) bytes += m.n_bytes;
    return bytes;
}

Status CpuBackend::latent_up_projections(const LayerWeights& l, PackedLayer& p, const PackFn& pack) {
    const int64_t n_head = hp_.n_head, rank = hp_.mla.kv_lora_rank, nope = hp_.mla_nope(), hv = hp_.mla.head_v;
    // Every head's W_UK (nope rows of rank) and W_UV (hv rows of rank), from whichever layout the file has.
    std::vector<float> uk(static_cast<size_t>(n_head * nope * rank)), uv(static_cast<size_t>(n_head * hv * rank));
    std::vector<float> row(static_cast<size_t>(std::max(nope, rank)));
    const DType type = l.wkv_b.present() ? l.wkv_b.type : l.wk_b.type;
    for (int64_t h = 0; h < n_head; ++h) {
        if (l.wkv_b.present()) {
            const uint64_t row_bytes = l.wkv_b.n_bytes / static_cast<uint64_t>(l.wkv_b.n_out);
            const uint8_t* first = l.wkv_b.data + static_cast<uint64_t>(h * (nope + hv)) * row_bytes;
            dequantize_row(type, first, &uk[static_cast<size_t>(h * nope * rank)], nope * rank);
            dequantize_row(type, first + static_cast<uint64_t>(nope) * row_bytes, &uv[static_cast<size_t>(h * hv * rank)], hv * rank);
            continue;
        }
        const WeightTensor k_b = l.wk_b.mat(h), v_b = l.wv_b.mat(h);
        const uint64_t k_row = k_b.n_bytes / static_cast<uint64_t>(rank);
        for (int64_t j = 0; j < rank; ++j) {   // W_k_b[h] is W_UK[h] transposed
            dequantize_row(k_b.type, k_b.data + static_cast<uint64_t>(j) * k_row, row.data(), nope);
            for (int64_t i = 0; i < nope; ++i) uk[static_cast<size_t>((h * nope + i) * rank + j)] = row[static_cast<size_t>(i)];
        }
        dequantize_row(v_b.type, v_b.data, &uv[static_cast<size_t>(h * hv * rank)], hv * rank);
    }
    WB_RETURN_IF_ERROR(pack_made_matrix(std::move(uk), rank, n_head * nope, type, pack, p.wk_up));
    return pack_made_matrix(std::move(uv), rank, n_head * hv, type, pack, p.wv_up);
}

void CpuBackend::head_products(const std::vector<PackedMatrix>& ws, const float* x, int64_t n_in, float* y, int64_t head_stride, int64_t ldy,
                               int64_t group) {
    const int64_t n = n_, n_head = static_cast<int64_t>(ws.size()) * group;
    const bool quantized = is_quantized_layout(ws[0].layout);
    if (quantized) {
        resize_activations(heads_q_, n_head * n, n_in);
        quantize_activations(x, 0, n_head * n, heads_q_);
    }
    items_.clear();
    for (int64_t h = 0; h < n_head; ++h)
        items_.push_back({&ws[static_cast<size_t>(h / group)], x + h * n * n_in, quantized ? &heads_q_ : nullptr, h * n, n, y + h * head_stride, ldy});
    matmul_items(items_, *pool_, mm_);
}

// Expanded: queries [q_nope | RoPE query], keys [W_UK·c | RoPE key] and values W_UV·c per head,
// attended as multi-head attention with values narrower than keys.
void CpuBackend::expanded_attention_rows(int32_t il) {
    const int64_t n = n_, n_head = hp_.n_head, rank = hp_.mla.kv_lora_rank, r = hp_.n_rot;
    const int64_t head_k = hp_.mla.head_k, nope = head_k - r, hv = hp_.mla.head_v, rope_width = (n_head + 1) * r;
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    fit(mla_heads_, n * n_head * nope);
    fit(v_, n * n_head * hv);
    {
        const PackedMatrix* ws[2] = {&pl.wk_up, &pl.wv_up};
        float* ys[2] = {mla_heads_.data(), v_.data()};
        matmul_shared_input(ws, mla_c_.data(), ys, n, *pool_, mm_);
    }
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            const float* rot = mla_rope_.data() + t * rope_width;
            for (int64_t h = 0; h < n_head; ++h) {
                float* q = q_.data() + (t * n_head + h) * head_k;
                float* k = k_.data() + (t * n_head + h) * head_k;
                std::copy(mla_q_.data() + t * n_head * head_k + h * head_k, mla_q_.data() + t * n_head * head_k + h * head_k + nope, q);
                std::copy(rot + h * r, rot + (h + 1) * r, q + nope);
                std::copy(mla_heads_.data() + (t * n_head + h) * nope, mla_heads_.data() + (t * n_head + h + 1) * nope, k);
                std::copy(rot + n_head * r, rot + rope_width, k + nope);
            }
        }
    });
}

void CpuBackend::latent_attention_in(int32_t il) {
    const int64_t n = n_, n_head = hp_.n_head, rank = hp_.mla.kv_lora_rank, r = hp_.n_rot, row = rank + r;
    const int64_t head_k = hp_.mla.head_k, nope = head_k - r, q_width = n_head * head_k;
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    fit(mla_q_, n * q_width);
    fit(mla_kv_, n * row);
    MatmulFusion fusion;
    fusion.quantized_input = xn_q_.n_tokens == n ? &xn_q_ : nullptr;
    if (l.wq_a.present()) {
        const int64_t q_rank = hp_.mla.q_lora_rank;
        fit(mla_qa_, n * q_rank);
        const PackedMatrix* ws[2] = {&pl.wq_a, &pl.wkv_a_mqa};
        float* ys[2] = {mla_qa_.data(), mla_kv_.data()};
        matmul_shared_input(ws, xn_.data(), ys, n, *pool_, mm_, fusion);
        rms_norm(mla_qa_.data(), l.q_a_norm.f32(), mla_qa_.data(), n, q_rank, hp_.rms_eps);
        matmul(pl.wq_b, mla_qa_.data(), mla_q_.data(), n, *pool_, mm_);
    } else {
        const PackedMatrix* ws[2] = {&pl.wq, &pl.wkv_a_mqa};
        float* ys[2] = {mla_q_.data(), mla_kv_.data()};
        matmul_shared_input(ws, xn_.data(), ys, n, *pool_, mm_, fusion);
    }
    // The RoPE parts, rotated as heads of n_rot: each query head's, then the token's key.
    const int64_t rope_width = (n_head + 1) * r;
    const bool expanded = hp_.mla.expanded;
    fit(mla_rope_, n * rope_width);
    if (expanded) fit(mla_c_, n * rank);
    fit(mla_heads_, n_head * n * nope);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            const float* q = mla_q_.data() + t * q_width;
            for (int64_t h = 0; h < n_head; ++h) {
                std::copy(q + h * head_k + nope, q + (h + 1) * head_k, mla_rope_.data() + t * rope_width + h * r);
                if (!expanded) std::copy(q + h * head_k, q + h * head_k + nope, mla_heads_.data() + (h * n + t) * nope);
            }
            const float* kv = mla_kv_.data() + t * row;
            std::copy(kv + rank, kv + row, mla_rope_.data() + t * rope_width + n_head * r);
            rms_norm(kv, l.kv_a_norm.f32(), expanded ? mla_c_.data() + t * rank : k_.data() + t * row, 1, rank, hp_.rms_eps);
        }
        rope_features(mla_rope_.data(), rope_width, r, 0, rope_width, options_.rope, angles_, b, e);
        for (int64_t t = b; t < e && !expanded; ++t) {
            const float* rot = mla_rope_.data() + t * rope_width;
            std::copy(rot + n_head * r, rot + rope_width, k_.data() + t * row + rank);
            for (int64_t h = 0; h < n_head; ++h) std::copy(rot + h * r, rot + (h + 1) * r, q_.data() + (t * n_head + h) * row + rank);
        }
    });
    if (expanded) return expanded_attention_rows(il);
    // Each head's position-free query into c's space: q[t, h, 0:rank] = W_k_b[h] · q_nope[t, h].
    head_products(pl.wk_b, mla_heads_.data(), nope, q_.data(), row, n_head * row);
}

void CpuBackend::latent_attention_out(int32_t il) {
    const int64_t n = n_, n_head = hp_.n_head, rank = hp_.mla.kv_lora_rank, hv = hp_.mla.head_v;
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    if (hp_.mla.expanded) {   // the heads' outputs are in the output projection's space already
        matmul(pl.wo, attn_.data(), proj_.data(), n, *pool_, mm_);
        return;
    }
    fit(mla_heads_, n_head * n * rank);
    fit(mla_o_, n * n_head * hv);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t)
            for (int64_t h = 0; h < n_head; ++h)
                std::copy(attn_.data() + (t * n_head + h) * rank, attn_.data() + (t * n_head + h + 1) * rank, mla_heads_.data() + (h * n + t) * rank);
    });
    head_products(pl.wv_b, mla_heads_.data(), rank, mla_o_.data(), hv, n_head * hv);
    matmul(pl.wo, mla_o_.data(), proj_.data(), n, *pool_, mm_);
}

}  // namespace workbench
