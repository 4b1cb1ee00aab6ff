// Cross-layer sharing's calibration on the real default model and its calibration text: every
// pair of neighbouring layers is costed, the chosen pairs are the cheapest that do not overlap,
// the cache stays within the share asked for, and the layout loads and holds what it says.
#include <QFile>
#include <QTest>

#include <algorithm>

#include "tests/skip_missing.h"
#include "workbench/calibration.h"

using namespace workbench;

class TestLayerSharingCalibration : public QObject {
    Q_OBJECT
    EngineConfig config_;
    std::vector<TokenId> text_;
    QualityOptions options_;

private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
        config_.model_path = find_default_model();
        config_.n_ctx = 128;
        config_.n_threads = 2;
        auto e = Engine::load(config_);
        QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
        QFile f(QString::fromStdString(default_calibration_text_path()));
        QVERIFY2(f.open(QIODevice::ReadOnly), "resources/eval/paradise_lost.txt missing");
        text_ = (*e)->tokenize(f.read(4000).toStdString(), false, false);
        options_.n_ctx = 128;
        options_.max_windows = 1;
        QVERIFY(default_calibration_text_path() != default_eval_text_path());
    }

    void cheapest_pairs_share_within_the_kv_share() {
        auto merge = parse_attention_spec("cross_layer:merge=mean,sinks=4");
        QVERIFY(merge.ok());
        int64_t last_done = 0;
        auto r = calibrate_layer_sharing(config_, *merge, text_, options_, 0.75, [&](int64_t done, int64_t) { last_done = done; });
        QVERIFY2(r.ok(), r.ok() ? "" : r.status().message().c_str());
        QCOMPARE(r->n_layers, 30);
        QCOMPARE(r->pairs.size(), size_t{29});
        QCOMPARE(last_done, int64_t{29});
        for (size_t i = 0; i < r->pairs.size(); ++i) {
            QCOMPARE(r->pairs[i].first_layer, static_cast<int32_t>(i));
            QVERIFY(r->pairs[i].kl_mean > 0);   // merging any two layers changes the output
        }
        // 30 layers at most 0.75: 8 pairs, 22 stored.
        QCOMPARE(r->chosen.size(), size_t{8});
        QCOMPARE(r->kv_share, 22.0 / 30.0);
        double worst_chosen = 0;
        std::vector<bool> taken(30, false);
        for (int32_t l : r->chosen) {
            QVERIFY(!taken[l] && !taken[l + 1]);
            taken[l] = taken[l + 1] = true;
            worst_chosen = std::max(worst_chosen, r->pairs[l].kl_mean);
        }
        // Greedy by KL: a pair left out either overlaps a chosen one or costs at least as much
        // as the last one chosen.
        for (const LayerPairCost& p : r->pairs)
            if (!taken[p.first_layer] && !taken[p.first_layer + 1]) QVERIFY(p.kl_mean >= worst_chosen);

        // The layout loads and stores 22 of 30 layers (pooled sinks blocks aside).
        auto layout = parse_attention_layout(r->attention);
        QVERIFY2(layout.ok(), r->attention.c_str());
        int32_t shared_layers = 0;
        for (const AttentionTerm& t : *layout) {
            QCOMPARE(t.spec.kind, AttentionKind::cross_layer);
            QCOMPARE(t.spec.sinks, 4);
            shared_layers += t.spec.last_layer - t.spec.first_layer + 1;
        }
        QCOMPARE(shared_layers, 16);
        EngineConfig c = config_;
        c.attention = r->attention;
        auto e = Engine::load(c);
        QVERIFY2(e.ok(), e.ok() ? "" : e.status().message().c_str());
        const KvUsageReport before = (*e)->kv_usage();
        GenerationRequest req;
        req.max_tokens = 1;
        auto out = (*e)->generate_tokens(std::vector<TokenId>(text_.begin(), text_.begin() + 64), req);
        QVERIFY(out.ok());
        const KvUsageReport usage = (*e)->kv_usage();
        int stored = 0;
        for (uint64_t b : usage.layer_bytes) stored += b > 0;
        QCOMPARE(stored, 22);
        QVERIFY(usage.bytes_in_use > before.bytes_in_use);
    }

    void refuses_what_pairs_cannot_do() {
        auto merge = parse_attention_spec("cross_layer:merge=mean");
        auto low = calibrate_layer_sharing(config_, *merge, text_, options_, 0.4);
        QCOMPARE(low.status().code(), StatusCode::invalid_argument);
        QVERIFY2(low.status().message().find("0.5 to 1") != std::string::npos, low.status().message().c_str());
        auto sliding = calibrate_layer_sharing(config_, *parse_attention_spec("sliding"), text_, options_, 0.75);
        QCOMPARE(sliding.status().code(), StatusCode::invalid_argument);
        QualityOptions too_long = options_;
        too_long.n_ctx = 100000;
        auto short_text = calibrate_layer_sharing(config_, *merge, text_, too_long, 0.75);
        QVERIFY(!short_text.ok());
    }

    void stops_when_cancelled() {
        std::atomic<bool> cancel{true};
        auto r = calibrate_layer_sharing(config_, *parse_attention_spec("cross_layer:merge=mean"), text_, options_, 0.75, {}, &cancel);
        QCOMPARE(r.status().code(), StatusCode::cancelled);
    }
};

QTEST_GUILESS_MAIN(TestLayerSharingCalibration)
#include "test_layer_sharing_calibration.moc"
