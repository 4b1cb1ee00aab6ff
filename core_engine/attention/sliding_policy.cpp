// Sliding window with attention sinks (StreamingLLM): query t reads the first S tokens and the
// newest W, [0, S) + [t+1-W, t]. Blocks between the sinks and the next query's window are
// released once a step is committed, so a sequence holds about S + W tokens however long it runs.
// Once tokens are evicted the sinks are read at the positions they would have if the evicted
// tokens had never been there: their keys turned forward by the evicted count.
#include <algorithm>

#include "attention/attention_policy.h"
#include "kernels/cpu/rope.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

class SlidingPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;

    int64_t held_tokens_bound(int64_t n_ctx, int32_t bs) const override {
        // sinks + window + a step in flight, with block rounding either side
        return std::min<int64_t>(n_ctx, spec_.sinks + spec_.window + kMaxStepTokens + 2 * bs);
    }
    bool unbounded_context() const override { return true; }
    bool can_fork() const override { return false; }
    bool can_adopt_prefix() const override { return false; }
    bool can_truncate() const override { return false; }

    void begin_part(const KvArena& arena, StepPart& part) override {
        AttendPlan& p = part.token_plan;
        p.clear();
        std::vector<int32_t> rotations;  // distinct evictions seen by this step's queries
        for (int32_t i = 0; i < part.n; ++i) {
            const int32_t t = part.t0 + i;
            const int32_t evicted = evicted_before(arena, t);
            const int32_t window_begin = std::max(spec_.sinks, t + 1 - spec_.window);
            if (evicted == 0) {
                p.add({kTokenStream, 0, std::min(spec_.sinks, t + 1)});
            } else {
                auto at = std::find(rotations.begin(), rotations.end(), evicted);
                if (at == rotations.end()) at = rotations.insert(at, evicted);
                p.add({kFirstExtraStream + static_cast<int32_t>(at - rotations.begin()), 0, spec_.sinks});
            }
            p.add({kTokenStream, window_begin, t + 1});
            p.close_list();
        }
        state(part).rotations = std::move(rotations);
    }

    void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v) override {
        AttentionPolicy::write(arena, layer, part, k, v);
        if (part.t0 >= spec_.sinks) return;
        // The sinks' keys as RoPE left them, to re-rotate once tokens are evicted.
        KvSequence& s = *part.s;
        const size_t row = static_cast<size_t>(arena.shape.n_kv_heads) * arena.shape.head_dim;
        const size_t n_sinks = static_cast<size_t>(spec_.sinks);
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        s.policy_rows.resize(arena.members.size() * n_sinks * row);
        for (int32_t i = 0; i < part.n && part.t0 + i < spec_.sinks; ++i)
            std::copy(k + i * row, k + (i + 1) * row,
                      s.policy_rows.begin() + static_cast<std::ptrdiff_t>((storage * n_sinks + static_cast<size_t>(part.t0 + i)) * row));
    }

    int32_t n_extra_streams(const KvArena&, int32_t, const StepPart& part) const override {
        return static_cast<int32_t>(state(part).rotations.size());
    }

    void add_extra_streams(const KvArena& arena, int32_t layer, StepPart& part, std::vector<KvStreamView>& views) override {
        // The sinks as the query would see them if the evicted tokens had never been there: keys
        // turned forward by the evicted count (RoPE composes by adding angles), rounded through
        // the KV type as stored keys are; values unchanged.
        PartState& ps = state(part);
        if (ps.rotations.empty()) return;
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        const KvSequence& s = *part.s;
        const int64_t hd = arena.shape.head_dim, n_kv = arena.shape.n_kv_heads, row = n_kv * hd;
        const int32_t n_sinks = spec_.sinks;
        const std::span<const BlockId> table = arena.token_table(s);
        const int32_t bs = arena.block_tokens();
        ps.scratch.resize(ps.rotations.size() * 2);
        std::vector<uint8_t> enc(static_cast<size_t>(arena.store->k_layout(storage).row_bytes));
        for (size_t r = 0; r < ps.rotations.size(); ++r) {
            std::vector<float>& ks = ps.scratch[2 * r];
            std::vector<float>& vs = ps.scratch[2 * r + 1];
            ks.assign(s.policy_rows.begin() + static_cast<std::ptrdiff_t>(storage * n_sinks * row),
                      s.policy_rows.begin() + static_cast<std::ptrdiff_t>((storage + 1) * n_sinks * row));
            std::vector<int32_t> shift(static_cast<size_t>(n_sinks), ps.rotations[r]);
            rope(ks.data() + arena.shape.rope_offset, shift.data(), n_sinks, n_kv, hd, arena.shape.rope.rotation_only());
            vs.resize(ks.size());
            for (int32_t j = 0; j < n_sinks; ++j)
                for (int64_t h = 0; h < n_kv; ++h) {
                    float* kr = ks.data() + j * row + h * hd;
                    if (arena.rotate_k) hadamard_rotate(kr, hd);
                    kv_encode_row(arena.types.k, kr, enc.data(), hd);
                    kv_decode_row(arena.types.k, enc.data(), kr, hd);
                    const BlockId blk = table[static_cast<size_t>(j / bs)];
                    kv_decode_row(arena.types.v, arena.store->v_row(storage, blk, j % bs, static_cast<int32_t>(h)),
                                  vs.data() + j * row + h * hd, arena.shape.value_dim_of(storage));
                }
            views.push_back(arena.f32_stream(ks.data(), vs.data(), n_sinks));
        }
    }

    void releasable(const KvArena& arena, const KvSequence& s, int32_t& first, int32_t& end) const override {
        // Tokens between the sinks and the next query's window are read by no future query.
        const int32_t bs = arena.block_tokens();
        const int32_t n = static_cast<int32_t>(s.tokens.size());
        first = std::max(first, (spec_.sinks + bs - 1) / bs);
        end = std::max(0, n + 1 - spec_.window) / bs;
    }

    Footprint footprint(int64_t n, int32_t bs) const override {
        Footprint f;
        const int64_t first = (spec_.sinks + bs - 1) / bs;
        const int64_t end = std::max<int64_t>(0, n + 1 - spec_.window) / bs;
        f.token_blocks = (n + bs - 1) / bs - std::max<int64_t>(0, end - first);
        f.entries_read = std::min<int64_t>(spec_.sinks, n) + std::min<int64_t>(spec_.window, std::max<int64_t>(0, n - spec_.sinks));
        f.note = "while a prompt chunk runs, its tokens are held until the step ends: the peak is higher";
        return f;
    }

private:
    struct PartState {
        std::vector<int32_t> rotations;          // the distinct evicted counts its queries see
        std::vector<std::vector<float>> scratch;  // per rotation: the sinks' K then V rows (f32)
    };
    std::vector<PartState> parts_;

    PartState& state(const StepPart& part) {
        if (parts_.size() <= static_cast<size_t>(part.index)) parts_.resize(static_cast<size_t>(part.index) + 1);
        return parts_[static_cast<size_t>(part.index)];
    }
    const PartState& state(const StepPart& part) const { return const_cast<SlidingPolicy*>(this)->state(part); }

    // Tokens released by the time query t runs.
    int32_t evicted_before(const KvArena& arena, int32_t t) const {
        const int32_t bs = arena.block_tokens();
        const int32_t first = (spec_.sinks + bs - 1) / bs;
        const int32_t end = std::max(0, t + 1 - spec_.window) / bs;
        return std::max(0, end - first) * bs;
    }
};

AttentionVariant describe() {
    return {AttentionKind::sliding, "sliding", "the first S tokens (sinks) and the newest W; older tokens are released",
            {integer_parameter("window", "Window (tokens)", 1020, 1, 1 << 20, "The newest tokens each query reads. Older blocks are released: the cache stops growing at about window + sinks tokens."),
             integer_parameter("sinks", "Sinks (tokens)", 4, 0, 1 << 16, "The first tokens, kept for good: attention mass collects on them, and dropping them hurts more than their size suggests (StreamingLLM).")}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":window=" + std::to_string(s.window) + ",sinks=" + std::to_string(s.sinks);
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<SlidingPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kSlidingPolicy{describe, spec_parameters, make};

}  // namespace workbench
