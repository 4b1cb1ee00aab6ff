// The presses' mechanism: the queries they observe, the choice at the end of a prompt (scored in
// the plan of the prompt's last step, on the engine's threads, where the queries are), the rows
// moved into packed lanes once that step is committed, and the plans that read lanes first and
// the token blocks after them.
//
// Packed rows: a block of the pooled table offers, in each storage layer's arena, n_kv_heads ·
// block_tokens rows one after another (KvStore lays a block out [head][slot][row]); call that a
// cell. Cell c is block c / n_storage of the table in arena c % n_storage, and lanes are laid out
// end to end over the cells in (round, storage layer, head) order, so lanes of any lengths waste
// at most the last block. Each cell a layer's lanes touch is one stream of the plan.
//
// Decode-time presses (TOVA, H2O) rank, at each whole block of generated tokens, the lanes' rows
// with the block's tokens and keep as many as the lanes held: every lane is rebuilt from its kept
// sources (through a scratch copy, since lanes move), end to end from the first packed row, so
// the packed rows in use never grow and the block's token rows are released.
#include "attention/press_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "attention/press_scores.h"
#include "attention/top_selection.h"
#include "kv_blocks/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int32_t kPoolKernel = 5;      // SnapKV's neighbours averaged around each score
constexpr double kHeadFloor = 0.2;      // AdaKV: the share of a head's count it keeps by its own ranking
constexpr int32_t kDefaultMinPrompt = AttentionSpec{}.min_prompt;

struct PressState final : PolicySequenceState {
    std::vector<float> queries;   // [storage][window slot][n_head][head_dim]: query at position p in slot p % window
    // H2O: the attention each token received, per lane (storage · n_kv + head): with decode-time
    // eviction the lane's L rows at 0..L-1 and unpressed token pressed_end + j at L + j, without
    // it the unpressed tokens alone; `pending` holds the step in flight's share until it is committed.
    std::vector<std::vector<float>> received, pending;
    std::vector<std::vector<int32_t>> positions;   // lane → the token position of each of its rows, in row order
    // Decode-time presses: where the last generated token ended, and a short turn read after it
    // that was not pressed (fewer than min_prompt tokens: a follow-up question), never evicted
    // while its reply is generated.
    int32_t generated_end = 0, pinned_begin = 0, pinned_end = 0;
    int32_t pressed_end = 0;      // tokens before it were pressed: kept in lanes or evicted (a whole number of blocks)
    int64_t rows_used = 0;        // packed rows written
    struct Round {
        int64_t first_row = 0;
        std::vector<int64_t> offsets;   // lane (storage · n_kv + head) → its rows [offsets[l], offsets[l + 1]) past first_row
    };
    std::vector<Round> rounds;
    // The press in flight: the cut and each lane's kept sources, ascending: tokens by position, and
    // for a decode-time press (`decode_press`) the lane's own row k as -1 - k before them.
    int32_t cut = 0;
    bool decode_press = false;
    std::vector<std::vector<int32_t>> chosen;
};

int64_t lane_length(const PressState& st, size_t lane) {
    int64_t n = 0;
    for (const PressState::Round& r : st.rounds) n += r.offsets[lane + 1] - r.offsets[lane];
    return n;
}

// The packed row holding a lane's k-th row (rounds in order).
int64_t lane_row(const PressState& st, size_t lane, int64_t k) {
    for (const PressState::Round& r : st.rounds) {
        const int64_t len = r.offsets[lane + 1] - r.offsets[lane];
        if (k < len) return r.first_row + r.offsets[lane] + k;
        k -= len;
    }
    return -1;
}

PressState* press_state(const KvSequence& s) { return static_cast<PressState*>(s.policy_state.get()); }

// Where a press splits a prompt: tokens [pressed_end, cut) are candidates; [cut, n_end) stay.
struct PressCut {
    int32_t first = 0, cut = 0, n_end = 0;
    int32_t candidates() const { return cut - first; }
};

class PressPolicy final : public AttentionPolicy {
public:
    PressPolicy(const AttentionSpec& spec, PressMethod method) : AttentionPolicy(spec), method_(method) {}

    Status check(const PagedKvShape& model, KvTypes types) const override {
        WB_RETURN_IF_ERROR(AttentionPolicy::check(model, types));
        if (!model.layer_head_dim.empty())
            return error(StatusCode::invalid_argument, std::string(attention_kind_name(spec_.kind)) +
                                                           ": the cache's rows differ in width by layer; a press packs rows of every layer together");
        if (model.n_kv_heads <= 0 || model.n_head % model.n_kv_heads != 0)
            return error(StatusCode::invalid_argument, std::string(attention_kind_name(spec_.kind)) + ": query heads must group evenly over KV heads");
        return Status::ok_status();
    }
    bool reads_token_rows() const override { return false; }   // pressed rows are read from lanes, never the f16 ring
    uint64_t pooled_blocks(uint64_t token_blocks) const override {
        // The lanes of one press, held beside the prompt's blocks until the step that fills them is committed.
        return static_cast<uint64_t>(std::ceil(spec_.keep * static_cast<double>(token_blocks))) + 1;
    }
    bool can_fork() const override { return false; }
    bool can_adopt_prefix() const override { return false; }
    bool can_truncate() const override { return false; }

    int32_t reserved_pooled_entries(const KvArena& arena, const KvSequence& s, int32_t t0, int32_t n, bool ends_prompt) const override {
        if (!ends_prompt) return 0;
        const PressState* st = press_state(s);
        const PressCut c = cut_of(arena, st ? st->pressed_end : 0, t0 + n);
        if (c.candidates() <= 0) return 0;
        int64_t rows = 0;
        const std::vector<int32_t> counts = layer_counts(arena, c);
        for (int32_t m : counts) rows += static_cast<int64_t>(m) * arena.shape.n_kv_heads;
        const int64_t per_block = rows_per_block(arena);
        const int64_t blocks_needed = ((st ? st->rows_used : 0) + rows + per_block - 1) / per_block;
        const int64_t blocks_held = static_cast<int64_t>(arena.pooled_table(s).size());
        return static_cast<int32_t>(std::max<int64_t>(0, blocks_needed - blocks_held) * arena.block_tokens());
    }

    void begin_part(const KvArena&, StepPart& part) override {
        // Choices (and attention received) of a step that was aborted after its plans ran must not
        // be committed by this one.
        if (PressState* st = press_state(*part.s)) st->chosen.clear(), st->pending.clear(), st->decode_press = false;
    }

    const AttendPlan& plan(const KvArena& arena, int32_t layer, StepPart& part, const float* q, ThreadPool& pool) override {
        KvSequence& s = *part.s;
        if (!s.policy_state) s.policy_state = std::make_shared<PressState>();
        PressState& st = *press_state(s);
        const int32_t storage = arena.storage_of[static_cast<size_t>(layer)];
        if (q && observed_queries() > 0) observe(arena, storage, part, q, st);
        if (q && method_.score == PressScore::accumulated_attention && arena.owner[static_cast<size_t>(layer)] == layer)
            accumulate(arena, storage, part, q, st, pool);
        const PressCut c = cut_of(arena, st.pressed_end, part.t0 + part.n);
        const bool owns = arena.owner[static_cast<size_t>(layer)] == layer;
        if (part.ends_prompt && c.candidates() > 0 && owns) choose(arena, storage, part, c, st, pool);
        const int32_t whole = (part.t0 + part.n) / arena.block_tokens() * arena.block_tokens();
        if (q && owns && decode_evicts() && part.generated && !st.rounds.empty() && whole > st.pressed_end)
            choose_while_decoding(arena, storage, part, q, st, pool);
        return build_plan(arena, storage, part, st);
    }

    int32_t n_extra_streams(const KvArena&, int32_t, const StepPart& part) const override {
        return static_cast<int32_t>(cells_of(part).size());
    }

    void add_extra_streams(const KvArena& arena, int32_t, StepPart& part, std::vector<KvStreamView>& views) override {
        const std::span<const BlockId> table = arena.pooled_table(*part.s);
        const int32_t n_storage = static_cast<int32_t>(arena.members.size());
        for (int64_t cell : cells_of(part)) {
            const int32_t in = static_cast<int32_t>(cell % n_storage);
            KvStreamView v;
            v.k_base = arena.store->k_base(in);
            v.v_base = arena.store->v_base(in);
            v.blocks = table.data() + cell / n_storage;
            v.block_tokens = rows_per_cell(arena);
            v.k = arena.store->k_layout(in);
            v.v = arena.store->v_layout(in);
            v.k.head_stride = v.v.head_stride = 0;   // a lane's rows run on through the cell, whatever head they are
            views.push_back(v);
        }
    }

    void on_committed(KvArena& arena, StepPart& part) override {
        PressState* st = press_state(*part.s);
        if (!st) return;
        commit_received(*st);
        if (part.generated) st->generated_end = part.t0 + part.n;
        if (part.ends_prompt) {
            st->pinned_begin = st->chosen.empty() ? std::max(st->generated_end, st->pressed_end) : 0;
            st->pinned_end = st->chosen.empty() ? part.t0 + part.n : 0;
        }
        if (st->chosen.empty()) return;
        const KvSequence& s = *part.s;
        const size_t n_lanes = st->chosen.size();
        if (st->positions.size() != n_lanes) st->positions.assign(n_lanes, {});
        // Each lane's rows after this press, as sources (its own row k as -1 - k, a token by position).
        std::vector<std::vector<int32_t>> sources(n_lanes);
        std::vector<int64_t> old_length(n_lanes);
        for (size_t l = 0; l < n_lanes; ++l) {
            old_length[l] = lane_length(*st, l);
            if (!st->decode_press)
                for (int64_t k = 0; k < old_length[l]; ++k) sources[l].push_back(static_cast<int32_t>(-1 - k));
            sources[l].insert(sources[l].end(), st->chosen[l].begin(), st->chosen[l].end());
        }
        if (st->decode_press) rewrite_lanes(arena, s, *st, sources, scratch_);
        else append_round(arena, s, *st);
        const int32_t spent = st->cut - st->pressed_end;
        for (size_t l = 0; l < n_lanes; ++l) {
            std::vector<int32_t> positions;
            for (int32_t src : sources[l]) positions.push_back(src < 0 ? st->positions[l][static_cast<size_t>(-1 - src)] : src);
            st->positions[l] = std::move(positions);
            if (l >= st->received.size()) continue;
            std::vector<float>& totals = st->received[l];
            if (!decode_evicts()) {   // the pressed tokens' share is spent
                totals.erase(totals.begin(), totals.begin() + std::min<int64_t>(static_cast<int64_t>(totals.size()), spent));
                continue;
            }
            // The totals follow the rows: the lane's kept ones, then the tokens still unpressed.
            const int64_t lanes_end = old_length[l];
            auto at = [&](int64_t i) { return i < static_cast<int64_t>(totals.size()) ? totals[static_cast<size_t>(i)] : 0.0f; };
            std::vector<float> next;
            for (int32_t src : sources[l]) next.push_back(src < 0 ? at(-1 - src) : at(lanes_end + src - st->pressed_end));
            for (int64_t i = lanes_end + spent; i < static_cast<int64_t>(totals.size()); ++i) next.push_back(totals[static_cast<size_t>(i)]);
            totals = std::move(next);
        }
        st->pressed_end = st->cut;
        st->chosen.clear();
        st->decode_press = false;
    }

    void releasable(const KvArena& arena, const KvSequence& s, int32_t& /*first*/, int32_t& end) const override {
        if (const PressState* st = press_state(s)) end = std::max(end, st->pressed_end / arena.block_tokens());
    }

    Footprint footprint(int64_t n, int32_t bs) const override {
        // One prompt of n tokens, pressed at its end (kept whole when shorter than min_prompt).
        Footprint f;
        if (n < spec_.min_prompt) {
            f.token_blocks = (n + bs - 1) / bs;
            f.entries_read = n;
            return f;
        }
        const int64_t cut = n / bs * bs, tail = n - cut;
        const int64_t kept = static_cast<int64_t>(std::floor(spec_.keep * static_cast<double>(n)));
        const int64_t window = std::min<int64_t>(always_kept(static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX))), n);
        const int64_t m = std::clamp<int64_t>(std::max(kept, window) - tail, 0, cut);
        f.token_blocks = (tail + bs - 1) / bs;
        f.pooled_blocks = (m + bs - 1) / bs;
        f.entries_read = m + tail;
        f.note = "after the prompt is pressed; until that step is committed its blocks and the kept rows are held together";
        if (method_.budget == PressBudget::pyramid) f.note += "; per-layer counts are rounded, so the blocks may differ by one";
        if (decode_evicts()) f.note += "; while generating it stays there (each block of new tokens competes for the kept places)";
        return f;
    }

private:
    PressMethod method_;
    // A decode-time press's gathered rows: one buffer for the policy (parts commit one at a
    // time), kept so each block's press does not fault in fresh pages.
    std::vector<uint8_t> scratch_;
    struct PartCells {
        std::vector<int64_t> cells;   // ascending: the cells this layer's lanes use, stream kFirstExtraStream + i
    };
    std::vector<PartCells> parts_;

    // The queries kept in the ring for choose(); H2O reads every query as it comes instead.
    int32_t observed_queries() const {
        switch (method_.score) {
        case PressScore::key_norm:
        case PressScore::accumulated_attention: return 0;
        case PressScore::last_query: return 1;
        default: return spec_.window;
        }
    }
    // The newest tokens of a round of n always kept (they hold the question); H2O gives the
    // recent tokens half its budget.
    int32_t always_kept(int32_t n_round) const {
        if (method_.score == PressScore::accumulated_attention) return static_cast<int32_t>(std::floor(spec_.keep * n_round)) / 2;
        return observed_queries();
    }

    // Where packed row `row` lies: the storage arena, the pooled block and the row in its cell.
    struct PackedRow {
        int32_t in = 0;
        BlockId block = 0;
        int64_t slot = 0;
    };
    // A sequence's block tables, looked up once for the many rows a press moves or scores.
    struct SeqRows {
        const KvArena& arena;
        std::span<const BlockId> tokens, packed;
        SeqRows(const KvArena& a, const KvSequence& s) : arena(a), tokens(a.token_table(s)), packed(a.pooled_table(s)) {}
    };
    static PackedRow packed_row(const SeqRows& rows, int64_t row) {
        const int64_t cell_rows = rows_per_cell(rows.arena), cell = row / cell_rows;
        const int32_t n_storage = static_cast<int32_t>(rows.arena.members.size());
        return {static_cast<int32_t>(cell % n_storage), rows.packed[static_cast<size_t>(cell / n_storage)], row % cell_rows};
    }
    static uint8_t* row_data(const KvArena& arena, const PackedRow& p, bool is_k) {
        const KvRowLayout& layout = is_k ? arena.store->k_layout(p.in) : arena.store->v_layout(p.in);
        return (is_k ? arena.store->k_base(p.in) : arena.store->v_base(p.in)) + p.block * layout.block_stride + p.slot * layout.token_stride;
    }
    // A source's row as stored: a lane's own row k (-1 - k) or token t's row of the lane's head.
    static const uint8_t* source_row(const SeqRows& rows, const PressState& st, size_t lane, int32_t src, bool is_k) {
        const KvArena& arena = rows.arena;
        const int32_t n_kv = arena.shape.n_kv_heads, bs = arena.block_tokens();
        if (src < 0) return row_data(arena, packed_row(rows, lane_row(st, lane, -1 - src)), is_k);
        const int32_t storage = static_cast<int32_t>(lane) / n_kv, h = static_cast<int32_t>(lane) % n_kv;
        const BlockId b = rows.tokens[static_cast<size_t>(src / bs)];
        return is_k ? arena.store->k_row(storage, b, src % bs, h) : arena.store->v_row(storage, b, src % bs, h);
    }
    static void write_row(const SeqRows& rows, int64_t row, const uint8_t* k, const uint8_t* v) {
        const KvArena& arena = rows.arena;
        const PackedRow p = packed_row(rows, row);
        std::memcpy(row_data(arena, p, true), k, static_cast<size_t>(arena.store->k_layout(p.in).row_bytes));
        std::memcpy(row_data(arena, p, false), v, static_cast<size_t>(arena.store->v_layout(p.in).row_bytes));
        arena.store->note_written(p.in, p.block);
    }

    // A prompt's press: the chosen tokens' rows, as stored (quantized, rotated: a lane reads exactly
    // what the token block held), appended after the rows in use as a round of their own.
    static void append_round(const KvArena& arena, const KvSequence& s, PressState& st) {
        const SeqRows rows(arena, s);
        PressState::Round round;
        round.first_row = st.rows_used;
        round.offsets.assign(1, 0);
        for (const std::vector<int32_t>& lane : st.chosen) round.offsets.push_back(round.offsets.back() + static_cast<int64_t>(lane.size()));
        int64_t row = round.first_row;
        for (size_t lane = 0; lane < st.chosen.size(); ++lane)
            for (int32_t t : st.chosen[lane]) write_row(rows, row++, source_row(rows, st, lane, t, true), source_row(rows, st, lane, t, false));
        st.rows_used += round.offsets.back();
        st.rounds.push_back(std::move(round));
    }

    // A decode-time press: every lane rebuilt from its sources as one round from the first packed
    // row. Kept rows move (a lane may land where another lane's rows were), so they are gathered first.
    static void rewrite_lanes(const KvArena& arena, const KvSequence& s, PressState& st, const std::vector<std::vector<int32_t>>& sources,
                              std::vector<uint8_t>& scratch) {
        const SeqRows rows(arena, s);
        const size_t k_bytes = static_cast<size_t>(arena.store->k_layout(0).row_bytes), v_bytes = static_cast<size_t>(arena.store->v_layout(0).row_bytes);
        PressState::Round round;
        round.offsets.assign(1, 0);
        for (const std::vector<int32_t>& lane : sources) round.offsets.push_back(round.offsets.back() + static_cast<int64_t>(lane.size()));
        const auto n_rows = static_cast<size_t>(round.offsets.back());
        if (scratch.size() < n_rows * (k_bytes + v_bytes)) scratch.resize(n_rows * (k_bytes + v_bytes));
        uint8_t* const k_rows = scratch.data();
        uint8_t* const v_rows = k_rows + n_rows * k_bytes;
        size_t i = 0;
        for (size_t lane = 0; lane < sources.size(); ++lane)
            for (int32_t src : sources[lane]) {
                std::memcpy(k_rows + i * k_bytes, source_row(rows, st, lane, src, true), k_bytes);
                std::memcpy(v_rows + i * v_bytes, source_row(rows, st, lane, src, false), v_bytes);
                ++i;
            }
        for (size_t r = 0; r < n_rows; ++r) write_row(rows, static_cast<int64_t>(r), k_rows + r * k_bytes, v_rows + r * v_bytes);
        st.rows_used = round.offsets.back();
        st.rounds.assign(1, std::move(round));
    }

    bool decode_evicts() const { return method_.decode_time && spec_.decoding == PressDecoding::evict && spec_.keep < 1.0; }
    // The lanes' rows H2O's totals and the decode-time scores count in this storage layer (every
    // head's lane the same length: the decode-time presses budget heads uniformly).
    int64_t lanes_scored(const PressState& st, int32_t storage, int32_t n_kv) const {
        return decode_evicts() ? lane_length(st, static_cast<size_t>(storage * n_kv)) : 0;
    }

    static int32_t rows_per_cell(const KvArena& arena) { return arena.shape.n_kv_heads * arena.block_tokens(); }
    static int64_t rows_per_block(const KvArena& arena) { return static_cast<int64_t>(rows_per_cell(arena)) * static_cast<int64_t>(arena.members.size()); }

    // No candidates while fewer than min_prompt tokens are unpressed.
    PressCut cut_of(const KvArena& arena, int32_t first, int32_t n_end) const {
        const int32_t bs = arena.block_tokens();
        if (n_end - first < spec_.min_prompt) return {first, first, n_end};
        return {first, std::max(first, n_end / bs * bs), n_end};
    }

    // Kept rows per lane in each storage layer: `keep` of the round's tokens, less those after the cut.
    std::vector<int32_t> layer_counts(const KvArena& arena, const PressCut& c) const {
        const int32_t n_storage = static_cast<int32_t>(arena.members.size());
        const int32_t n_round = c.n_end - c.first;
        const int32_t kept = static_cast<int32_t>(std::floor(spec_.keep * n_round));
        const int32_t window = std::min(always_kept(n_round), n_round);
        std::vector<int32_t> counts = method_.budget == PressBudget::pyramid
                                          ? pyramid_layer_counts(n_storage, n_round, kept, window)
                                          : std::vector<int32_t>(static_cast<size_t>(n_storage), kept);
        // A round shorter than window / keep (a question read after its context, a follow-up)
        // still keeps its window: the newest tokens are never evicted.
        const int32_t tail = c.n_end - c.cut;
        for (int32_t& m : counts) m = std::clamp(std::max(m, window) - tail, 0, c.candidates());
        return counts;
    }

    PartCells& part_cells(const StepPart& part) {
        if (parts_.size() <= static_cast<size_t>(part.index)) parts_.resize(static_cast<size_t>(part.index) + 1);
        return parts_[static_cast<size_t>(part.index)];
    }
    const std::vector<int64_t>& cells_of(const StepPart& part) const { return const_cast<PressPolicy*>(this)->part_cells(part).cells; }

    void observe(const KvArena& arena, int32_t storage, const StepPart& part, const float* q, PressState& st) const {
        const int32_t w = observed_queries();
        const int64_t q_row = static_cast<int64_t>(arena.shape.n_head) * arena.shape.head_dim;
        st.queries.resize(arena.members.size() * static_cast<size_t>(w * q_row));
        float* ring = st.queries.data() + static_cast<int64_t>(storage) * w * q_row;
        for (int32_t i = std::max(0, part.n - w); i < part.n; ++i)
            std::copy_n(q + i * q_row, q_row, ring + ((part.t0 + i) % w) * q_row);
    }

    // One storage layer's keys as the scorers read them: the `lanes` rows of each lane (its first
    // rows, every head the same count), then tokens [first, end). The lanes' rows precede every
    // query, so they are placed at the positions just before `first` (the causal mask is all a
    // position decides).
    static PressRows key_rows(const KvArena& arena, int32_t storage, const KvSequence& s, const PressState& st, int64_t lanes, int32_t first,
                              int32_t end, std::vector<float>& keys) {
        const int32_t n_kv = arena.shape.n_kv_heads, hd = arena.shape.head_dim;
        const int64_t n_keys = lanes + end - first;
        keys.resize(static_cast<size_t>(n_keys * n_kv * hd));
        const SeqRows tables(arena, s);
        for (int64_t j = 0; j < n_keys; ++j) {
            const auto src = static_cast<int32_t>(j < lanes ? -1 - j : first + j - lanes);
            for (int32_t h = 0; h < n_kv; ++h)
                kv_decode_row(arena.types.k, source_row(tables, st, static_cast<size_t>(storage * n_kv + h), src, true), keys.data() + (j * n_kv + h) * hd, hd);
        }
        PressRows rows;
        rows.keys = keys.data();
        rows.n_keys = n_keys;
        rows.key_pos0 = static_cast<int32_t>(first - lanes);
        rows.n_head = arena.shape.n_head;
        rows.n_kv_heads = n_kv;
        rows.head_dim = hd;
        rows.scale = arena.shape.attention_scale > 0 ? arena.shape.attention_scale : 1.0f / std::sqrt(static_cast<float>(hd));
        return rows;
    }

    // H2O: the attention this step's queries give each token (each query's softmax over the tokens
    // it sees, summed over the queries and averaged over the KV head's query heads), into
    // `pending` until the step is committed. With decode-time eviction the lanes' rows are among
    // what the queries see and their totals run on; without it the unpressed tokens alone.
    void accumulate(const KvArena& arena, int32_t storage, StepPart& part, const float* q, PressState& st, ThreadPool& pool) const {
        const int32_t n_kv = arena.shape.n_kv_heads, end = part.t0 + part.n;
        if (end <= st.pressed_end) return;
        std::vector<float> keys;
        PressRows rows = key_rows(arena, storage, *part.s, st, lanes_scored(st, storage, n_kv), st.pressed_end, end, keys);
        std::vector<int32_t> positions(static_cast<size_t>(part.n));
        for (int32_t i = 0; i < part.n; ++i) positions[static_cast<size_t>(i)] = part.t0 + i;
        rows.queries = q;
        rows.query_pos = positions;
        std::vector<float> scores;
        window_attention_scores(rows, 1, scores, pool);   // the mean over the step's queries and the group's heads
        const auto n_lanes = arena.members.size() * static_cast<size_t>(n_kv);
        if (st.pending.size() != n_lanes) st.pending.assign(n_lanes, {});
        for (int32_t h = 0; h < n_kv; ++h) {
            std::vector<float>& lane = st.pending[static_cast<size_t>(storage * n_kv + h)];
            lane.resize(static_cast<size_t>(rows.n_keys), 0.0f);
            for (int64_t j = 0; j < rows.n_keys; ++j) lane[static_cast<size_t>(j)] += static_cast<float>(part.n) * scores[static_cast<size_t>(h * rows.n_keys + j)];
        }
        part.index_ops += 4.0 * static_cast<double>(part.n) * static_cast<double>(arena.shape.n_head) * static_cast<double>(rows.n_keys) * arena.shape.head_dim;
    }

    static void commit_received(PressState& st) {
        if (st.pending.empty()) return;
        if (st.received.size() != st.pending.size()) st.received.assign(st.pending.size(), {});
        for (size_t l = 0; l < st.pending.size(); ++l) {
            std::vector<float>& to = st.received[l];
            const std::vector<float>& from = st.pending[l];
            if (to.size() < from.size()) to.resize(from.size(), 0.0f);
            for (size_t j = 0; j < from.size(); ++j) to[j] += from[j];
        }
        st.pending.clear();
    }

    void choose(const KvArena& arena, int32_t storage, StepPart& part, const PressCut& c, PressState& st, ThreadPool& pool) {
        const int32_t n_kv = arena.shape.n_kv_heads, hd = arena.shape.head_dim;
        const int64_t n_keys = c.n_end - c.first;
        std::vector<float> keys;
        PressRows rows = key_rows(arena, storage, *part.s, st, 0, c.first, c.n_end, keys);
        // The observed queries, oldest first.
        const int32_t w = std::min<int32_t>(observed_queries(), c.n_end - c.first);
        const int64_t q_row = static_cast<int64_t>(arena.shape.n_head) * hd;
        std::vector<float> queries(static_cast<size_t>(w * q_row));
        std::vector<int32_t> positions(static_cast<size_t>(w));
        const float* ring = st.queries.empty() ? nullptr : st.queries.data() + static_cast<int64_t>(storage) * observed_queries() * q_row;
        for (int32_t i = 0; i < w && ring; ++i) {
            positions[static_cast<size_t>(i)] = c.n_end - w + i;
            std::copy_n(ring + (positions[static_cast<size_t>(i)] % observed_queries()) * q_row, q_row, queries.data() + i * q_row);
        }
        rows.queries = queries.data();
        rows.query_pos = positions;
        std::vector<float> scores;
        switch (method_.score) {
        case PressScore::window_attention: window_attention_scores(rows, kPoolKernel, scores, pool); break;
        case PressScore::last_query: last_query_scores(rows, scores, pool); break;
        case PressScore::key_norm: key_norm_scores(rows, scores); break;
        case PressScore::accumulated_attention: received_scores(st, storage, n_kv, lanes_scored(st, storage, n_kv), n_keys, scores); break;
        }
        // Only the candidates compete; the newest tokens (the question) are always among the kept.
        const int32_t nc = c.candidates();
        std::vector<float> cand(static_cast<size_t>(n_kv * nc));
        const int32_t forced_from = c.n_end - always_kept(c.n_end - c.first);
        for (int32_t h = 0; h < n_kv; ++h)
            for (int32_t j = 0; j < nc; ++j)
                cand[static_cast<size_t>(h * nc + j)] = c.first + j >= forced_from ? INFINITY : scores[static_cast<size_t>(h * n_keys + j)];
        const int32_t m = layer_counts(arena, c)[static_cast<size_t>(storage)];
        if (st.chosen.empty()) st.chosen.assign(arena.members.size() * static_cast<size_t>(n_kv), {});
        st.cut = c.cut;
        std::vector<std::vector<int32_t>> kept;
        if (method_.budget == PressBudget::adaptive) {
            adaptive_head_selection(cand, n_kv, nc, m, kHeadFloor, kept);
        } else {
            kept.resize(static_cast<size_t>(n_kv));
            for (int32_t h = 0; h < n_kv; ++h) keep_best(std::span(cand).subspan(static_cast<size_t>(h * nc), static_cast<size_t>(nc)), m, kept[static_cast<size_t>(h)]);
        }
        for (int32_t h = 0; h < n_kv; ++h) {
            std::vector<int32_t>& lane = st.chosen[static_cast<size_t>(storage * n_kv + h)];
            lane.clear();
            for (int32_t j : kept[static_cast<size_t>(h)]) lane.push_back(c.first + j);
        }
        // Its cost, as the indexers report theirs: a dot product and a weighted add per query head and key.
        part.index_ops += 4.0 * static_cast<double>(w) * static_cast<double>(arena.shape.n_head) * static_cast<double>(n_keys) * hd;
    }

    // H2O's scores: the attention received so far, this step's included, of the totals from
    // `first` on (past the lanes' rows to score the unpressed tokens alone). out: [n_kv][n_keys].
    static void received_scores(const PressState& st, int32_t storage, int32_t n_kv, int64_t first, int64_t n_keys, std::vector<float>& out) {
        out.assign(static_cast<size_t>(n_kv * n_keys), 0.0f);
        for (int32_t h = 0; h < n_kv; ++h)
            for (const std::vector<std::vector<float>>* from : {&st.received, &st.pending}) {
                const size_t l = static_cast<size_t>(storage * n_kv + h);
                if (l >= from->size()) continue;
                const std::vector<float>& lane = (*from)[l];
                for (int64_t j = 0; j < std::min<int64_t>(n_keys, static_cast<int64_t>(lane.size()) - first); ++j)
                    out[static_cast<size_t>(h * n_keys + j)] += lane[static_cast<size_t>(first + j)];
            }
    }

    // While generating, once a whole block of new tokens lies past the last press: the lanes' rows
    // and that block's tokens ranked together (TOVA: the newest query's attention over everything
    // cached; H2O: the totals), each lane keeping as many as it held, so the budget holds. H2O's
    // newest half of the budget (lanes and the tokens after the block) is always kept, TOVA's
    // newest token; and a short unpressed turn (the question this reply answers) always.
    void choose_while_decoding(const KvArena& arena, int32_t storage, StepPart& part, const float* q, PressState& st, ThreadPool& pool) {
        const int32_t n_kv = arena.shape.n_kv_heads, hd = arena.shape.head_dim, bs = arena.block_tokens();
        const int32_t n_end = part.t0 + part.n, cut = n_end / bs * bs;
        const int64_t lanes = lane_length(st, static_cast<size_t>(storage * n_kv));
        std::vector<float> scores;
        int64_t n_keys = lanes + n_end - st.pressed_end;
        if (method_.score == PressScore::last_query) {
            std::vector<float> keys;
            PressRows rows = key_rows(arena, storage, *part.s, st, lanes, st.pressed_end, n_end, keys);
            const int32_t last = n_end - 1;
            rows.queries = q + static_cast<int64_t>(part.n - 1) * arena.shape.n_head * hd;
            rows.query_pos = std::span(&last, 1);
            last_query_scores(rows, scores, pool);
            part.index_ops += 4.0 * static_cast<double>(arena.shape.n_head) * static_cast<double>(n_keys) * hd;
        } else {
            received_scores(st, storage, n_kv, 0, n_keys, scores);
        }
        const int64_t n_cand = lanes + cut - st.pressed_end;
        const int32_t forced_from = method_.score == PressScore::accumulated_attention ? n_end - static_cast<int32_t>((lanes + n_end - cut) / 2) : n_end - 1;
        if (st.chosen.empty()) st.chosen.assign(arena.members.size() * static_cast<size_t>(n_kv), {});
        std::vector<float> cand(static_cast<size_t>(n_cand));
        std::vector<int32_t> kept;
        for (int32_t h = 0; h < n_kv; ++h) {
            const size_t lane = static_cast<size_t>(storage * n_kv + h);
            for (int64_t j = 0; j < n_cand; ++j) {
                const int32_t pos = j < lanes ? st.positions[lane][static_cast<size_t>(j)] : st.pressed_end + static_cast<int32_t>(j - lanes);
                const bool pinned = pos >= st.pinned_begin && pos < st.pinned_end;
                cand[static_cast<size_t>(j)] = pos >= forced_from || pinned ? INFINITY : scores[static_cast<size_t>(h * n_keys + j)];
            }
            keep_best(cand, static_cast<int32_t>(lanes), kept);
            std::vector<int32_t>& chosen = st.chosen[lane];
            chosen.clear();
            for (int32_t j : kept) chosen.push_back(j < lanes ? -1 - j : st.pressed_end + static_cast<int32_t>(j - lanes));
        }
        st.cut = cut;
        st.decode_press = true;
    }

    const AttendPlan& build_plan(const KvArena& arena, int32_t storage, StepPart& part, const PressState& st) {
        AttendPlan& p = part.token_plan;
        p.clear();
        std::vector<int64_t>& cells = part_cells(part).cells;
        cells.clear();
        if (st.rounds.empty()) {
            for (int32_t i = 0; i < part.n; ++i) {
                p.add({kTokenStream, 0, part.t0 + i + 1});
                p.close_list();
            }
            return p;
        }
        // The cells this layer's lanes use, ascending (rounds, then heads, lie in row order).
        const int32_t n_kv = arena.shape.n_kv_heads;
        const int64_t cell_rows = rows_per_cell(arena);
        for (const PressState::Round& r : st.rounds)
            for (int32_t h = 0; h < n_kv; ++h) {
                const size_t lane = static_cast<size_t>(storage * n_kv + h);
                const int64_t a = r.first_row + r.offsets[lane], b = r.first_row + r.offsets[lane + 1];
                for (int64_t cell = a / cell_rows; a < b && cell <= (b - 1) / cell_rows; ++cell)
                    if (cells.empty() || cells.back() != cell) cells.push_back(cell);
            }
        p.per_kv_head = true;
        for (int32_t i = 0; i < part.n; ++i)
            for (int32_t h = 0; h < n_kv; ++h) {
                for (const PressState::Round& r : st.rounds) {
                    const size_t lane = static_cast<size_t>(storage * n_kv + h);
                    for (int64_t row = r.first_row + r.offsets[lane], end = r.first_row + r.offsets[lane + 1]; row < end;) {
                        const int64_t cell = row / cell_rows, stop = std::min(end, (cell + 1) * cell_rows);
                        const auto at = std::lower_bound(cells.begin(), cells.end(), cell);
                        p.add({kFirstExtraStream + static_cast<int32_t>(at - cells.begin()), static_cast<int32_t>(row - cell * cell_rows),
                               static_cast<int32_t>(stop - cell * cell_rows)});
                        row = stop;
                    }
                }
                p.add({kTokenStream, st.pressed_end, part.t0 + i + 1});
                p.close_list();
            }
        return p;
    }
};

}  // namespace

std::unique_ptr<AttentionPolicy> make_press_policy(const AttentionSpec& spec, PressMethod method) {
    return std::make_unique<PressPolicy>(spec, method);
}

std::vector<AttentionParameter> press_parameters(PressMethod method) {
    std::vector<AttentionParameter> params = {
        fraction_parameter("keep", "Keep (share of the prompt)", 0.25, 0.001, 1.0,
                           "The share of a prompt's tokens each layer and KV head keeps once the prompt is read; the rest are "
                           "evicted and their blocks freed. keep=1 is full attention.")};
    if (method.score == PressScore::window_attention)
        params.push_back(integer_parameter("window", "Observed queries", 64, 1, 4096,
                                           "The prompt's last queries, whose attention ranks the tokens (and which are always kept): "
                                           "where the question is."));
    params.push_back(integer_parameter("min_prompt", "Shortest prompt pressed", kDefaultMinPrompt, 1, 1 << 20,
                                       "A prompt is pressed only once this many tokens are unpressed: a short chat turn, or a "
                                       "question read after its pressed context, is kept whole (pressing it would drop the question)."));
    if (method.decode_time)
        params.push_back(choice_parameter("decoding", "While generating", {"evict", "grow"},
                                          "evict: each block of generated tokens competes with the kept ones for their places, so the "
                                          "bytes stay at the prompt's budget however long the reply; grow: generated tokens are all kept."));
    return params;
}

std::string press_spec_parameters(const AttentionSpec& spec, PressMethod method) {
    return ":keep=" + fraction_text(spec.keep) + (method.score == PressScore::window_attention ? ",window=" + std::to_string(spec.window) : "") +
           (spec.min_prompt != kDefaultMinPrompt ? ",min_prompt=" + std::to_string(spec.min_prompt) : "") +
           (method.decode_time && spec.decoding == PressDecoding::grow ? ",decoding=grow" : "");
}

}  // namespace workbench
