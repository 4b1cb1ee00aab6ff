// The CPU backend's operations. Every op works on the whole step's rows so weights are read once
// per step, not per token.
#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <utility>

#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/swiglu.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

// Up to this many tokens a step's biases, RoPE and SwiGLU run inside the matmul that produces
// their input (its chunks are small and still in cache); longer steps run them as passes over
// token rows.
constexpr int64_t kFusedStepTokens = 16;


}  // namespace

void CpuBackend::add_bias(float* x, const WeightTensor& b, int64_t n_rows) {
    if (!b.present()) return;
    for (int64_t r = 0; r < n_rows; ++r)
        for (int64_t i = 0; i < b.n_in; ++i) x[r * b.n_in + i] += b.f32()[i];
}

Result<std::unique_ptr<CpuBackend>> CpuBackend::create(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                       const std::function<void(const uint8_t*, uint64_t)>& on_repacked) {
    std::unique_ptr<CpuBackend> b(new CpuBackend(hp, w, options));
    auto pack = [&](const WeightTensor& t, PackedMatrix& out) -> Status {
        if (!pack_matrix(t, out))
            return error(StatusCode::resource_exhausted, "out of memory repacking a " + std::to_string(t.n_bytes >> 20) + " MiB weight matrix");
        if (!out.owned) return {};  // used in place
        if (on_repacked) on_repacked(t.data, t.n_bytes);
        // The copy moves to huge pages (one matrix in flight at a time, so the peak barely moves).
        if (uint8_t* moved = b->weight_memory_.allocate(out.n_bytes)) {
            std::memcpy(moved, out.owned.get(), out.n_bytes);
            out.data = moved;
            out.owned.reset();
        }
        return {};
    };
    b->packed_.resize(w.layers.size());
    for (size_t il = 0; il < w.layers.size(); ++il) {
        const LayerWeights& l = w.layers[il];
        PackedLayer& p = b->packed_[il];
        const auto src = layer_matrices(l);
        const auto dst = layer_matrices(p);
        for (size_t i = 0; i < src.size(); ++i)
            if (src[i]->present() && src[i] != &l.wkv_b) WB_RETURN_IF_ERROR(pack(*src[i], *dst[i]));
        auto pack_stacks = [&](auto stacks, auto packed_stacks) -> Status {
            for (size_t i = 0; i < stacks.size(); ++i) {
                if (!stacks[i]->present()) continue;
                packed_stacks[i]->resize(static_cast<size_t>(stacks[i]->n_mat));
                for (int64_t e = 0; e < stacks[i]->n_mat; ++e) WB_RETURN_IF_ERROR(pack(stacks[i]->mat(e), (*packed_stacks[i])[static_cast<size_t>(e)]));
            }
            return {};
        };
        WB_RETURN_IF_ERROR(pack_stacks(layer_expert_matrices(l), layer_expert_matrices(p)));
        WB_RETURN_IF_ERROR(pack_stacks(layer_head_matrices(l), layer_head_matrices(p)));
        if (hp.mla.expanded) WB_RETURN_IF_ERROR(b->latent_up_projections(l, p, pack));
        else if (l.wkv_b.present()) WB_RETURN_IF_ERROR(b->latent_heads_from_kv_b(l, p, pack));
    }
    WB_RETURN_IF_ERROR(pack(w.output, b->output_));
    return b;
}

void CpuBackend::fit(std::vector<float>& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) v.resize(static_cast<size_t>(size));
}

void CpuBackend::activate(float* gate, const float* up, int64_t n) const {
    if (options_.clamped_swiglu) swiglu_clamped(gate, up, gate, n);
    else if (options_.gelu_gate) geglu_tanh(gate, up, gate, n);
    else swiglu(gate, up, gate, n);
}

void CpuBackend::ensure_scratch(int64_t n) {
    fit(x_, n * hp_.n_embd);
    fit(xn_, n * hp_.n_embd);
    fit(q_, n * hp_.n_embd_q());
    fit(k_, n * hp_.n_embd_kv());
    fit(v_, n * hp_.n_embd_kv());
    fit(attn_, n * hp_.n_head * std::max(hp_.head_dim, hp_.head_dim_v));
    fit(proj_, n * hp_.n_embd);
    fit(gate_, n * hp_.n_ff);
    fit(up_, n * hp_.n_ff);
}

void CpuBackend::token_rows(const std::function<void(int64_t, int64_t)>& fn) {
    // Split across the pool for a prompt (serial, they would leave the other threads spinning),
    // inline for a few tokens (a barrier costs more than a model-wide row).
    if (n_ < 8) fn(0, n_);
    else pool_->parallel_for(n_, fn);
}

void CpuBackend::begin_step(std::span<const int32_t> positions, ThreadPool& pool) {
    pool_ = &pool;
    pos_ = positions;
    n_ = static_cast<int64_t>(positions.size());
    ensure_scratch(n_);
    if (hp_.experts.n_expert > 0) {
        expert_reads_ = {};
        router_margins_.assign(static_cast<size_t>(n_), std::numeric_limits<float>::infinity());
    }
    rope_angles(positions.data(), n_, options_.rope, angles_);
    if (!hp_.local_layers.empty()) rope_angles(positions.data(), n_, options_.rope_local, angles_local_);
}

void CpuBackend::embed(std::span<const TokenId> tokens) {
    const int64_t n_embd = hp_.n_embd, n = static_cast<int64_t>(tokens.size());   // the step's rows
    for (int64_t t = 0; t < n; ++t) {
        float* row = x_.data() + t * n_embd;
        // A tied table lives only in its repacked form; an untied one is read from the file.
        if (w_.tied_output) packed_row_f32(output_, tokens[t], row);
        else dequantize_row(w_.token_embd.type, w_.token_embd.row(tokens[t]), row, n_embd);
        if (hp_.embedding_scale != 1.0f)
            for (int64_t i = 0; i < n_embd; ++i) row[i] *= hp_.embedding_scale;
    }
}

// When the matrices reading the norm's output take 8-bit activations, each row is quantized right
// after it is normalized (xn_q_), while it is in cache, instead of by the matmul. A sandwich
// block's post-norm normalizes the sublayer's output (proj_) before it joins.
void CpuBackend::residual_norm(const ResidualNorm& op) {
    const int64_t n_embd = hp_.n_embd;
    const WeightTensor* post_norm = op.post_norm && op.post_norm->present() ? op.post_norm : nullptr;
    const WeightTensor* norm = op.norm;
    bool quantize = false;
    if (norm) {
        const PackedLayer& pl = packed_[static_cast<size_t>(op.next_layer)];
        if (op.next_group == MatmulGroup::mlp_in)
            quantize = is_quantized_layout(pl.ffn_gate.layout) || is_quantized_layout(pl.ffn_up.layout) ||
                       is_quantized_layout(pl.ffn_gate_shexp.layout) || is_quantized_layout(pl.ffn_up_shexp.layout);
        else
            quantize = is_quantized_layout(pl.wq.layout) || is_quantized_layout(pl.wk.layout) || is_quantized_layout(pl.wv.layout) ||
                       is_quantized_layout(pl.wq_a.layout) || is_quantized_layout(pl.wkv_a_mqa.layout);
    }
    xn_q_.n_tokens = 0;  // not valid until written below
    if (quantize) resize_activations(xn_q_, n_, n_embd);
    const bool add = op.add;
    token_rows([&](int64_t b, int64_t e) {
        if (add && post_norm)
            rms_norm(proj_.data() + b * n_embd, post_norm->f32(), proj_.data() + b * n_embd, e - b, n_embd, hp_.rms_eps);
        if (add)
            for (int64_t i = b * n_embd; i < e * n_embd; ++i) x_[i] += proj_[i];
        if (!norm) return;
        for (int64_t r = b; r < e; ++r) {
            rms_norm(x_.data() + r * n_embd, norm->f32(), xn_.data() + r * n_embd, 1, n_embd, hp_.rms_eps);
            if (quantize) quantize_activations(xn_.data(), r, r + 1, xn_q_);
        }
    });
}

void CpuBackend::matmul_group(int32_t layer, MatmulGroup group, bool own_kv) {
    switch (group) {
        case MatmulGroup::attention_in:
            if (hp_.is_mla()) latent_attention_in(layer);
            else attention_in(layer, own_kv);
            break;
        case MatmulGroup::attention_out:
            if (hp_.is_mla()) {
                latent_attention_out(layer);
                break;
            }
            matmul(packed_[static_cast<size_t>(layer)].wo, attn_.data(), proj_.data(), n_, *pool_, mm_);
            add_bias(proj_.data(), w_.layers[static_cast<size_t>(layer)].bo, n_);
            break;
        case MatmulGroup::mlp_in: mlp_in(layer); break;
        case MatmulGroup::mlp_out: mlp_out(layer); break;
    }
}

void CpuBackend::attention_in(int32_t il, bool own_kv) {
    const int64_t n = n_;
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    const bool local = hp_.is_local_layer(il);
    const RopeParams& rp = local ? options_.rope_local : options_.rope;
    const RopeAngles& angles = local && !angles_local_.cos.empty() ? angles_local_ : angles_;
    // Biases and RoPE: for a few tokens on each chunk of Q/K/V rows by the thread that computed
    // it; for a prompt (a chunk's rows span every token and leave the cache) in a pass over token
    // rows.
    const PackedMatrix* ws[3] = {&pl.wq, &pl.wk, &pl.wv};
    float* ys[3] = {q_.data(), k_.data(), v_.data()};
    const WeightTensor* biases[3] = {&l.bq, &l.bk, &l.bv};
    const WeightTensor* head_norms[2] = {&l.q_norm, &l.k_norm};
    const bool qk_norm = l.q_norm.present();
    const int n_mats = own_kv ? 3 : 1;
    auto finish = [&](int m, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
        const int64_t width = ws[m]->n_out;
        if (biases[m]->present()) {
            const float* b = biases[m]->f32();
            for (int64_t t = t0; t < t1; ++t)
                for (int64_t r = r0; r < r1; ++r) ys[m][t * width + r] += b[r];
        }
        if (m < 2 && qk_norm)  // each whole head in [r0, r1): the fusion aligns rows to heads
            for (int64_t t = t0; t < t1; ++t)
                rms_norm(ys[m] + t * width + r0, head_norms[m]->f32(), ys[m] + t * width + r0, (r1 - r0) / hp_.head_dim,
                         hp_.head_dim, hp_.rms_eps);
        if (m < 2) rope_features(ys[m], width, hp_.head_dim, r0, r1, rp, angles, t0, t1);
    };
    MatmulFusion fusion;
    fusion.quantized_input = xn_q_.n_tokens == n ? &xn_q_ : nullptr;
    const bool in_epilogue = n < kFusedStepTokens;
    if (in_epilogue) {
        fusion.row_align = qk_norm ? hp_.head_dim : rope_feature_align(rp, hp_.head_dim);
        fusion.epilogue = [&](int m, int64_t r0, int64_t r1) { finish(m, r0, r1, 0, n); };
    }
    matmul_shared_input(std::span(ws, n_mats), xn_.data(), std::span(ys, n_mats), n, *pool_, mm_, fusion);
    if (!in_epilogue)
        pool_->parallel_for(n, [&](int64_t t0, int64_t t1) {
            for (int m = 0; m < n_mats; ++m) finish(m, 0, ws[m]->n_out, t0, t1);
        });
}

HostRows CpuBackend::host_rows(int32_t, const LayerKvStorage&, bool with_kv) {
    // An absorbed latent-attention row is its own value (V = its first values): k_ serves as both.
    const bool values_in_keys = hp_.is_mla() && !hp_.mla.expanded;
    return {q_.data(), with_kv ? k_.data() : nullptr, with_kv ? (values_in_keys ? k_.data() : v_.data()) : nullptr};
}

// The cache wrote K/V (the host's memory is this backend's) and planned: the kernel attends.
void CpuBackend::attend(int32_t il, const LayerAttention& a) {
    const AttentionShape shape{hp_.n_head, hp_.n_head_kv, hp_.head_dim, hp_.head_dim_v};
    const float kq_scale = hp_.attention_scale > 0 ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
    const WeightTensor& sinks = w_.layers[static_cast<size_t>(il)].attn_sinks;
    const std::span<const float> sink_logits = sinks.present() ? std::span(sinks.f32(), static_cast<size_t>(hp_.n_head)) : std::span<const float>{};
    if (a.latent) {   // the absorbed latent's rows: every head reads one latent KV head (cpu_backend_latent.cpp)
        const AttentionShape latent{hp_.n_head, a.latent->n_latents, a.latent->row_width(), a.latent->latent_rank()};
        fit(lat_z_, n_ * hp_.n_head * latent.head_dim_v);
        attend_spans(lat_q_.data(), n_, a.streams, *a.plan, latent, kq_scale, lat_z_.data(), *pool_, sink_logits);
        return;
    }
    attend_spans(q_.data(), n_, a.streams, *a.plan, shape, kq_scale, attn_.data(), *pool_, sink_logits);
    if (a.kv.rotated_values) unrotate_attention_rows(attn_.data(), n_, shape, *pool_);
}

void CpuBackend::mlp_in(int32_t il) {
    if (hp_.is_expert_layer(il)) return experts_in(il);
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    swiglu_mlp_in(pl.ffn_gate, pl.ffn_up, pl.ffn_down);
}

void CpuBackend::mlp_out(int32_t il) {
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    if (!hp_.is_expert_layer(il)) return swiglu_mlp_out(pl.ffn_down, proj_.data());
    experts_out(il);
    if (pl.ffn_gate_shexp.n_out == 0) return;
    // The shared experts read the same normed rows; their output joins the routed experts' sum.
    fit(shared_out_, n_ * hp_.n_embd);
    swiglu_mlp_in(pl.ffn_gate_shexp, pl.ffn_up_shexp, pl.ffn_down_shexp);
    swiglu_mlp_out(pl.ffn_down_shexp, shared_out_.data());
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t i = b * hp_.n_embd; i < e * hp_.n_embd; ++i) proj_[static_cast<size_t>(i)] += shared_out_[static_cast<size_t>(i)];
    });
}

void CpuBackend::swiglu_mlp_in(const PackedMatrix& gate_w, const PackedMatrix& up_w, const PackedMatrix& down_w) {
    const int64_t n = n_, n_ff = gate_w.n_out;
    fit(gate_, n * n_ff);
    fit(up_, n * n_ff);
    // SwiGLU, and the quantization of its output for the down matrix, in one pass. For a few
    // tokens it runs on each chunk of gate and up rows as soon as one thread has both (no pass of
    // its own, no barrier); for a prompt the chunk's rows span every token and have left the cache
    // by then, so a pass over token rows does it.
    quantize_ff_ = is_quantized_layout(down_w.layout) && n_ff % 32 == 0;
    const bool quantize_ff = quantize_ff_;
    const bool swiglu_in_epilogue = n < kFusedStepTokens;
    if (quantize_ff) resize_activations(ff_q_, n, n_ff);
    auto swiglu_rows = [&](int64_t t, int64_t r0, int64_t r1) {
        float* g = gate_.data() + t * n_ff;
        activate(g + r0, up_.data() + t * n_ff + r0, r1 - r0);
        if (quantize_ff) quantize_activation_blocks(g, t, r0 / 32, (r1 + 31) / 32, ff_q_);
    };
    {
        const PackedMatrix* ws[2] = {&gate_w, &up_w};
        float* ys[2] = {gate_.data(), up_.data()};
        MatmulFusion fusion;
        fusion.quantized_input = xn_q_.n_tokens == n ? &xn_q_ : nullptr;
        if (swiglu_in_epilogue) {
            fusion.same_rows = true;
            fusion.row_align = 32;
            fusion.epilogue = [&](int m, int64_t r0, int64_t r1) {
                if (m == 1)
                    for (int64_t t = 0; t < n; ++t) swiglu_rows(t, r0, r1);
            };
        }
        matmul_shared_input(ws, xn_.data(), ys, n, *pool_, mm_, fusion);
    }
    if (!swiglu_in_epilogue)
        token_rows([&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) swiglu_rows(t, 0, n_ff);
        });
}

void CpuBackend::swiglu_mlp_out(const PackedMatrix& down_w, float* out) {
    MatmulFusion down;
    down.quantized_input = quantize_ff_ ? &ff_q_ : nullptr;
    const PackedMatrix* ws[1] = {&down_w};
    float* ys[1] = {out};
    matmul_shared_input(ws, gate_.data(), ys, n_, *pool_, mm_, down);
}

void CpuBackend::output_head(std::span<const int64_t> logit_rows, float* logits) {
    const int64_t n_embd = hp_.n_embd;
    // Only the rows whose logits are wanted go through the (large) output head.
    const int64_t rows = static_cast<int64_t>(logit_rows.size());
    if (logit_rows.back() - logit_rows.front() + 1 == rows) {
        rms_norm(x_.data() + logit_rows.front() * n_embd, w_.output_norm.f32(), xn_.data(), rows, n_embd, hp_.rms_eps);
    } else {
        for (int64_t i = 0; i < rows; ++i)
            rms_norm(x_.data() + logit_rows[static_cast<size_t>(i)] * n_embd, w_.output_norm.f32(), xn_.data() + i * n_embd, 1, n_embd, hp_.rms_eps);
    }
    matmul(output_, xn_.data(), logits, rows, *pool_, mm_);
    if (const float cap = hp_.final_logit_softcap; cap > 0)
        for (int64_t i = 0; i < rows * hp_.n_vocab; ++i) logits[i] = cap * std::tanh(logits[i] / cap);
}

void CpuBackend::output_top_logits(std::span<const int64_t> rows, int32_t k, TopLogit* top) {
    const size_t n_vocab = static_cast<size_t>(hp_.n_vocab);
    head_logits_.resize(rows.size() * n_vocab);
    output_head(rows, head_logits_.data());
    for (size_t i = 0; i < rows.size(); ++i)
        select_top_logits(head_logits_.data() + i * n_vocab, n_vocab, top + i * static_cast<size_t>(k), static_cast<size_t>(k));
}

void CpuBackend::append_normed_rows(std::vector<float>& out) const {
    out.insert(out.end(), xn_.data(), xn_.data() + n_ * hp_.n_embd);
}

}  // namespace workbench
