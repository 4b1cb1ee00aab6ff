// Cross-layer KV sharing: within layers A..B, each group of G neighbouring layers keeps one KV.
// merge=none: the first layer of a group writes it and the others read it, computing no K or V
// (CLA). merge=mean|slerp: every member computes its K/V; the group's merge of each step's tokens
// is stored once its last member has run (MiniCache), and each member reads the merged past plus
// its own exact K/V of the step. sinks=N keeps each member's first N tokens unmerged (MiniCache's
// retained tokens): the first member's in the token rows, the others' in the pooled table.
#include <algorithm>
#include <cmath>

#include "attention/attention_policy.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

class CrossLayerPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    Status check(const PagedKvShape& model, KvTypes) const override {
        const int32_t n_layers = model.n_layers;
        const int32_t last = last_layer(n_layers);
        if (spec_.first_layer >= n_layers || last >= n_layers)
            return bad("layers " + std::to_string(spec_.first_layer) + "-" + std::to_string(last) + " outside this model's 0-" +
                       std::to_string(n_layers - 1));
        if (spec_.merge == LayerMerge::slerp && spec_.group != 2)
            return bad("slerp merges pairs of layers (MiniCache); use group=2 or merge=mean");
        return Status::ok_status();
    }
    int32_t owner_layer(int32_t il, int32_t n_layers) const override {
        if (il >= spec_.first_layer && il <= last_layer(n_layers))
            return spec_.first_layer + (il - spec_.first_layer) / spec_.group * spec_.group;
        return il;
    }
    bool layer_computes_kv(const KvArena& arena, int32_t layer) const override {
        return arena.owner[static_cast<size_t>(layer)] == layer || merged();
    }
    // Merged blocks depend on how their prompt was chunked (a step's tokens see each other
    // unmerged): adopting them would make a prompt's output depend on history.
    bool can_adopt_prefix() const override { return !merged(); }
    bool reads_token_rows() const override { return false; }
    bool can_truncate() const override { return !merged(); }
    bool writes_token_rows_only() const override { return !merged(); }
    // Every member after the first keeps its sinks' rows in the pooled table, allotted whole at
    // the first token so that each member's rows stay contiguous.
    int32_t pooled_count(int32_t t) const override { return t >= 0 ? (spec_.group - 1) * sinks() : 0; }
    // One block per entry bounds it: the pool is sized before the block size reaches the policy.
    uint64_t pooled_blocks(uint64_t token_blocks) const override {
        return std::min<uint64_t>(token_blocks, static_cast<uint64_t>((spec_.group - 1) * sinks()));
    }

    void begin_part(const KvArena& arena, StepPart& part) override {
        AttentionPolicy::begin_part(arena, part);
        if (!merged()) return;
        PartState& ps = state(part);
        // Member m > 0 reads its own sinks, then the merged past after them, then its step's rows.
        const int32_t kept = std::min(sinks(), part.t0);
        ps.merge_plans.resize(static_cast<size_t>(spec_.group));
        for (int32_t m = 0; m < spec_.group; ++m) {
            AttendPlan& plan = ps.merge_plans[static_cast<size_t>(m)];
            plan.clear();
            for (int32_t i = 0; i < part.n; ++i) {
                if (m > 0 && kept > 0) plan.add({kPooledStream, (m - 1) * sinks(), (m - 1) * sinks() + kept});
                plan.add({kTokenStream, m > 0 ? kept : 0, part.t0});
                plan.add({kFirstExtraStream, 0, i + 1});
                plan.close_list();
            }
        }
        ps.stage_k.resize(static_cast<size_t>(spec_.group));
        ps.stage_v.resize(static_cast<size_t>(spec_.group));
        const size_t rows = static_cast<size_t>(part.n) * arena.shape.n_kv_heads * arena.shape.head_dim;
        for (auto& b : ps.stage_k) b.resize(rows);
        for (auto& b : ps.stage_v) b.resize(rows);
    }

    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override {
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const auto& group = arena.members[static_cast<size_t>(storage)];
        if (!merged() || group.size() < 2) return AttentionPolicy::write(arena, layer, part, k, v);
        PartState& ps = state(part);
        const int32_t step_n = part.n;
        const size_t row = static_cast<size_t>(arena.shape.n_kv_heads) * arena.shape.head_dim;
        const size_t m = member_index(group, layer);
        std::copy(k, k + step_n * row, ps.stage_k[m].begin());
        std::copy(v, v + step_n * row, ps.stage_v[m].begin());
        if (arena.rotate_k)
            for (int64_t r = 0; r < static_cast<int64_t>(step_n) * arena.shape.n_kv_heads; ++r)
                hadamard_rotate(ps.stage_k[m].data() + r * arena.shape.head_dim, arena.shape.head_dim);
        if (m + 1 < group.size()) return;
        std::vector<float> mk(step_n * row), mv(step_n * row);
        const int64_t hd = arena.shape.head_dim;
        for (size_t r = 0; r < static_cast<size_t>(step_n) * arena.shape.n_kv_heads; ++r) {
            for (auto [stage, out] : {std::pair{&ps.stage_k, &mk}, {&ps.stage_v, &mv}}) {
                float* o = out->data() + r * hd;
                if (spec_.merge == LayerMerge::slerp) {
                    // MiniCache: interpolate the directions halfway on the sphere, keep the mean norm.
                    const float* a = (*stage)[0].data() + r * hd;
                    const float* b = (*stage)[1].data() + r * hd;
                    double na = 0, nb = 0, dot = 0;
                    for (int64_t d = 0; d < hd; ++d) na += a[d] * a[d], nb += b[d] * b[d], dot += a[d] * b[d];
                    na = std::sqrt(na), nb = std::sqrt(nb);
                    const double cosw = (na > 0 && nb > 0) ? std::clamp(dot / (na * nb), -1.0, 1.0) : 1.0;
                    const double omega = std::acos(cosw), norm = 0.5 * (na + nb);
                    const double wa = omega < 1e-4 ? 0.5 : std::sin(0.5 * omega) / std::sin(omega);
                    for (int64_t d = 0; d < hd; ++d) {
                        const double ua = na > 0 ? a[d] / na : 0, ub = nb > 0 ? b[d] / nb : 0;
                        o[d] = static_cast<float>(norm * wa * (ua + ub));
                    }
                    continue;
                }
                for (int64_t d = 0; d < hd; ++d) {
                    float sum = 0;
                    for (size_t mm = 0; mm < group.size(); ++mm) sum += (*stage)[mm][r * hd + d];
                    o[d] = sum / static_cast<float>(group.size());
                }
            }
        }
        // Sinks stay each member's own: the first's in the token rows, the others' in the pooled table.
        for (int32_t t = part.t0; t < std::min(sinks(), part.t0 + step_n); ++t) {
            const size_t at = static_cast<size_t>(t - part.t0) * row;
            std::copy(ps.stage_k[0].begin() + at, ps.stage_k[0].begin() + at + row, mk.begin() + at);
            std::copy(ps.stage_v[0].begin() + at, ps.stage_v[0].begin() + at + row, mv.begin() + at);
            for (size_t mm = 1; mm < group.size(); ++mm)
                write_rows(arena, storage, arena.pooled_table(*part.s), static_cast<int32_t>(mm - 1) * sinks() + t,
                           ps.stage_k[mm].data() + at, ps.stage_v[mm].data() + at, 1, false);
        }
        // Staged keys are already rotated; store them as they are.
        write_token_rows(arena, storage, *part.s, part.t0, mk.data(), mv.data(), step_n, false);
    }

    Footprint footprint(int64_t n_tokens, int32_t block_tokens) const override {
        Footprint f = AttentionPolicy::footprint(n_tokens, block_tokens);
        if (n_tokens > 0) f.pooled_blocks = ((spec_.group - 1) * sinks() + block_tokens - 1) / block_tokens;
        return f;
    }

    int32_t n_extra_streams(const KvArena& arena, int32_t layer, const StepPart&) const override {
        return merged() && group_of(arena, layer).size() > 1 ? 1 : 0;
    }
    void add_extra_streams(const KvArena& arena, int32_t layer, StepPart& part, std::vector<KvStreamView>& views) override {
        const auto& group = group_of(arena, layer);
        if (!merged() || group.size() < 2) return;
        const PartState& ps = state(part);
        const size_t m = member_index(group, layer);
        views.push_back(arena.f32_stream(ps.stage_k[m].data(), ps.stage_v[m].data(), part.n));
    }
    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float*, ThreadPool&) override {
        const auto& group = group_of(arena, layer);
        if (!merged() || group.size() < 2) return part.token_plan;
        return state(part).merge_plans[member_index(group, layer)];
    }

private:
    struct PartState {
        std::vector<AttendPlan> merge_plans;          // per member: own sinks, merged past, own step rows
        std::vector<std::vector<float>> stage_k, stage_v;  // per group member: its step K/V
    };
    std::vector<PartState> parts_;

    bool merged() const { return spec_.merge != LayerMerge::none; }
    int32_t sinks() const { return merged() ? spec_.sinks : 0; }
    int32_t last_layer(int32_t n_layers) const { return spec_.last_layer < 0 ? n_layers - 1 : spec_.last_layer; }
    Status bad(const std::string& what) const {
        return error(StatusCode::invalid_argument, "--attention " + attention_spec_name(spec_) + ": " + what);
    }
    static const std::vector<int32_t>& group_of(const KvArena& arena, int32_t layer) {
        return arena.members[static_cast<size_t>(arena.storage_of[static_cast<size_t>(layer)])];
    }
    static size_t member_index(const std::vector<int32_t>& group, int32_t layer) {
        return static_cast<size_t>(std::find(group.begin(), group.end(), layer) - group.begin());
    }
    PartState& state(const StepPart& part) {
        if (parts_.size() <= static_cast<size_t>(part.index)) parts_.resize(static_cast<size_t>(part.index) + 1);
        return parts_[static_cast<size_t>(part.index)];
    }
};

AttentionVariant describe() {
    AttentionParameter layers;
    layers.key = "layers";
    layers.label = "Layers";
    layers.help = "A-B: the layers that share, inclusive; the others keep their own KV.";
    layers.type = AttentionParameter::Type::layer_range;
    return {AttentionKind::cross_layer, "cross_layer", "groups of G neighbouring layers share one KV (layers=A-B limits the range; `workbench-cli calibrate` picks the pairs)",
            {integer_parameter("group", "Layers per group", 2, 1, 64, "Consecutive layers sharing one KV: the first of each group stores it, the others read it. group=2 halves the cache over the range."), layers,
             choice_parameter("merge", "Merge", {"none", "mean", "slerp"},
                              "none: the group reads its first layer's KV. mean: the group's KV averaged. slerp: spherical interpolation of pairs (MiniCache; needs group=2)."),
             integer_parameter("sinks", "Unmerged first tokens", 4, 0, 64,
                               "With mean or slerp: each layer keeps its own K/V of the first N tokens, which draw most attention; merging them costs the most.")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    std::string out = ":group=" + std::to_string(s.group);
    if (s.first_layer != 0 || s.last_layer != -1) out += ",layers=" + std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer);
    const char* merges[] = {"none", "mean", "slerp"};
    out += ",merge=" + std::string(merges[static_cast<int>(s.merge)]);
    return s.merge == LayerMerge::none ? out : out + ",sinks=" + std::to_string(s.sinks);
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<CrossLayerPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kCrossLayerPolicy{describe, spec_parameters, make};

}  // namespace workbench
