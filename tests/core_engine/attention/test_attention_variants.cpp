// The attention variants on the real default model, through the engine API: each at a degenerate
// setting gives full attention's exact logits (every position of a 1,040-token prompt, compared
// bit for bit) and greedy tokens; each at a real setting changes what is stored or read, by the
// bytes its formula predicts, and changes the outputs: the logits, or the greedy tokens.
#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "tests/skip_missing.h"
#include "workbench/engine.h"

using namespace workbench;

namespace {

constexpr int kPromptTokens = 1040;
constexpr uint64_t kBlock = 16;
// Positions that see no more keys than the sliding window and top-k settings below keep: their
// logits must stay full attention's, bit for bit.
constexpr size_t kHeadTokens = 200;
// Latent at full rank against full attention (see latent_full_rank_tracks_full_attention).
constexpr double kLatentMaxBound = 0.1;   // measured 0.061 at rank 384, 0.033 with every RoPE pair kept
constexpr double kLatentMeanBound = 0.03;  // measured 0.011 and 0.009

struct Run {
    uint64_t logits_hash = 0;       // every position's logits (0: not computed)
    uint64_t head_logits_hash = 0;  // the first kHeadTokens positions' logits
    std::vector<TokenId> greedy;
    KvUsageReport usage;
    GenerationMetrics metrics;
    StepRoofline decode;   // the last decode step's parts
    ModelInfo info;
};

uint64_t fnv1a(const float* v, size_t n) {
    uint64_t h = 1469598103934665603ull;
    const auto* p = reinterpret_cast<const unsigned char*>(v);
    for (size_t i = 0; i < n * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

}  // namespace

class TestAttentionVariants : public QObject {
    Q_OBJECT
    std::string model_;
    std::vector<TokenId> prompt_;
    Run full_;
    uint64_t full_block_bytes_ = 0;

    Run run(const std::string& attention, bool all_logits, const std::string& kv_types = "f16", int32_t max_tokens = 16) {
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = 2048;
        c.n_threads = 2;
        c.attention = attention;
        c.kv_types = kv_types;
        auto e = Engine::load(c);
        if (!e.ok()) qFatal("%s: %s", attention.c_str(), e.status().message().c_str());
        Run r;
        if (all_logits) {
            auto logits = (*e)->logits_all(prompt_);
            if (!logits.ok()) qFatal("%s", logits.status().message().c_str());
            r.logits_hash = fnv1a(logits->data(), logits->size());
            r.head_logits_hash = fnv1a(logits->data(), logits->size() / prompt_.size() * kHeadTokens);
            (*e)->reset();
        }
        GenerationRequest req;
        req.max_tokens = max_tokens;
        req.ignore_eos = true;
        req.sampling.temperature = 0;
        auto out = (*e)->generate_tokens(prompt_, req);
        if (!out.ok()) qFatal("%s", out.status().message().c_str());
        r.greedy = out->tokens;
        r.metrics = out->metrics;
        r.usage = (*e)->kv_usage();
        r.decode = (*e)->last_step_roofline().decode.value_or(StepRoofline{});
        r.info = (*e)->model_info();
        return r;
    }

private slots:
    void initTestCase() {
        model_ = find_default_model();
        if (model_.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QFile f(QStringLiteral(WB_EVAL_TEXT));
        QVERIFY2(f.open(QIODevice::ReadOnly), "resources/eval text missing");
        EngineConfig c;
        c.model_path = model_;
        auto e = Engine::load(c);
        QVERIFY(e.ok());
        prompt_ = (*e)->tokenize(f.readAll().toStdString(), true, false);
        QVERIFY(prompt_.size() > static_cast<size_t>(kPromptTokens));
        prompt_.resize(kPromptTokens);
        full_ = run("full", true);
        const ModelInfo& info = (*e)->model_info();
        full_block_bytes_ = info.kv_bytes_per_token * kBlock;
        // The context holds prompt + 15 fed-back tokens; full attention stores every one.
        QCOMPARE(full_.usage.n_tokens, kPromptTokens + 15);
        QCOMPARE(full_.usage.bytes_in_use, (kPromptTokens + 15 + kBlock - 1) / kBlock * full_block_bytes_);
        QCOMPARE(full_.usage.bytes_full, full_.usage.bytes_in_use);
        // The last decode step read every token's K and V in every layer.
        QCOMPARE(full_.usage.bytes_read_last_step, info.kv_bytes_per_token * (kPromptTokens + 15));
    }

    void degenerate_settings_equal_full_attention_data() {
        QTest::addColumn<QString>("spec");
        for (const char* s : {"sliding:window=4096,sinks=4", "sliding:window=1100,sinks=0", "topk:k=2048", "topk:k=2048,select=token",
                              "compressed:block=1,recent=0", "heavy:block=1,k=4096,recent=0", "heavy:block=1,k=4096,recent=64",
                              "compressed:block=1,recent=0,pool=weighted", "heavy:block=1,k=4096,recent=0,pool=max",
                              "heavy:block=16,k=4096,recent=64,read=tokens", "heavy:block=4,k=4096,recent=0,read=tokens,around=8,pool=weighted",
                              "cross_layer:group=1", "cross_layer:group=1,merge=mean",
                              // Presses at keep=1 move every row into their lanes and read them from there.
                              "snapkv:keep=1", "pyramidkv:keep=1", "adakv:keep=1,window=8", "tova:keep=1", "knorm:keep=1", "h2o:keep=1"})
            QTest::newRow(s) << QString(s);
    }
    void degenerate_settings_equal_full_attention() {
        QFETCH(QString, spec);
        const Run r = run(spec.toStdString(), true);
        QCOMPARE(r.logits_hash, full_.logits_hash);
        QCOMPARE(r.greedy, full_.greedy);
    }

    // A recent window over every position reads nothing quantized: f16's logits, bit for bit.
    void recent_window_over_the_whole_context_equals_f16() {
        const Run r = run("full", true, "q8_0,recent=2048");
        QCOMPARE(r.logits_hash, full_.logits_hash);
        QCOMPARE(r.greedy, full_.greedy);
    }

    // 4- and 2-bit rows are stored Hadamard-rotated, values too, and the ring keeps them so: with a
    // window over every position only the rotation (and f16 rounding of rotated rows) is left, so
    // the logits stay within q8_0's distance of f16's, which they could not if the queries or the
    // attention output were not turned to match.
    void rotated_rows_in_a_whole_window_track_f16() {
        auto logits = [&](const char* kv_types) {
            EngineConfig c;
            c.model_path = model_;
            c.n_ctx = 2048;
            c.n_threads = 2;
            c.kv_types = kv_types;
            auto e = Engine::load(c);
            if (!e.ok()) qFatal("%s: %s", kv_types, e.status().message().c_str());
            auto l = (*e)->logits_all(std::vector<TokenId>(prompt_.begin(), prompt_.begin() + 300));
            if (!l.ok()) qFatal("%s", l.status().message().c_str());
            return *l;
        };
        const std::vector<float> f16 = logits("f16"), q8 = logits("q8_0");
        auto worst = [&](const std::vector<float>& x) {
            float w = 0;
            for (size_t i = 0; i < x.size(); ++i) w = std::max(w, std::fabs(x[i] - f16[i]));
            return w;
        };
        const float q8_worst = worst(q8);
        for (const char* kv_types : {"q4_0,recent=2048", "q2_0,recent=2048", "k=f16,v=q2_0,recent=2048"}) {
            const float w = worst(logits(kv_types));
            QVERIFY2(w > 0 && w < q8_worst, qPrintable(QString("%1: %2 against q8_0's %3").arg(kv_types).arg(w).arg(q8_worst)));
        }
    }

    // Positions before the window's end read only f16 rows (full attention's logits); later ones
    // read older rows quantized, so they move, and less than plain q8_0 moves them.
    void recent_window_keeps_the_last_tokens_in_f16() {
        const Run q8 = run("full", true, "q8_0");
        const Run r = run("full", true, "q8_0,recent=" + std::to_string(kHeadTokens));
        QCOMPARE(r.head_logits_hash, full_.head_logits_hash);
        QVERIFY(q8.head_logits_hash != full_.head_logits_hash);
        QVERIFY(r.logits_hash != full_.logits_hash);
        QVERIFY(r.logits_hash != q8.logits_hash);
        // The ring: the window and kRecentRollback spare tokens, K and V in f16, every layer.
        EngineConfig c;
        c.model_path = model_;
        const ModelInfo info = (*Engine::load(c))->model_info();
        const uint64_t ring = (kHeadTokens + 64) * static_cast<uint64_t>(info.n_layer * info.n_head_kv * info.head_dim) * 2 * 2;
        QCOMPARE(r.usage.bytes_in_use, q8.usage.bytes_in_use + ring);
        // The last query read its last kHeadTokens tokens' rows in f16 instead of q8_0.
        const uint64_t n = r.usage.n_tokens;
        QCOMPARE(r.usage.bytes_read_last_step,
                 q8.usage.bytes_read_last_step / n * (n - kHeadTokens) + full_.usage.bytes_read_last_step / n * kHeadTokens);
    }

    void sliding_window_frees_blocks_and_changes_outputs() {
        const int32_t w = 256;
        const Run r = run("sliding:window=256,sinks=4", true);
        const uint64_t n = kPromptTokens + 15;
        // Live: the sinks' block, then every block from the one holding the next query's window start.
        const uint64_t first_live = (n + 1 - w) / kBlock;
        const uint64_t live = 1 + (n + kBlock - 1) / kBlock - first_live;
        QCOMPARE(r.usage.bytes_in_use, live * full_block_bytes_);
        QVERIFY(r.usage.bytes_in_use < full_.usage.bytes_in_use / 3);
        QCOMPARE(r.usage.bytes_full, full_.usage.bytes_full);
        QVERIFY(r.usage.bytes_read_last_step < full_.usage.bytes_read_last_step / 3);
        // Positions inside the first window read what full attention reads; later ones read less,
        // so their logits move.
        QCOMPARE(r.head_logits_hash, full_.head_logits_hash);
        QVERIFY(r.logits_hash != full_.logits_hash);
    }

    // A press keeps `keep` of the prompt per layer and head, in blocks it packs: the token blocks
    // are released, so the bytes held fall to the kept rows' blocks and the tokens fed back since.
    void presses_free_what_they_evict_data() {
        QTest::addColumn<QString>("spec");
        for (const char* s : {"snapkv:keep=0.25", "adakv:keep=0.25", "tova:keep=0.25", "knorm:keep=0.25", "pyramidkv:keep=0.25", "h2o:keep=0.25"})
            QTest::newRow(s) << QString(s);
    }
    void presses_free_what_they_evict() {
        QFETCH(QString, spec);
        const Run r = run(spec.toStdString(), false);
        static_assert(kPromptTokens % kBlock == 0);
        const uint64_t kept = kPromptTokens / 4;   // rows per (layer, KV head)
        const uint64_t packed_blocks = (kept + kBlock - 1) / kBlock, fed_back_blocks = (15 + kBlock - 1) / kBlock;
        QCOMPARE(r.usage.bytes_in_use, (packed_blocks + fed_back_blocks) * full_block_bytes_);
        QCOMPARE(r.usage.bytes_full, full_.usage.bytes_full);
        QCOMPARE(r.usage.n_tokens, full_.usage.n_tokens);
        // The last query read the kept rows and the tokens fed back: a quarter of the prompt's bytes.
        const uint64_t per_token = full_block_bytes_ / kBlock;
        QCOMPARE(r.usage.bytes_read_last_step, (kept + 15) * per_token);
        QCOMPARE(r.greedy.size(), full_.greedy.size());
    }

    // TOVA and H2O go on evicting while they generate: 100 tokens after the prompt, the bytes held
    // are the kept rows' blocks and the block being generated, and the last query reads the kept
    // rows and the tokens since the last whole block; with decoding=grow every generated token
    // stays. Until the first generated block is whole (16 tokens) both reply alike.
    void decode_time_presses_hold_their_budget_data() {
        QTest::addColumn<QString>("press");
        QTest::newRow("tova") << QString("tova");
        QTest::newRow("h2o") << QString("h2o");
    }
    void decode_time_presses_hold_their_budget() {
        QFETCH(QString, press);
        const Run evict = run(press.toStdString() + ":keep=0.25", false, "f16", 100);
        const Run grow = run(press.toStdString() + ":keep=0.25,decoding=grow", false, "f16", 100);
        const uint64_t kept = kPromptTokens / 4, per_token = full_block_bytes_ / kBlock;
        const uint64_t packed_blocks = (kept + kBlock - 1) / kBlock, n_tokens = kPromptTokens + 99;
        QCOMPARE(evict.usage.n_tokens, static_cast<int32_t>(n_tokens));
        QCOMPARE(evict.usage.bytes_in_use, (packed_blocks + 1) * full_block_bytes_);
        QCOMPARE(evict.usage.bytes_read_last_step, (kept + n_tokens % kBlock) * per_token);
        QCOMPARE(grow.usage.bytes_in_use, (packed_blocks + (99 + kBlock - 1) / kBlock) * full_block_bytes_);
        QCOMPARE(grow.usage.bytes_read_last_step, (kept + 99) * per_token);
        QCOMPARE(std::vector<TokenId>(evict.greedy.begin(), evict.greedy.begin() + 16), std::vector<TokenId>(grow.greedy.begin(), grow.greedy.begin() + 16));
        // H2O's totals run on at every generated token: its recomputed attention is reported as indexer work.
        if (press == "h2o") QVERIFY(evict.decode.index.ops > 0);
    }

    void cross_layer_sharing_halves_the_cache() {
        for (const char* spec : {"cross_layer:group=2", "cross_layer:group=2,merge=mean,sinks=0", "cross_layer:group=2,merge=slerp,sinks=0",
                                 "cross_layer:group=2,merge=mean"}) {
            const Run r = run(spec, false);
            // 30 layers → 15 stored; merged layers keep the second member's 4 sinks in one pooled block.
            const bool sinks = std::string_view(spec).ends_with("merge=mean");
            QCOMPARE(r.usage.bytes_in_use, full_.usage.bytes_in_use / 2 + (sinks ? full_block_bytes_ / 2 : 0));
            QCOMPARE(r.usage.layer_bytes.size(), size_t{30});
            QCOMPARE(r.usage.layer_bytes[1], uint64_t{0});
            QVERIFY2(r.greedy != full_.greedy, spec);
        }
        const Run part = run("cross_layer:group=3,layers=10-21", false);  // 12 layers → 4 stored: 22 of 30
        QCOMPARE(part.usage.bytes_in_use, full_.usage.bytes_in_use / 30 * 22);
    }

    // Merged layers keep each member's first tokens as they are. Token by token after a prompt
    // (each call reuses the cache and runs one new token), while every token is a sink the steps
    // read no merged row and follow full attention, up to the f32 row of the token in flight
    // (full attention reads it back from f16: measured 1.5 against 1.2 for all rows in f32);
    // without sinks they read merged rows (28).
    void cross_layer_sinks_stay_unmerged() {
        const std::vector<TokenId> text(prompt_.begin(), prompt_.begin() + 48);
        auto step_logits = [&](const std::string& attention, const char* kv = "f16") {
            EngineConfig c;
            c.kv_types = kv;
            c.model_path = model_;
            c.n_ctx = 256;
            c.n_threads = 2;
            c.attention = attention;
            auto e = Engine::load(c);
            if (!e.ok()) qFatal("%s: %s", attention.c_str(), e.status().message().c_str());
            GenerationRequest req;
            req.max_tokens = 1;
            req.sampling.temperature = 0;
            req.token_logits = true;
            std::vector<std::vector<float>> rows;
            for (size_t n = 32; n <= text.size(); ++n) {
                auto out = (*e)->generate_tokens(std::vector<TokenId>(text.begin(), text.begin() + n), req, {}, nullptr,
                                                 [&](const RequestEvent& ev) { rows.emplace_back(ev.logits.begin(), ev.logits.end()); });
                if (!out.ok()) qFatal("%s", out.status().message().c_str());
            }
            return rows;
        };
        auto worst_after_prompt = [](const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
            float worst = 0;
            for (size_t r = 1; r < a.size(); ++r)
                for (size_t i = 0; i < a[r].size(); ++i) worst = std::max(worst, std::fabs(a[r][i] - b[r][i]));
            return worst;
        };
        const auto full = step_logits("full");
        const auto kept = step_logits("cross_layer:group=2,merge=mean,sinks=64");
        const auto merged = step_logits("cross_layer:group=2,merge=mean,sinks=0");
        QCOMPARE(kept.size(), size_t{17});
        // The scale of "the same up to rounding": full attention with every row in f32.
        const float rounding = worst_after_prompt(step_logits("full", "f32"), full);
        const float kept_worst = worst_after_prompt(kept, full), merged_worst = worst_after_prompt(merged, full);
        const QByteArray figures = QString("rounding %1, kept %2, merged %3").arg(rounding).arg(kept_worst).arg(merged_worst).toUtf8();
        QVERIFY2(kept_worst < 2 * rounding, figures.constData());
        QVERIFY2(merged_worst > 10 * rounding, figures.constData());
    }

    void topk_reads_less_and_stores_everything_plus_its_index() {
        const Run r = run("topk:k=256,recent=64", true);
        // Every block kept, plus per block and KV head an f16 min and max row of the keys.
        QCOMPARE(r.usage.bytes_in_use, full_.usage.bytes_in_use + full_.usage.bytes_in_use / 16);
        QVERIFY(r.usage.bytes_read_last_step < full_.usage.bytes_read_last_step * 45 / 100);
        // Up to k keys every block is selected, as in full attention; past that the rest are skipped.
        QCOMPARE(r.head_logits_hash, full_.head_logits_hash);
        QVERIFY(r.logits_hash != full_.logits_hash);
        // The indexer is the roofline's own part: per layer and KV head, the last query read one
        // f16 min and max row for each whole block before its recent window; full attention has none.
        const int64_t t = kPromptTokens + 14;   // the last decode step's position
        const double per_block = 2.0 * 2.0 * r.info.head_dim * r.info.n_head_kv * r.info.n_layer;
        QCOMPARE(r.decode.index.bytes, per_block * static_cast<double>((t + 1 - 64) / 16));
        QVERIFY(r.decode.index.ops > 0 && r.decode.index.seconds > 0);
        QCOMPARE(full_.decode.index.bytes, 0.0);
        QCOMPARE(full_.decode.index.ops, 0.0);
        QVERIFY(r.decode.attention.bytes < full_.decode.attention.bytes * 45 / 100);
    }

    // By token: the same full cache plus a 2-bit code of every key, and the index read is one code
    // per candidate token (those before the recent window, less the always-kept first block).
    void topk_by_token_reads_its_codes() {
        const Run r = run("topk:k=256,recent=64,select=token", true);
        const uint64_t code = r.info.head_dim / 4 + 2;
        const uint64_t blocks = full_.usage.bytes_in_use / full_block_bytes_;
        QCOMPARE(r.usage.bytes_in_use, full_.usage.bytes_in_use + blocks * kBlock * code * r.info.n_head_kv * r.info.n_layer);
        QVERIFY(r.usage.bytes_read_last_step < full_.usage.bytes_read_last_step * 45 / 100);
        QCOMPARE(r.head_logits_hash, full_.head_logits_hash);
        QVERIFY(r.logits_hash != full_.logits_hash);
        const Run by_block = run("topk:k=256,recent=64", true);
        QVERIFY(r.logits_hash != by_block.logits_hash);
        const int64_t t = kPromptTokens + 14;
        QCOMPARE(r.decode.index.bytes, static_cast<double>(code * r.info.n_head_kv * r.info.n_layer) * static_cast<double>(t + 1 - 64 - kBlock));
        QVERIFY(r.decode.index.ops > 0);
    }

    void compressed_pools_old_tokens() {
        const int32_t m = 4, recent = 64;
        const Run r = run("compressed:block=4,recent=64", false);
        const uint64_t n = kPromptTokens + 15;
        const uint64_t pooled = (n - recent) / m;                      // groups read by the next query's predecessor
        const uint64_t raw_live = (n + kBlock - 1) / kBlock - pooled * m / kBlock;
        const uint64_t pooled_blocks = (pooled + kBlock - 1) / kBlock;
        QCOMPARE(r.usage.bytes_in_use, (raw_live + pooled_blocks) * full_block_bytes_);
        QVERIFY(r.usage.bytes_in_use < full_.usage.bytes_in_use / 3);
        QVERIFY(r.greedy != full_.greedy);
    }

    void heavy_selects_pooled_entries() {
        const Run r = run("heavy:block=16,k=8,recent=64", false);
        QVERIFY(r.usage.bytes_in_use < full_.usage.bytes_in_use / 5);
        // Reads: 8 pooled entries + ≤ 79 recent tokens, plus the indexer's pass over pooled keys.
        QVERIFY(r.usage.bytes_read_last_step < full_.usage.bytes_read_last_step / 5);
        QVERIFY(r.greedy != full_.greedy);
    }

    // pool= changes what a pooled entry holds, not how many there are: the same bytes, other logits.
    void pooling_modes_change_entries_not_bytes() {
        const Run mean = run("compressed:block=4,recent=64", true);
        const Run max = run("compressed:block=4,recent=64,pool=max", true);
        const Run weighted = run("compressed:block=4,recent=64,pool=weighted", true);
        QCOMPARE(max.usage.bytes_in_use, mean.usage.bytes_in_use);
        QCOMPARE(weighted.usage.bytes_in_use, mean.usage.bytes_in_use);
        QCOMPARE(weighted.usage.bytes_read_last_step, mean.usage.bytes_read_last_step);
        QVERIFY(max.logits_hash != mean.logits_hash);
        QVERIFY(weighted.logits_hash != mean.logits_hash);
        QVERIFY(weighted.logits_hash != max.logits_hash);
        // Positions whose window still holds every token read no pooled entry: full's logits.
        QCOMPARE(run("compressed:block=4,recent=200,pool=weighted", true).head_logits_hash, full_.head_logits_hash);
    }

    // read=tokens keeps the token rows (the pooled keys are the index beside them) and reads the
    // selected groups' own tokens: a cache larger than full attention's, reads as small as heavy's.
    void heavy_reads_selected_groups_tokens() {
        const Run pooled = run("heavy:block=16,k=8,recent=64", true);
        const Run tokens = run("heavy:block=16,k=8,recent=64,read=tokens", true);
        QVERIFY(tokens.usage.bytes_in_use > full_.usage.bytes_in_use);
        QVERIFY(tokens.usage.bytes_read_last_step < full_.usage.bytes_read_last_step / 4);
        QVERIFY(tokens.usage.bytes_read_last_step > pooled.usage.bytes_read_last_step);
        QVERIFY(tokens.logits_hash != full_.logits_hash);
        QVERIFY(tokens.logits_hash != pooled.logits_hash);
    }

    void latent_full_rank_tracks_full_attention() {
        // At full rank (R = 2·n_kv = 384) the factorization reproduces W_k and W_v to float
        // rounding. With f32 weights both paths multiply f32 by f32 (4-bit weights would take
        // 8-bit activations on the full path only, adding that quantization's noise), so what
        // is left is the rounding of K = U·(A·x) against W·x.
        // rope=32 keeps every RoPE pair of K exact in the cache and factors V alone at its full
        // rank (192): the same bound holds with K read from the kept dimensions.
        // ranks=measured at full rank has no rank to move: the same factors, the same logits.
        std::vector<float> ref, lat, lat_rope, lat_measured;
        const std::vector<TokenId> prompt(prompt_.begin(), prompt_.begin() + 200);
        for (auto [spec, out] : {std::pair{"full", &ref}, {"latent:rank=384", &lat}, {"latent:rank=192,rope=32", &lat_rope},
                                 {"latent:rank=384,ranks=measured", &lat_measured}}) {
            EngineConfig c;
            c.model_path = model_;
            c.n_ctx = 512;
            c.attention = spec;
            c.weight_type = "f32";
            auto e = Engine::load(c);
            QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
            auto l = (*e)->logits_all(prompt);
            QVERIFY(l.ok());
            *out = *l;
            if (std::string(spec) != "full") {
                const auto& err = (*e)->model_info().latent_error;
                QCOMPARE(err.size(), size_t{30});
                for (double x : err) QVERIFY(x < 1e-3);
            }
        }
        const size_t n_vocab = ref.size() / prompt.size();
        for (const auto& [name, out] : {std::pair{"latent:rank=384", &lat}, {"latent:rank=192,rope=32", &lat_rope}}) {
            double worst = 0, mean_max = 0;
            for (size_t p = 0; p < prompt.size(); ++p) {
                double m = 0;
                for (size_t v = 0; v < n_vocab; ++v)
                    m = std::max(m, static_cast<double>(std::abs(ref[p * n_vocab + v] - (*out)[p * n_vocab + v])));
                worst = std::max(worst, m);
                mean_max += m / static_cast<double>(prompt.size());
            }
            qInfo("%s vs full: max |dlogit| %.3f, mean per-position max %.3f", name, worst, mean_max);
            QVERIFY2(worst < kLatentMaxBound, name);
            QVERIFY2(mean_max < kLatentMeanBound, name);
        }
        QVERIFY(lat != lat_rope);   // K comes from another place: the rounding differs
        QVERIFY(lat_measured == lat);
    }

    void latent_prompt_and_decode_paths_agree_data() {
        QTest::addColumn<QString>("spec");
        QTest::newRow("rank 192") << "latent:rank=192";
        QTest::newRow("rank 144, 8 exact RoPE pairs") << "latent:rank=144,rope=8";
        QTest::newRow("rank 144, 8 pairs, K/V unbalanced") << "latent:rank=144,rope=8,balance=none";
    }

    void latent_prompt_and_decode_paths_agree() {
        // A prompt chunk rebuilds V and runs the attention kernel; a decode step attends over the
        // latents and up-projects once. Both compute the same sums in another order: the greedy
        // tokens decoded one step at a time are what the whole-sequence pass predicts.
        QFETCH(QString, spec);
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = 1024;
        c.n_threads = 2;
        c.attention = spec.toStdString();
        auto e = Engine::load(c);
        QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
        std::vector<TokenId> seq(prompt_.begin(), prompt_.begin() + 300);
        GenerationRequest req;
        req.max_tokens = 16;
        req.ignore_eos = true;
        req.sampling.temperature = 0;
        auto out = (*e)->generate_tokens(seq, req);
        QVERIFY(out.ok());
        QCOMPARE(out->tokens.size(), size_t{16});
        seq.insert(seq.end(), out->tokens.begin(), out->tokens.end());
        (*e)->reset();
        auto logits = (*e)->logits_all(seq);
        QVERIFY(logits.ok());
        // The two orders differ by rounding that 30 low-rank layers carry to about a tenth of a
        // logit (balanced K/V with exact RoPE pairs): a token may differ only where the
        // whole-sequence pass saw a near tie, at most twice in 16.
        const size_t n_vocab = logits->size() / seq.size();
        int near_ties = 0;
        for (size_t i = 0; i < out->tokens.size(); ++i) {
            const float* row = logits->data() + (300 - 1 + i) * n_vocab;
            const auto best = static_cast<TokenId>(std::max_element(row, row + n_vocab) - row);
            if (best == out->tokens[i]) continue;
            const float gap = row[best] - row[out->tokens[i]];
            qInfo() << "position" << i << ": the whole pass prefers" << best << "by" << gap << "over the decoded" << out->tokens[i];
            QVERIFY(gap < 0.15f);
            QVERIFY(++near_ties <= 2);
        }
    }

    void latent_refuses_what_does_not_fit() {
        for (auto [spec, expected] : {std::pair{"latent:rank=192,rope=40", "more than the 32 RoPE pairs"},
                                      {"latent:rank=384,rope=8", "rank expected 1..336"},
                                      {"latent:rank=200,rope=8", "(rank + 2 · rope · 3 KV heads = 248) must be a multiple of 64"}}) {
            EngineConfig c;
            c.model_path = model_;
            c.n_ctx = 512;
            c.attention = spec;
            if (std::string(spec) == "latent:rank=200,rope=8") c.kv_types = "q8_0";
            auto e = Engine::load(c);
            QVERIFY2(!e.ok(), spec);
            QVERIFY2(e.status().message().find(expected) != std::string::npos, e.status().message().c_str());
        }
    }

    void latent_half_rank_halves_the_cache() {
        const Run r = run("latent:rank=192", false);
        QCOMPARE(r.usage.bytes_in_use, full_.usage.bytes_in_use / 2);
        QVERIFY(r.greedy != full_.greedy);
        // Kept RoPE pairs are stored beside the latent: 144 + 2 · 8 · 3 KV heads = 192 values too.
        const Run kept = run("latent:rank=144,rope=8", false);
        QCOMPARE(kept.usage.bytes_in_use, full_.usage.bytes_in_use / 2);
    }

    void latent_measured_ranks_move_rank_between_layers() {
        // ranks=measured gives each layer its own rank at the same total, so the cache holds what
        // rank 192 everywhere holds, layer by layer in proportion; each layer's row stays a whole
        // number of the KV type's blocks.
        for (const char* types : {"f16", "q8_0"}) {
            auto load = [&](const char* attention) {
                EngineConfig c;
                c.model_path = model_;
                c.n_ctx = 512;
                c.n_threads = 2;
                c.attention = attention;
                c.kv_types = types;
                auto e = Engine::load(c);
                if (!e.ok()) qFatal("%s: %s", attention, e.status().message().c_str());
                return std::move(e).value();
            };
            auto measured = load("latent:rank=192,ranks=measured");
            auto uniform = load("latent:rank=192");
            const std::vector<int32_t>& ranks = measured->model_info().latent_ranks;
            QCOMPARE(ranks.size(), size_t{30});
            QCOMPARE(uniform->model_info().latent_ranks, std::vector<int32_t>(30, 192));
            QCOMPARE(std::accumulate(ranks.begin(), ranks.end(), 0), 30 * 192);
            QVERIFY(*std::min_element(ranks.begin(), ranks.end()) < *std::max_element(ranks.begin(), ranks.end()));
            const int32_t step = std::string(types) == "f16" ? 2 : 64;
            for (int32_t r : ranks) {
                QVERIFY2(r % step == 192 % step && r >= step && r <= 384, qPrintable(QString::number(r)));
            }
            GenerationRequest req;
            req.max_tokens = 8;
            req.ignore_eos = true;
            req.sampling.temperature = 0;
            const std::vector<TokenId> prompt(prompt_.begin(), prompt_.begin() + 200);
            QVERIFY(measured->generate_tokens(prompt, req).ok());
            QVERIFY(uniform->generate_tokens(prompt, req).ok());
            const KvUsageReport m = measured->kv_usage(), u = uniform->kv_usage();
            QCOMPARE(m.bytes_in_use, u.bytes_in_use);
            for (size_t il = 0; il < ranks.size(); ++il)
                QCOMPARE(m.layer_bytes[il] * 192, u.layer_bytes[il] * static_cast<uint64_t>(ranks[il]));
        }
    }

    void kv_types_combine_with_variants() {
        for (const char* types : {"q8_0", "k=q8_0,v=q4_0", "fp8", "bf16", "f32", "q4_0", "q2_0,recent=64"}) {
            const Run r = run("sliding:window=512,sinks=4", false, types);
            QVERIFY2(r.usage.bytes_in_use > 0, types);
            QCOMPARE(r.greedy.size(), size_t{16});
        }
        const Run q8 = run("full", false, "q8_0");
        QCOMPARE(q8.usage.bytes_in_use, full_.usage.bytes_in_use * 34 / 64);  // 34 bytes per 32 values vs 64
    }
};

QTEST_APPLESS_MAIN(TestAttentionVariants)
#include "test_attention_variants.moc"
