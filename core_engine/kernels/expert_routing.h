// Mixture-of-experts routing, one implementation for every architecture and backend: from each
// token's router logits to the k experts it runs and their weights, in the order llama.cpp's
// build_moe_ffn computes them — gating (softmax, sigmoid, or raw logits softmaxed over the
// chosen k as gpt-oss does), a selection bias that moves the choice but not the weights
// (DeepSeek-V3), group-limited selection (the top groups by the sum of their two best), top-k,
// normalisation and scaling of the weights — and the step's plan, which groups the tokens by
// expert so each active expert's weights are read once per step, however many tokens chose it.
#pragma once

#include <cstdint>
#include <vector>

#include "model_data/model_hparams.h"

namespace workbench {

struct RouterParams {
    ExpertGating gating = ExpertGating::softmax;
    int32_t n_expert = 0;
    int32_t k = 0;                      // experts per token
    bool norm_weights = false;          // the k weights divided by their sum
    float weights_scale = 0.0f;         // applied unless 0 or 1
    int32_t n_groups = 0;               // > 1: group-limited selection
    int32_t n_group_used = 0;
    const float* selection_bias = nullptr;  // [n_expert], added for the choice only
};

struct ExpertChoice {
    int32_t expert = 0;
    float weight = 0.0f;
};

// Routes n tokens' logits ([n, n_expert]): writes k choices per token (in descending order of
// selection, ties to the lower expert) and, when `margins` is given, each token's distance from
// a different choice: the gap between its k-th and (k+1)-th selection values relative to the
// k-th (and, with groups, the same between the last kept and the first dropped group), about
// the error of the logits that could swap them.
void route_tokens(const float* logits, int64_t n, const RouterParams& p, ExpertChoice* choices, float* margins = nullptr);

// A model's routing as its hyperparameters say.
RouterParams router_params(const ExpertHparams& e);

// The step's tokens grouped by expert: expert experts[i] runs gathered rows [first[i],
// first[i + 1]), whose tokens are token[row] (ascending within an expert); the choice in slot s
// of token t is gathered row row_of[t·k + s].
struct ExpertPlan {
    std::vector<int32_t> experts;   // the active experts, ascending
    std::vector<int64_t> first;     // experts.size() + 1 offsets
    std::vector<int32_t> token;     // [n·k]
    std::vector<int64_t> row_of;    // [n·k]
};

void plan_experts(const ExpertChoice* choices, int64_t n, int32_t k, int32_t n_expert, ExpertPlan& plan);

}  // namespace workbench
