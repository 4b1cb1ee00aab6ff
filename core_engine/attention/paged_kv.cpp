// The groups of a layout behind one cache: creation, layer routing, and the calls that span them.
#include "attention/paged_kv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace workbench {

PagedKv::~PagedKv() = default;

Result<std::unique_ptr<PagedKv>> PagedKv::create(const AttentionSpec& spec, KvTypes types, const PagedKvShape& shape,
                                                 uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq, int32_t n_tokens_per_block) {
    return create(AttentionLayout{{spec, {}}}, types, shape, budget_bytes, n_ctx, n_seq, n_tokens_per_block);
}

Result<std::unique_ptr<PagedKv>> PagedKv::create(const AttentionLayout& layout, KvTypes types, const PagedKvShape& shape,
                                                 uint64_t budget_bytes, int32_t n_ctx, int32_t n_seq, int32_t n_tokens_per_block) {
    if (layout.empty()) return error(StatusCode::invalid_argument, "--attention: no policy given");
    WB_ASSIGN_OR_RETURN(const std::vector<LayerGroupPlan> plans, resolve_attention_layout(layout, shape.n_layers));
    std::unique_ptr<PagedKv> kv(new PagedKv());
    kv->layout_ = layout;
    kv->group_of_.assign(static_cast<size_t>(shape.n_layers), 0);
    kv->n_ctx_ = n_ctx;
    if (plans.size() == 1) {
        WB_ASSIGN_OR_RETURN(auto group, KvGroup::create(plans.front().spec, types, shape, budget_bytes, n_ctx, n_seq, n_tokens_per_block));
        kv->groups_.push_back(std::move(group));
        return kv;
    }
    // A budget is shared so that every group holds the same number of blocks: a block's bytes
    // differ by group (its layers, its index data), the tokens each can hold do not.
    std::vector<uint64_t> budgets(plans.size(), 0);
    if (budget_bytes > 0) {
        std::vector<uint64_t> block_bytes;
        uint64_t total = 0;
        for (const LayerGroupPlan& p : plans) {
            WB_ASSIGN_OR_RETURN(auto probe, KvGroup::create(p.spec, types, shape, 0, 1, 1, n_tokens_per_block, p.layers));
            block_bytes.push_back(probe->block_bytes());
            total += probe->block_bytes();
        }
        for (size_t i = 0; i < plans.size(); ++i)
            budgets[i] = static_cast<uint64_t>(static_cast<long double>(budget_bytes) * block_bytes[i] / total);
    }
    for (size_t i = 0; i < plans.size(); ++i) {
        WB_ASSIGN_OR_RETURN(auto group, KvGroup::create(plans[i].spec, types, shape, budgets[i], n_ctx, n_seq, n_tokens_per_block,
                                                        plans[i].layers));
        for (int32_t il : plans[i].layers) kv->group_of_[static_cast<size_t>(il)] = static_cast<int32_t>(i);
        kv->groups_.push_back(std::move(group));
    }
    return kv;
}

bool PagedKv::unbounded_context() const {
    return std::all_of(groups_.begin(), groups_.end(), [](const auto& g) { return g->unbounded_context(); });
}

bool PagedKv::can_fork() const {
    return std::all_of(groups_.begin(), groups_.end(), [](const auto& g) { return g->can_fork(); });
}

bool PagedKv::can_truncate() const {
    return std::all_of(groups_.begin(), groups_.end(), [](const auto& g) { return g->can_truncate(); });
}

Status PagedKv::begin_step(SeqId seq, std::span<const TokenId> tokens) {
    const StepSequence one{seq, tokens};
    return begin_step(std::span(&one, 1));
}

Status PagedKv::begin_step(std::span<const StepSequence> batch) {
    for (size_t i = 0; i < groups_.size(); ++i) {
        if (Status st = groups_[i]->begin_step(batch); !st.ok()) {
            while (i > 0) groups_[--i]->abort_step();  // every group as it was
            if (st.code() != StatusCode::out_of_range) return st;
            // The longest sequence of the step is the one that cannot fit.
            const StepSequence* longest = &batch.front();
            for (const StepSequence& b : batch)
                if (n_tokens(b.seq) + b.tokens.size() > n_tokens(longest->seq) + longest->tokens.size()) longest = &b;
            return never_fits(st, longest->seq, static_cast<int64_t>(longest->tokens.size()));
        }
    }
    return Status::ok_status();
}

uint64_t PagedKv::budget_for(int64_t n_tokens) const {
    int64_t blocks = 0;
    uint64_t block_bytes = 0;
    for (const auto& g : groups_) {
        const AttentionPolicy::Footprint f = g->footprint(n_tokens);
        const int64_t bs = g->n_tokens_per_block();
        // A step holds its new tokens before it releases anything: the formula's blocks plus one
        // step's (never more than all of them), its pooled blocks, and the null block.
        const int64_t token_blocks = std::min((n_tokens + bs - 1) / bs, f.token_blocks + (kMaxStepTokens + bs - 1) / bs + 1);
        blocks = std::max(blocks, token_blocks + f.pooled_blocks + 1);
        block_bytes += g->block_bytes();
    }
    return static_cast<uint64_t>(blocks) * block_bytes;
}

Status PagedKv::never_fits(const Status& from_group, SeqId seq, int64_t n_new) const {
    const int64_t n = n_tokens(seq) + n_new;
    auto mib = [](uint64_t bytes) {  // rounded up, so the figure given is always enough
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f MiB", std::ceil(static_cast<double>(bytes) * 100.0 / (1024.0 * 1024.0)) / 100.0);
        return std::string(buf);
    };
    // The step that failed is one chunk of a request, so a figure for it would fail again at
    // the next: give what the whole context needs.
    const int64_t whole = std::max<int64_t>(n, n_ctx_);
    const std::string advice = "raise the KV budget (--kv-budget) to at least " + mib(budget_for(whole)) + ", what the whole " +
                               std::to_string(whole) + "-token context needs";
    // The group's own figures (blocks, tokens) stay; its advice counted only its share of the pool.
    const std::string& m = from_group.message();
    const size_t cut = m.find("; raise");
    return error(StatusCode::out_of_range, (cut == std::string::npos ? m : m.substr(0, cut)) + "; " + advice + ", or shorten the request");
}

void PagedKv::finish_step() {
    for (auto& g : groups_) g->finish_step();
    if (groups_.size() > 1) peak_ = std::max(peak_, usage().bytes_in_use);
}

void PagedKv::abort_step() {
    for (auto& g : groups_) g->abort_step();
}

int32_t PagedKv::adopt_cached_prefix(SeqId seq, std::span<const TokenId> prompt) {
    if (groups_.size() == 1) return groups_.front()->adopt_cached_prefix(seq, prompt);
    int32_t n = static_cast<int32_t>(prompt.size());
    for (const auto& g : groups_) n = std::min(n, g->cached_prefix_tokens(prompt));
    if (n == 0) return 0;
    // Every group holds at least n cached tokens: each adopts exactly those.
    for (size_t i = 0; i < groups_.size(); ++i)
        if (groups_[i]->adopt_cached_prefix(seq, prompt.first(static_cast<size_t>(n))) != n) {
            for (size_t j = 0; j <= i; ++j) groups_[j]->free(seq);
            return 0;
        }
    peak_ = std::max(peak_, usage().bytes_in_use);
    return n;
}

int32_t PagedKv::keep_prefix(SeqId seq, int32_t n_common) {
    if (groups_.size() == 1) return groups_.front()->keep_prefix(seq, n_common);
    int32_t kept = n_common;
    for (auto& g : groups_) kept = std::min(kept, g->keep_prefix(seq, n_common));
    if (kept == 0 || std::any_of(groups_.begin(), groups_.end(), [&](const auto& g) { return g->n_tokens(seq) != kept; })) {
        free(seq);  // a group lost the detail the others keep: start over in all
        return 0;
    }
    return kept;
}

void PagedKv::free(SeqId seq) {
    for (auto& g : groups_) g->free(seq);
}

Status PagedKv::fork(SeqId parent, SeqId child) {
    for (size_t i = 0; i < groups_.size(); ++i)
        if (Status st = groups_[i]->fork(parent, child); !st.ok()) {
            for (size_t j = 0; j < i; ++j) groups_[j]->free(child);
            return st;
        }
    return Status::ok_status();
}

int64_t PagedKv::n_free_tokens() const {
    int64_t n = groups_.front()->n_free_tokens();
    for (const auto& g : groups_) n = std::min(n, g->n_free_tokens());
    return n;
}

KvUsage PagedKv::usage() const {
    if (groups_.size() == 1) return groups_.front()->usage();
    KvUsage u = groups_.front()->usage();  // tokens and full attention's bytes are the same in every group
    u.bytes_in_use = u.bytes_allocated = u.bytes_read_last_step = u.index_bytes_last_step = 0;
    u.index_ops_last_step = 0;
    for (const auto& g : groups_) {
        const KvUsage gu = g->usage();
        u.bytes_in_use += gu.bytes_in_use;
        u.bytes_allocated += gu.bytes_allocated;
        u.bytes_read_last_step += gu.bytes_read_last_step;
        u.index_bytes_last_step += gu.index_bytes_last_step;
        u.index_ops_last_step += gu.index_ops_last_step;
    }
    u.bytes_peak = std::max(peak_, u.bytes_in_use);
    return u;
}

KvUsage PagedKv::usage(SeqId seq) const {
    if (groups_.size() == 1) return groups_.front()->usage(seq);
    KvUsage u = groups_.front()->usage(seq);
    u.bytes_in_use = u.bytes_read_last_step = 0;
    for (const auto& g : groups_) {
        const KvUsage gu = g->usage(seq);
        u.bytes_in_use += gu.bytes_in_use;
        u.bytes_read_last_step += gu.bytes_read_last_step;
    }
    return u;
}

std::vector<uint64_t> PagedKv::layer_bytes(SeqId seq) const {
    std::vector<uint64_t> out = groups_.front()->layer_bytes(seq);
    for (size_t i = 1; i < groups_.size(); ++i) {
        const std::vector<uint64_t> more = groups_[i]->layer_bytes(seq);
        for (size_t il = 0; il < out.size(); ++il) out[il] += more[il];
    }
    return out;
}

std::vector<KvBlockUse> PagedKv::block_map(SeqId seq, int32_t& n_blocks) const {
    std::vector<KvBlockUse> map = groups_.front()->block_map(seq, n_blocks);
    for (size_t i = 1; i < groups_.size(); ++i) {
        int32_t n = 0;
        const std::vector<KvBlockUse> more = groups_[i]->block_map(seq, n);
        if (n != n_blocks) continue;  // the groups hold the same tokens; a mismatch is never expected
        for (size_t il = 0; il < group_of_.size(); ++il)
            if (group_of_[il] == static_cast<int32_t>(i))
                std::copy_n(more.begin() + static_cast<std::ptrdiff_t>(il * static_cast<size_t>(n)), n,
                            map.begin() + static_cast<std::ptrdiff_t>(il * static_cast<size_t>(n)));
    }
    return map;
}

}  // namespace workbench
