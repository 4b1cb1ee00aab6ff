// The presses' mechanism on the KV group alone, with generated rows: KNorm on keys whose norms
// say exactly which tokens each (layer, head) keeps, so every lane's rows can be checked where the
// plans read them (packed across layers' arenas, heads of different selections); the prompt's
// token blocks are released; a follow-up prompt is pressed in its turn, a short one (fewer tokens
// unpressed than min_prompt) kept whole; a step aborted after its plans chose leaves nothing
// chosen behind; TOVA and H2O go on evicting, a block of generated tokens at a time, with the
// bytes held flat. The 64-token prompts here press with min_prompt=16.
#include <QTest>

#include <algorithm>
#include <random>
#include <vector>

#include "attention/kv_group.h"
#include "kernels/cpu/thread_pool.h"
#include "kv_blocks/kv_row_codec.h"

using namespace workbench;

namespace {

constexpr int32_t kLayers = 3, kHeads = 2, kDim = 32, kBlock = 16;

PagedKvShape shape() {
    PagedKvShape s;
    s.n_layers = kLayers;
    s.n_kv_heads = kHeads;
    s.head_dim = kDim;
    s.n_head = kHeads;
    return s;
}

// Keys of norm 1 for the tokens a (layer, head) should keep, 10 for the others; each row's first
// value carries (layer, head, token) so a row read back says whose it is.
struct Rows {
    std::vector<std::vector<float>> k, v;   // per layer: [token][head][dim]
    static bool kept(int32_t layer, int32_t head, int32_t t) { return (t * 7 + layer * 3 + head * 5) % 4 == 0; }
    static float tag(int32_t layer, int32_t head, int32_t t) { return static_cast<float>(layer * 100000 + head * 10000 + t); }
    explicit Rows(int32_t n) {
        std::mt19937 rng(3);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int32_t il = 0; il < kLayers; ++il) {
            k.emplace_back(static_cast<size_t>(n * kHeads * kDim));
            v.emplace_back(static_cast<size_t>(n * kHeads * kDim));
            for (int32_t t = 0; t < n; ++t)
                for (int32_t h = 0; h < kHeads; ++h) {
                    float* kr = k.back().data() + (t * kHeads + h) * kDim;
                    float* vr = v.back().data() + (t * kHeads + h) * kDim;
                    for (int32_t d = 0; d < kDim; ++d) kr[d] = 0.01f * normal(rng), vr[d] = normal(rng);
                    kr[1] = kept(il, h, t) ? 1.0f : 10.0f;
                    vr[0] = tag(il, h, t);
                }
        }
    }
};

// The tags of the rows a list reads for one head, in list order.
std::vector<float> tags_read(const AttendPlan& plan, std::span<const KvStreamView> streams, int64_t list, int32_t head) {
    std::vector<float> out;
    for (const KvSpan& sp : plan.list(list)) {
        const KvStreamView& view = streams[static_cast<size_t>(sp.stream)];
        for (int32_t e = sp.begin; e < sp.end; ++e) {
            const int64_t block = view.blocks[e / view.block_tokens], slot = e % view.block_tokens;
            float v[kDim];
            kv_decode_row(view.v.type, view.v_base + block * view.v.block_stride + slot * view.v.token_stride + head * view.v.head_stride, v, kDim);
            out.push_back(v[0]);
        }
    }
    return out;
}

std::unique_ptr<KvGroup> make_group(const char* spec) {
    auto group = KvGroup::create(*parse_attention_spec(spec), KvTypes{KvDType::f32, KvDType::f32, 0}, shape(), 0, 512, 1, kBlock);
    if (!group.ok()) qFatal("%s", group.status().message().c_str());
    return std::move(*group);
}

// Runs tokens [t0, t0 + n) as one step (the prompt's end when `ends`, generated tokens when
// `generated`), writing every layer.
Status step(KvGroup& kv, const Rows& rows, int32_t t0, int32_t n, bool ends, ThreadPool& pool, bool commit = true, bool generated = false) {
    static std::vector<TokenId> ids(1024, 5);
    const StepSequence s{0, std::span<const TokenId>(ids.data() + t0, static_cast<size_t>(n)), ends, generated};
    WB_RETURN_IF_ERROR(kv.begin_step(std::span(&s, 1)));
    std::vector<float> q(static_cast<size_t>(n * kHeads * kDim), 0.1f);
    for (int32_t il = 0; il < kLayers; ++il) {
        kv.write(il, rows.k[static_cast<size_t>(il)].data() + t0 * kHeads * kDim, rows.v[static_cast<size_t>(il)].data() + t0 * kHeads * kDim, pool);
        (void)kv.plan(il, q.data(), pool);
    }
    if (commit) kv.finish_step();
    else kv.abort_step();
    return Status::ok_status();
}

// Generates tokens [t0, end) one step each.
void generate(KvGroup& kv, const Rows& rows, int32_t t0, int32_t end, ThreadPool& pool) {
    for (int32_t t = t0; t < end; ++t)
        if (!step(kv, rows, t, 1, false, pool, true, true).ok()) qFatal("generate %d", t);
}

// What token t (not kept: the step is aborted) would read, per (layer, head): the tags, lanes first.
std::vector<std::vector<float>> read_by(KvGroup& kv, const Rows& rows, int32_t t, ThreadPool& pool) {
    const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false, true};
    if (!kv.begin_step(std::span(&s, 1)).ok()) qFatal("begin");
    std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
    std::vector<std::vector<float>> lanes;
    for (int32_t il = 0; il < kLayers; ++il) {
        kv.write(il, rows.k[static_cast<size_t>(il)].data() + t * kHeads * kDim, rows.v[static_cast<size_t>(il)].data() + t * kHeads * kDim, pool);
        const AttendPlan& plan = kv.plan(il, q.data(), pool);
        for (int32_t h = 0; h < kHeads; ++h) lanes.push_back(tags_read(plan, kv.streams(il), h, h));
    }
    kv.abort_step();
    return lanes;
}

// Rows whose generated tokens (from `from` on) have keys that draw `drawn` times the queries' pull.
Rows drawing(int32_t n, int32_t from, float drawn) {
    Rows rows(n);
    for (int32_t il = 0; il < kLayers; ++il)
        for (int32_t t = from; t < n; ++t)
            for (int32_t h = 0; h < kHeads; ++h) rows.k[static_cast<size_t>(il)][static_cast<size_t>((t * kHeads + h) * kDim + 1)] = drawn;
    return rows;
}

bool holds(const std::vector<float>& lane, float tag) { return std::find(lane.begin(), lane.end(), tag) != lane.end(); }

}  // namespace

class TestPressMechanism : public QObject {
    Q_OBJECT

private slots:
    void knormKeepsEachLanesOwnTokensAndFreesThePrompt() {
        // 64 prompt tokens, keep 0.25: 16 rows a lane, exactly the keys of norm 1 (a quarter of
        // them, a different quarter in each layer and head).
        const int32_t n = 64;
        const Rows rows(n + 8);
        ThreadPool pool(2);
        auto kv = make_group("knorm:keep=0.25,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 40, false, pool).ok());
        QVERIFY(step(*kv, rows, 40, 24, true, pool).ok());
        // Held: the packed rows (6 lanes of 16 = 96 rows, 2 cells of 32 in one block of 3 · 32) and nothing else.
        QCOMPARE(kv->usage().bytes_in_use, kv->block_bytes());
        QCOMPARE(kv->usage().n_tokens, n);
        // The next token reads each lane's kept tokens in order, then itself.
        QVERIFY(step(*kv, rows, n, 1, false, pool, false).ok());
        const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
        QVERIFY(kv->begin_step(std::span(&s, 1)).ok());
        std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
        for (int32_t il = 0; il < kLayers; ++il) {
            kv->write(il, rows.k[static_cast<size_t>(il)].data() + n * kHeads * kDim, rows.v[static_cast<size_t>(il)].data() + n * kHeads * kDim, pool);
            const AttendPlan& plan = kv->plan(il, q.data(), pool);
            QVERIFY(plan.per_kv_head);
            const std::span<const KvStreamView> streams = kv->streams(il);
            for (int32_t h = 0; h < kHeads; ++h) {
                std::vector<float> want;
                for (int32_t t = 0; t < n; ++t)
                    if (Rows::kept(il, h, t)) want.push_back(Rows::tag(il, h, t));
                QCOMPARE(want.size(), size_t(16));
                want.push_back(Rows::tag(il, h, n));
                QCOMPARE(tags_read(plan, streams, h, h), want);
            }
        }
        kv->finish_step();
        // The block map: the prompt's blocks evicted, the new token's live.
        int32_t n_blocks = 0;
        const std::vector<KvBlockUse> map = kv->block_map(0, n_blocks);
        QCOMPARE(n_blocks, 5);
        QCOMPARE(map[0], KvBlockUse::evicted);
        QCOMPARE(map[4], KvBlockUse::live);
    }

    void aFollowUpPromptIsPressedInItsTurn() {
        const Rows rows(200);
        ThreadPool pool(1);
        auto kv = make_group("knorm:keep=0.5,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());        // 32 a lane
        QVERIFY(step(*kv, rows, 64, 1, false, pool).ok());
        QVERIFY(step(*kv, rows, 65, 63, true, pool).ok());       // [64, 128): 32 more a lane
        const std::vector<KvBlockUse> before = [&] { int32_t nb = 0; return kv->block_map(0, nb); }();
        QVERIFY(std::count(before.begin(), before.begin() + 8, KvBlockUse::evicted) == 8);
        // 6 lanes × 64 rows = 384 packed rows: 4 blocks of 96; no token block left.
        QCOMPARE(kv->usage().bytes_in_use, 4 * kv->block_bytes());
        const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
        QVERIFY(kv->begin_step(std::span(&s, 1)).ok());
        std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
        kv->write(0, rows.k[0].data() + 128 * kHeads * kDim, rows.v[0].data() + 128 * kHeads * kDim, pool);
        const AttendPlan& plan = kv->plan(0, q.data(), pool);
        std::vector<float> want;
        for (int32_t t = 0; t < 128; ++t)
            if (Rows::kept(0, 1, t)) want.push_back(Rows::tag(0, 1, t));
        // Each round kept its quarter of norm-1 keys and the rest by their (equal, large) norms, earliest first.
        const std::vector<float> got = tags_read(plan, kv->streams(0), 1, 1);
        QCOMPARE(got.size(), size_t(65));
        for (float t : want) QVERIFY2(std::find(got.begin(), got.end(), t) != got.end(), qPrintable(QString::number(t)));
        kv->abort_step();
    }

    // A round shorter than window / keep (a question read after its pressed context) keeps its
    // whole window: the newest tokens, where the question is, are never evicted.
    void aShortRoundKeepsItsWindow() {
        const Rows rows(128);
        ThreadPool pool(1);
        auto kv = make_group("snapkv:keep=0.25,window=16,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());
        QVERIFY(step(*kv, rows, 64, 32, true, pool).ok());   // 32 tokens: a quarter is 8, the window 16
        const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
        QVERIFY(kv->begin_step(std::span(&s, 1)).ok());
        std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
        kv->write(0, rows.k[0].data() + 96 * kHeads * kDim, rows.v[0].data() + 96 * kHeads * kDim, pool);
        const AttendPlan& plan = kv->plan(0, q.data(), pool);
        const std::vector<float> got = tags_read(plan, kv->streams(0), 0, 0);
        QCOMPARE(got.size(), size_t(16 + 16 + 1));
        for (int32_t t = 80; t <= 96; ++t) QVERIFY2(std::find(got.begin(), got.end(), Rows::tag(0, 0, t)) != got.end(), qPrintable(QString::number(t)));
        kv->abort_step();
    }

    // The default min_prompt (128): a 64-token prompt is not pressed; a 40-token question read
    // after a pressed 128-token context is kept whole and read beside the context's lanes.
    void aShortPromptIsKeptWhole() {
        const Rows rows(200);
        ThreadPool pool(1);
        auto short_first = make_group("knorm:keep=0.25");
        QVERIFY(step(*short_first, rows, 0, 64, true, pool).ok());
        QCOMPARE(short_first->usage().bytes_in_use, 4 * short_first->block_bytes());
        auto kv = make_group("knorm:keep=0.25");
        QVERIFY(step(*kv, rows, 0, 128, true, pool).ok());   // pressed: 6 lanes × 32 rows, 2 blocks of 96
        QCOMPARE(kv->usage().bytes_in_use, 2 * kv->block_bytes());
        QVERIFY(step(*kv, rows, 128, 40, true, pool).ok());  // kept whole: tokens [128, 168) in 3 blocks
        QCOMPARE(kv->usage().bytes_in_use, 5 * kv->block_bytes());
        const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
        QVERIFY(kv->begin_step(std::span(&s, 1)).ok());
        std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
        kv->write(0, rows.k[0].data() + 168 * kHeads * kDim, rows.v[0].data() + 168 * kHeads * kDim, pool);
        const AttendPlan& plan = kv->plan(0, q.data(), pool);
        const std::vector<float> got = tags_read(plan, kv->streams(0), 0, 0);
        QCOMPARE(got.size(), size_t(32 + 40 + 1));
        for (int32_t t = 128; t <= 168; ++t) QVERIFY2(std::find(got.begin(), got.end(), Rows::tag(0, 0, t)) != got.end(), qPrintable(QString::number(t)));
        kv->abort_step();
    }

    // H2O adds each step's attention as the prompt is read: a prompt read in three steps keeps
    // exactly what it keeps read in one; half the budget is the newest tokens, half the heaviest.
    void h2oAccumulatesAcrossThePromptsSteps() {
        const Rows rows(160);
        ThreadPool pool(2);
        auto kept_by = [&](const std::vector<int32_t>& steps) {
            auto kv = make_group("h2o:keep=0.25");
            int32_t t = 0;
            for (size_t i = 0; i < steps.size(); ++i) {
                if (!step(*kv, rows, t, steps[i], i + 1 == steps.size(), pool).ok()) qFatal("step");
                t += steps[i];
            }
            const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
            if (!kv->begin_step(std::span(&s, 1)).ok()) qFatal("begin");
            std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
            std::vector<std::vector<float>> lanes;
            for (int32_t il = 0; il < kLayers; ++il) {
                kv->write(il, rows.k[static_cast<size_t>(il)].data() + t * kHeads * kDim, rows.v[static_cast<size_t>(il)].data() + t * kHeads * kDim, pool);
                const AttendPlan& plan = kv->plan(il, q.data(), pool);
                for (int32_t h = 0; h < kHeads; ++h) lanes.push_back(tags_read(plan, kv->streams(il), h, h));
            }
            kv->abort_step();
            return lanes;
        };
        const std::vector<std::vector<float>> whole = kept_by({128}), in_steps = kept_by({40, 60, 28});
        QCOMPARE(in_steps, whole);
        for (size_t lane = 0; lane < whole.size(); ++lane) {
            const auto il = static_cast<int32_t>(lane / kHeads), h = static_cast<int32_t>(lane % kHeads);
            QCOMPARE(whole[lane].size(), size_t(32 + 1));   // a quarter of 128, and the new token
            for (int32_t t = 112; t < 128; ++t) QVERIFY(std::find(whole[lane].begin(), whole[lane].end(), Rows::tag(il, h, t)) != whole[lane].end());
        }
    }

    // A second H2O round: the totals of the first round's tokens are spent with it; the new round
    // keeps a half of its own tokens, the newest quarter among them, beside the first round's lanes.
    void h2oPressesAFollowUpRound() {
        const Rows rows(200);
        ThreadPool pool(1);
        auto kv = make_group("h2o:keep=0.5,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());      // 32 a lane: 48..63 and 16 heavy hitters
        QVERIFY(step(*kv, rows, 64, 1, false, pool).ok());
        QVERIFY(step(*kv, rows, 65, 63, true, pool).ok());     // [64, 128): 32 more, 112..127 among them
        const StepSequence s{0, std::span<const TokenId>(std::vector<TokenId>(1, 5)), false};
        QVERIFY(kv->begin_step(std::span(&s, 1)).ok());
        std::vector<float> q(static_cast<size_t>(kHeads * kDim), 0.1f);
        kv->write(0, rows.k[0].data() + 128 * kHeads * kDim, rows.v[0].data() + 128 * kHeads * kDim, pool);
        const AttendPlan& plan = kv->plan(0, q.data(), pool);   // builds the streams read below
        const std::vector<float> got = tags_read(plan, kv->streams(0), 1, 1);
        QCOMPARE(got.size(), size_t(32 + 32 + 1));
        for (int32_t t : {48, 63, 112, 127, 128}) QVERIFY2(std::find(got.begin(), got.end(), Rows::tag(0, 1, t)) != got.end(), qPrintable(QString::number(t)));
        const auto in_second = std::count_if(got.begin(), got.end(), [](float tag) { return tag >= Rows::tag(0, 1, 64) && tag < Rows::tag(0, 1, 128); });
        QCOMPARE(in_second, 32);
        kv->abort_step();
    }

    // Decode-time TOVA: once a whole block of generated tokens lies past the press, its tokens and
    // the lanes' rows compete for the lanes' places by the newest query's attention. Tokens whose
    // keys draw far more attention than the kept ones take every place; tokens that draw none
    // leave the lanes as they were but for the newest token (always kept). The block is released.
    void tovaEvictsWhileGenerating() {
        ThreadPool pool(1);
        for (const float drawn : {100.0f, -100.0f}) {
            const Rows rows = drawing(200, 64, drawn);
            auto kv = make_group("tova:keep=0.25,min_prompt=16");
            QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());   // 16 rows a lane: 96, one block
            const std::vector<std::vector<float>> before = read_by(*kv, rows, 64, pool);
            generate(*kv, rows, 64, 79, pool);
            QCOMPARE(kv->usage().bytes_in_use, 2 * kv->block_bytes());   // the lanes and the block being generated
            generate(*kv, rows, 79, 80, pool);                            // the block is whole: pressed and released
            QCOMPARE(kv->usage().bytes_in_use, kv->block_bytes());
            QCOMPARE(kv->usage().n_tokens, 80);
            const std::vector<std::vector<float>> after = read_by(*kv, rows, 80, pool);
            for (size_t lane = 0; lane < after.size(); ++lane) {
                const auto il = static_cast<int32_t>(lane / kHeads), h = static_cast<int32_t>(lane % kHeads);
                QCOMPARE(after[lane].size(), size_t(16 + 1));
                QVERIFY(holds(after[lane], Rows::tag(il, h, 79)));
                const auto old_kept = std::count_if(before[lane].begin(), before[lane].end() - 1, [&](float tag) { return holds(after[lane], tag); });
                if (drawn > 0) {
                    for (int32_t t = 64; t < 80; ++t) QVERIFY(holds(after[lane], Rows::tag(il, h, t)));
                    QCOMPARE(old_kept, 0);
                } else {
                    QCOMPARE(old_kept, 15);
                }
            }
        }
    }

    // Decode-time H2O: the totals run on over the kept rows and the new tokens. Generated tokens
    // that draw no attention leave once they fall out of the newest half of the budget; the
    // prompt's heavy hitters stay; the bytes stay at the budget however long the reply.
    void h2oKeepsItsHeavyHittersWhileGenerating() {
        ThreadPool pool(1);
        const Rows rows = drawing(300, 64, -100.0f);
        auto kv = make_group("h2o:keep=0.5,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());   // 32 rows a lane: two blocks
        const uint64_t pressed = kv->usage().bytes_in_use;
        QCOMPARE(pressed, 2 * kv->block_bytes());
        for (int32_t t = 64; t < 256; t += 16) {
            generate(*kv, rows, t, t + 16, pool);
            QCOMPARE(kv->usage().bytes_in_use, pressed);
        }
        const std::vector<std::vector<float>> lanes = read_by(*kv, rows, 256, pool);
        for (size_t lane = 0; lane < lanes.size(); ++lane) {
            const auto il = static_cast<int32_t>(lane / kHeads), h = static_cast<int32_t>(lane % kHeads);
            QCOMPARE(lanes[lane].size(), size_t(32 + 1));
            for (int32_t t = 240; t <= 256; ++t) QVERIFY(holds(lanes[lane], Rows::tag(il, h, t)));   // the newest half
            for (int32_t t = 64; t < 240; ++t) QVERIFY(!holds(lanes[lane], Rows::tag(il, h, t)));
            const auto from_prompt = std::count_if(lanes[lane].begin(), lanes[lane].end(), [&](float tag) { return tag < Rows::tag(il, h, 64); });
            QCOMPARE(from_prompt, 16);
        }
        // decoding=grow keeps every generated token beside the prompt's lanes.
        auto grow = make_group("h2o:keep=0.5,min_prompt=16,decoding=grow");
        QVERIFY(step(*grow, rows, 0, 64, true, pool).ok());
        generate(*grow, rows, 64, 256, pool);
        QCOMPARE(grow->usage().bytes_in_use, pressed + 12 * grow->block_bytes());
        QCOMPARE(read_by(*grow, rows, 256, pool)[0].size(), size_t(32 + 192 + 1));
    }

    // A short follow-up turn (fewer tokens than min_prompt: not pressed) is the question the
    // reply answers: decode-time presses never evict it, even when the tokens generated after it
    // draw far more attention; older rows make room instead.
    void aShortTurnSurvivesDecodeTimeEviction() {
        ThreadPool pool(1);
        const Rows rows = drawing(200, 88, 100.0f);   // the reply to the question draws the attention
        auto kv = make_group("tova:keep=0.25,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool).ok());   // 16 rows a lane
        generate(*kv, rows, 64, 80, pool);                   // a reply; its block pressed at 80
        QVERIFY(step(*kv, rows, 80, 8, true, pool).ok());    // the question: 8 tokens, kept whole
        generate(*kv, rows, 88, 96, pool);                   // its reply's first block: pressed at 96
        const std::vector<std::vector<float>> lanes = read_by(*kv, rows, 96, pool);
        for (size_t lane = 0; lane < lanes.size(); ++lane) {
            const auto il = static_cast<int32_t>(lane / kHeads), h = static_cast<int32_t>(lane % kHeads);
            QCOMPARE(lanes[lane].size(), size_t(16 + 1));
            for (int32_t t = 80; t < 96; ++t) QVERIFY2(holds(lanes[lane], Rows::tag(il, h, t)), qPrintable(QString::number(t)));
        }
    }

    void anAbortedPressLeavesNothingChosen() {
        const Rows rows(100);
        ThreadPool pool(1);
        auto kv = make_group("knorm:keep=0.25,min_prompt=16");
        QVERIFY(step(*kv, rows, 0, 64, true, pool, false).ok());   // planned, chosen, then aborted
        QCOMPARE(kv->usage().bytes_in_use, uint64_t{0});
        QVERIFY(step(*kv, rows, 0, 48, false, pool).ok());           // a prompt's first part: nothing pressed
        QCOMPARE(kv->usage().bytes_in_use, 3 * kv->block_bytes());
        QVERIFY(step(*kv, rows, 48, 1, false, pool).ok());
        QCOMPARE(kv->usage().bytes_in_use, 4 * kv->block_bytes());
    }
};

QTEST_APPLESS_MAIN(TestPressMechanism)
#include "test_press_mechanism.moc"
