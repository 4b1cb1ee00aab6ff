// The CPU backend's mixture-of-experts MLP (mlp_in / mlp_out on a layer of experts): the
// router's logits, the routing (kernels/expert_routing.h), each token's normed row gathered
// once per expert that token chose — as 8-bit blocks when the experts are quantized — so an
// active expert multiplies all its tokens in one pass over its weights; the gate and up
// products of every active expert in one parallel region, the down products in another; each
// token's output the weighted sum of its experts' outputs in slot order, as llama.cpp adds them.
#include <algorithm>

#include "kernels/cpu/cpu_backend.h"

namespace workbench {
// Each gathered row's expert bias (gpt-oss): `bias` holds a row of `width` per expert.
void CpuBackend::add_expert_biases(const WeightTensor& bias, float* rows, int64_t width) const {
    if (!bias.present()) return;
    for (size_t i = 0; i < plan_.experts.size(); ++i) {
        const float* b = bias.f32() + static_cast<int64_t>(plan_.experts[i]) * width;
        for (int64_t r = plan_.first[i]; r < plan_.first[i + 1]; ++r)
            for (int64_t j = 0; j < width; ++j) rows[r * width + j] += b[j];
    }
}

void CpuBackend::experts_in(int32_t il) {
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    const ExpertHparams& eh = hp_.experts;
    const int64_t n = n_, n_embd = hp_.n_embd, n_ff = eh.n_ff_exp, k = eh.n_expert_used, ne = eh.n_expert;
    const LayerWeights& lw = w_.layers[static_cast<size_t>(il)];
    fit(router_logits_, n * ne);
    matmul(pl.ffn_gate_inp, xn_.data(), router_logits_.data(), n, *pool_, mm_);
    if (lw.ffn_gate_inp_b.present())
        for (int64_t t = 0; t < n; ++t)
            for (int64_t e = 0; e < ne; ++e) router_logits_[static_cast<size_t>(t * ne + e)] += lw.ffn_gate_inp_b.f32()[e];
    choices_.resize(static_cast<size_t>(n * k));
    layer_margins_.resize(static_cast<size_t>(n));
    RouterParams routing = router_params(eh);
    if (lw.exp_probs_b.present()) routing.selection_bias = lw.exp_probs_b.f32();
    route_tokens(router_logits_.data(), n, routing, choices_.data(), layer_margins_.data());
    for (size_t t = 0; t < layer_margins_.size(); ++t) router_margins_[t] = std::min(router_margins_[t], layer_margins_[t]);
    plan_experts(choices_.data(), n, static_cast<int32_t>(k), static_cast<int32_t>(ne), plan_);

    // Each routed (token, expert) pair's input row, grouped by expert.
    const int64_t rows = n * k;
    const bool quantized_in = is_quantized_layout(pl.ffn_gate_exps[0].layout);
    if (quantized_in) resize_activations(routed_q_, rows, n_embd);
    else fit(routed_x_, rows * n_embd);
    const int64_t n_blocks = n_embd / 32;
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t r = b * k; r < e * k; ++r) {
            const float* src = xn_.data() + static_cast<int64_t>(plan_.token[static_cast<size_t>(r)]) * n_embd;
            if (quantized_in) quantize_activation_blocks(src, r, 0, n_blocks, routed_q_);
            else std::copy(src, src + n_embd, routed_x_.data() + r * n_embd);
        }
    });
    fit(gate_, rows * n_ff);
    fit(up_, rows * n_ff);
    items_.clear();
    for (size_t i = 0; i < plan_.experts.size(); ++i) {
        const size_t e = static_cast<size_t>(plan_.experts[i]);
        const int64_t r0 = plan_.first[i], count = plan_.first[i + 1] - r0;
        for (auto [w, y] : {std::pair{&pl.ffn_gate_exps[e], gate_.data()}, {&pl.ffn_up_exps[e], up_.data()}})
            items_.push_back({w, routed_x_.data() + (quantized_in ? 0 : r0 * n_embd), quantized_in ? &routed_q_ : nullptr, r0, count,
                              y + r0 * n_ff, n_ff});
        for (const PackedMatrix* w : {&pl.ffn_gate_exps[e], &pl.ffn_up_exps[e], &pl.ffn_down_exps[e]}) {
            expert_reads_.bytes += static_cast<double>(w->n_bytes);
            expert_reads_.params_x_tokens += static_cast<double>(w->n_in) * static_cast<double>(w->n_out) * static_cast<double>(count);
        }
    }
    matmul_items(items_, *pool_, mm_);
    add_expert_biases(lw.ffn_gate_exps_b, gate_.data(), n_ff);
    add_expert_biases(lw.ffn_up_exps_b, up_.data(), n_ff);

    quantize_ff_ = is_quantized_layout(pl.ffn_down_exps[0].layout) && n_ff % 32 == 0;
    if (quantize_ff_) resize_activations(ff_q_, rows, n_ff);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t r = b * k; r < e * k; ++r) {
            float* g = gate_.data() + r * n_ff;
            activate(g, up_.data() + r * n_ff, n_ff);
            if (quantize_ff_) quantize_activation_blocks(g, r, 0, n_ff / 32, ff_q_);
        }
    });
}

void CpuBackend::experts_out(int32_t il) {
    const PackedLayer& pl = packed_[static_cast<size_t>(il)];
    const int64_t n = n_, n_embd = hp_.n_embd, n_ff = hp_.experts.n_ff_exp, k = hp_.experts.n_expert_used;
    fit(expert_out_, n * k * n_embd);
    items_.clear();
    for (size_t i = 0; i < plan_.experts.size(); ++i) {
        const size_t e = static_cast<size_t>(plan_.experts[i]);
        const int64_t r0 = plan_.first[i], count = plan_.first[i + 1] - r0;
        items_.push_back({&pl.ffn_down_exps[e], gate_.data() + r0 * n_ff, quantize_ff_ ? &ff_q_ : nullptr, r0, count,
                          expert_out_.data() + r0 * n_embd, n_embd});
    }
    matmul_items(items_, *pool_, mm_);
    add_expert_biases(w_.layers[static_cast<size_t>(il)].ffn_down_exps_b, expert_out_.data(), n_embd);
    token_rows([&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            float* out = proj_.data() + t * n_embd;
            for (int64_t s = 0; s < k; ++s) {
                const ExpertChoice& c = choices_[static_cast<size_t>(t * k + s)];
                const float* y = expert_out_.data() + plan_.row_of[static_cast<size_t>(t * k + s)] * n_embd;
                if (s == 0)
                    for (int64_t i = 0; i < n_embd; ++i) out[i] = c.weight * y[i];
                else
                    for (int64_t i = 0; i < n_embd; ++i) out[i] += c.weight * y[i];
            }
        }
    });
}

}  // namespace workbench
