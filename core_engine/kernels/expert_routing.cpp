// Routing as llama.cpp's build_moe_ffn does it, step for step (see expert_routing.h).
#include "kernels/expert_routing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace workbench {
namespace {

// ggml's soft_max: the max subtracted, expf per element, the sum in double, one scale.
void softmax(const float* x, int32_t n, float* out) {
    float max = -std::numeric_limits<float>::infinity();
    for (int32_t i = 0; i < n; ++i) max = std::max(max, x[i]);
    double sum = 0;
    for (int32_t i = 0; i < n; ++i) {
        out[i] = std::exp(x[i] - max);
        sum += out[i];
    }
    const float scale = static_cast<float>(1.0 / sum);
    for (int32_t i = 0; i < n; ++i) out[i] *= scale;
}

// How far apart two ranked values are relative to the larger: what a rounding error of the
// logits (which scales a probability by e^δ) has to cross to swap them.
float relative_gap(float a, float b) { return (a - b) / std::max(std::abs(a), 1e-30f); }

}  // namespace

void route_tokens(const float* logits, int64_t n, const RouterParams& p, ExpertChoice* choices, float* margins) {
    const int32_t ne = p.n_expert, k = p.k;
    constexpr float kNone = -std::numeric_limits<float>::infinity();
    std::vector<float> probs(static_cast<size_t>(ne)), selection(static_cast<size_t>(ne)), weights(static_cast<size_t>(k));
    std::vector<int32_t> order(static_cast<size_t>(ne));
    const bool grouped = p.n_groups > 1;
    const int32_t per_group = grouped ? ne / p.n_groups : ne;
    std::vector<float> group_score(static_cast<size_t>(std::max(p.n_groups, 1)));
    std::vector<int32_t> group_order(group_score.size());
    for (int64_t t = 0; t < n; ++t) {
        const float* x = logits + t * ne;
        switch (p.gating) {
        case ExpertGating::softmax: softmax(x, ne, probs.data()); break;
        case ExpertGating::sigmoid:
            for (int32_t e = 0; e < ne; ++e) probs[static_cast<size_t>(e)] = 1.0f / (1.0f + std::exp(-x[e]));
            break;
        case ExpertGating::softmax_weight: std::copy(x, x + ne, probs.begin()); break;
        }
        for (int32_t e = 0; e < ne; ++e) selection[static_cast<size_t>(e)] = probs[static_cast<size_t>(e)] + (p.selection_bias ? p.selection_bias[e] : 0.0f);
        float margin = std::numeric_limits<float>::infinity();
        if (grouped) {
            // A group's score is the sum of its two best selection values; the groups outside
            // the best n_group_used take no part.
            for (int32_t g = 0; g < p.n_groups; ++g) {
                const float* s = selection.data() + static_cast<size_t>(g) * static_cast<size_t>(per_group);
                float a = kNone, b = kNone;
                for (int32_t i = 0; i < per_group; ++i) {
                    if (s[i] > a) b = a, a = s[i];
                    else if (s[i] > b) b = s[i];
                }
                group_score[static_cast<size_t>(g)] = per_group > 1 ? a + b : a;
            }
            std::iota(group_order.begin(), group_order.end(), 0);
            std::stable_sort(group_order.begin(), group_order.end(),
                             [&](int32_t a, int32_t b) { return group_score[static_cast<size_t>(a)] > group_score[static_cast<size_t>(b)]; });
            margin = relative_gap(group_score[static_cast<size_t>(group_order[static_cast<size_t>(p.n_group_used) - 1])],
                                  group_score[static_cast<size_t>(group_order[static_cast<size_t>(p.n_group_used)])]);
            for (size_t r = static_cast<size_t>(p.n_group_used); r < group_order.size(); ++r)
                std::fill_n(selection.begin() + static_cast<std::ptrdiff_t>(group_order[r]) * per_group, per_group, kNone);
        }
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + std::min(k + 1, ne), order.end(), [&](int32_t a, int32_t b) {
            const float sa = selection[static_cast<size_t>(a)], sb = selection[static_cast<size_t>(b)];
            return sa > sb || (sa == sb && a < b);
        });
        if (k < ne && selection[static_cast<size_t>(order[static_cast<size_t>(k)])] != kNone)
            margin = std::min(margin, relative_gap(selection[static_cast<size_t>(order[static_cast<size_t>(k) - 1])],
                                                   selection[static_cast<size_t>(order[static_cast<size_t>(k)])]));
        for (int32_t s = 0; s < k; ++s) weights[static_cast<size_t>(s)] = probs[static_cast<size_t>(order[static_cast<size_t>(s)])];
        if (p.gating == ExpertGating::softmax_weight) softmax(weights.data(), k, weights.data());
        if (p.norm_weights) {
            float sum = 0;
            for (float w : weights) sum += w;
            sum = std::max(sum, 6.103515625e-5f);  // llama.cpp's floor: no division by a vanishing sum
            for (float& w : weights) w /= sum;
        }
        if (p.weights_scale != 0.0f && p.weights_scale != 1.0f)
            for (float& w : weights) w *= p.weights_scale;
        for (int32_t s = 0; s < k; ++s) choices[t * k + s] = {order[static_cast<size_t>(s)], weights[static_cast<size_t>(s)]};
        if (margins) margins[t] = margin;
    }
}

RouterParams router_params(const ExpertHparams& e) {
    RouterParams p;
    p.gating = e.gating;
    p.n_expert = e.n_expert;
    p.k = e.n_expert_used;
    p.norm_weights = e.norm_weights;
    p.weights_scale = e.weights_scale;
    p.n_groups = e.n_groups;
    p.n_group_used = e.n_group_used;
    return p;
}

void plan_experts(const ExpertChoice* choices, int64_t n, int32_t k, int32_t n_expert, ExpertPlan& plan) {
    std::vector<int64_t> count(static_cast<size_t>(n_expert) + 1, 0);
    for (int64_t i = 0; i < n * k; ++i) ++count[static_cast<size_t>(choices[i].expert)];
    plan.experts.clear();
    plan.first.assign(1, 0);
    std::vector<int64_t> next(static_cast<size_t>(n_expert), 0);
    for (int32_t e = 0; e < n_expert; ++e) {
        if (count[static_cast<size_t>(e)] == 0) continue;
        next[static_cast<size_t>(e)] = plan.first.back();
        plan.experts.push_back(e);
        plan.first.push_back(plan.first.back() + count[static_cast<size_t>(e)]);
    }
    plan.token.resize(static_cast<size_t>(n * k));
    plan.row_of.resize(static_cast<size_t>(n * k));
    for (int64_t t = 0; t < n; ++t)
        for (int32_t s = 0; s < k; ++s) {
            const int64_t row = next[static_cast<size_t>(choices[t * k + s].expert)]++;
            plan.token[static_cast<size_t>(row)] = static_cast<int32_t>(t);
            plan.row_of[static_cast<size_t>(t * k + s)] = row;
        }
}

}  // namespace workbench
