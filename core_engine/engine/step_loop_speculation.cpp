// Speculative decoding inside the step loop. After a token is delivered, drafts are appended to
// the sequence's known tokens (prompt lookup, or the draft model run on this thread); the
// scheduler runs them with the token as its decode, all rows' logits come back, and
// verify_drafts keeps the longest accepted prefix plus one token of the model's own (a
// correction, or a bonus when all were kept). The cache is cut back to the kept tokens
// through the attention policy (PagedKv::keep_prefix), so variants that cannot cut back exactly
// refuse speculation up front.
#include <algorithm>

#include "engine/engine_impl.h"
#include "engine/step_loop_live_sample.h"
#include "sampling/token_mask.h"
#include "speculation/ngram_lookup.h"
#include "speculation/speculative_sampling.h"

namespace workbench {
namespace {

// The draft model's own draws: the request's filters and temperature without the penalties
// (any q is exact as long as the drafts are drawn from it and it is reported).
SamplingParams draft_sampling(SamplingParams p) {
    p.repeat_penalty = 1.0f;
    p.frequency_penalty = p.presence_penalty = 0.0f;
    p.seed ^= 0x9e3779b97f4a7c15ULL;
    return p;
}

}  // namespace

Status StepLoop::check_speculation(const EngineRequest& request) const {
    const SpeculationParams& s = request.generation.speculation;
    if (s.kind == DraftKind::off) return {};
    WB_RETURN_IF_ERROR(workbench::check_speculation(s));
    if (s.kind == DraftKind::model && !e_.draft())
        return error(StatusCode::unsupported, "speculative decoding with a draft model needs one loaded with the model "
                                                      "(--draft MODEL, or the Draft model field of the sampling panel)");
    if (!e_.kv->can_truncate())
        return error(StatusCode::unsupported,
                     "speculative decoding rolls rejected drafts back, which the '" + e_.kv->layout_name() +
                         "' attention cannot do exactly (it releases or pools tokens as it goes); speculate with full, topk, latent "
                         "or unmerged cross_layer attention, on a model without trained sliding-window layers");
    return {};
}

void StepLoop::propose_drafts(LiveSample& c) {
    const GenerationRequest& g = c.req->generation;
    const SpeculationParams& s = g.speculation;
    if (c.draft_length == 0) c.draft_length = s.draft_max;
    // A draft never outruns the reply's budget or the context (all kept + one of the model's).
    const int32_t n_out = static_cast<int32_t>(c.tokens.size()) - c.n_prompt;
    int32_t n = std::min({c.draft_length, g.max_tokens - n_out - 1, PagedKv::kMaxStepTokens - 1});
    if (!e_.kv->unbounded_context()) n = std::min<int64_t>(n, e_.n_ctx - static_cast<int64_t>(c.tokens.size()));
    if (n <= 0) return;
    std::vector<TokenId> drafts = s.kind == DraftKind::lookup ? lookup_draft(c.tokens, s.ngram, n, std::min(2, s.ngram)) : draft_with_model(c, n);
    if (drafts.empty()) return;
    c.tokens.insert(c.tokens.end(), drafts.begin(), drafts.end());
    c.n_drafts = static_cast<int32_t>(drafts.size());
    sched_->append_draft(c.sched, c.n_drafts);
}

// Brings the draft model's copy of the sequence up to every known token, then drafts `n`
// tokens one step at a time. Any failure of the draft (its cache full) only means no drafts.
std::vector<TokenId> StepLoop::draft_with_model(LiveSample& c, int32_t n) {
    Engine::Impl& d = *e_.draft();
    std::vector<TokenId>& held = draft_held_[c.seq];
    size_t common = 0;
    while (common < held.size() && common < c.tokens.size() && held[common] == c.tokens[common]) ++common;
    // At least the last known token runs, for its logits.
    common = std::min(common, c.tokens.size() - 1);
    if (common < held.size()) {
        common = static_cast<size_t>(d.kv->keep_prefix(c.seq, static_cast<int32_t>(common)));
        held.resize(common);
    }
    const SamplingParams params = draft_sampling(c.req->generation.sampling);
    if (!c.draft_sampler) c.draft_sampler = std::make_unique<Sampler>(params);
    c.draft_q.clear();
    std::vector<TokenId> drafts;
    std::span<const TokenId> next = std::span(c.tokens).subspan(common);
    for (int32_t i = 0; i < n; ++i) {
        if (!d.model->forward(next, c.seq, *d.kv, false, draft_logits_, *e_.pool).ok()) {
            // The cache keeps whole chunks that ran: start this sequence over next time.
            d.kv->free(c.seq);
            held.clear();
            c.draft_q.clear();
            return {};
        }
        held.insert(held.end(), next.begin(), next.end());
        c.draft_q.emplace_back();
        // The draft proposes from the row as the target will judge it: the same logit_bias.
        const std::span<const float> row = mask_logits(draft_logits_, c.req->generation.sampling.logit_bias, nullptr, masked_);
        c.draft_sampler->distribution(row, c.draft_q.back());
        const TokenId t = params.temperature > 0 ? c.draft_sampler->sample(row) : c.draft_q.back().front().token;
        drafts.push_back(t);
        next = std::span(drafts).subspan(drafts.size() - 1);
    }
    return drafts;
}

void StepLoop::verify_drafts(LiveSample& c, const float* rows, int32_t n_rows) {
    const size_t n_vocab = static_cast<size_t>(e_.info.n_vocab);
    const int32_t n_run = n_rows - 1;   // drafts that ran after the decoded token
    const size_t first_draft = c.tokens.size() - static_cast<size_t>(c.n_drafts);
    const std::vector<TokenId> drafts(c.tokens.begin() + static_cast<std::ptrdiff_t>(first_draft),
                                      c.tokens.begin() + static_cast<std::ptrdiff_t>(first_draft) + n_run);
    c.tokens.resize(first_draft);
    // Each row as the sampler sees it, the request's logit_bias applied (sampling/token_mask.h).
    auto row = [&](int32_t i) {
        return mask_logits(std::span<const float>(rows + static_cast<size_t>(i) * n_vocab, n_vocab), c.req->generation.sampling.logit_bias,
                           nullptr, masked_);
    };
    // Decide every token first (the sampler's history advances as a plain run's would), then
    // cut the cache back, then stream: a stop among them ends the completion there.
    struct Decided {
        TokenId token;
        int32_t row;
    };
    std::vector<Decided> decided;
    std::vector<TokenProbability> p;
    int32_t n_accepted = 0;
    for (; n_accepted < n_run; ++n_accepted) {
        c.sampler.distribution(row(n_accepted), p);
        const std::span<const TokenProbability> q =
            static_cast<size_t>(n_accepted) < c.draft_q.size() ? std::span<const TokenProbability>(c.draft_q[static_cast<size_t>(n_accepted)])
                                                                : std::span<const TokenProbability>();
        const double u_accept = c.sampler.draw_unit(), u_residual = c.sampler.draw_unit();
        const SpeculativeDecision v = verify_draft(p, q, drafts[static_cast<size_t>(n_accepted)], u_accept, u_residual);
        c.sampler.accept(v.token);
        decided.push_back({v.token, n_accepted});
        if (!v.accepted) break;
    }
    if (n_accepted == n_run) {
        const TokenId bonus = c.sampler.sample(row(n_run));
        c.sampler.accept(bonus);
        decided.push_back({bonus, n_run});
    }
    const int32_t kept = static_cast<int32_t>(first_draft) + n_accepted;
    c.n_drafts = 0;
    c.draft_q.clear();
    c.metrics.n_draft_tokens += n_run;
    c.metrics.n_accepted_tokens += n_accepted;
    counters_.n_draft_tokens += n_run;
    counters_.n_accepted_tokens += n_accepted;
    // The draft length adapts: longer while everything is kept, shorter after a rejection.
    const int32_t max_len = c.req->generation.speculation.draft_max;
    c.draft_length = n_accepted == n_run ? std::min(max_len, c.draft_length + 2) : std::max(1, c.draft_length - 1);
    sched_->rewind(c.sched, kept);
    if (e_.kv->keep_prefix(c.seq, kept) != kept)
        return fail(c, error(StatusCode::internal, "speculative decoding: the KV cache could not roll back to token " + std::to_string(kept)));
    for (const Decided& t : decided)
        if (!deliver(c, t.token, row(t.row))) return;
    queue_next(c);
}

void StepLoop::drop_drafts(LiveSample& c) {
    if (c.n_drafts == 0) return;
    c.tokens.resize(c.tokens.size() - static_cast<size_t>(c.n_drafts));
    c.n_drafts = 0;
    c.draft_q.clear();
}

void StepLoop::free_draft_sequence(LiveSample& c) {
    const auto it = draft_held_.find(c.seq);
    if (it == draft_held_.end() || c.req->conversation) return;   // the chat's stays, as the model's does
    e_.draft()->kv->free(c.seq);
    draft_held_.erase(it);
}

}  // namespace workbench
