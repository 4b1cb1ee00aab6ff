// DeepSeek's native latent attention under the KV cache's variants: the cache holds one row of
// [c | RoPE key] per token and layer (V is its start, never stored apart), the byte figures and
// predict_kv say so, a degenerate variant equals full attention exactly, the variants that do not
// fit latent rows are refused with the reason, and 8-bit rows stay near f16's logits.
// Runs on a generated deepseek2 model (synth "small": 2 layers, rank 128 + a 32-value RoPE key).
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include "workbench/attention.h"
#include "workbench/engine.h"
#include "workbench/model_file.h"
#include "tests/greedy_request.h"

using namespace workbench;
using wbtest::greedy;

class TestLatentAttention : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;
    std::vector<TokenId> prompt_;
    std::vector<float> full_;

    Result<std::unique_ptr<Engine>> load(const std::string& attention, const std::string& kv_types = "f16",
                                         const std::string& mla_cache = "latent", const std::string& model = {}) {
        EngineConfig c;
        c.mla_cache = mla_cache;
        c.model_path = model.empty() ? model_ : model;
        c.n_ctx = 256;
        c.n_threads = 2;
        c.attention = attention;
        c.kv_types = kv_types;
        return Engine::load(c);
    }

    std::vector<float> logits(const std::string& attention, const std::string& kv_types = "f16", const std::string& mla_cache = "latent") {
        auto e = load(attention, kv_types, mla_cache);
        if (!e.ok()) qFatal("%s: %s", attention.c_str(), e.status().message().c_str());
        auto l = (*e)->logits_all(prompt_);
        if (!l.ok()) qFatal("%s: %s", attention.c_str(), l.status().message().c_str());
        return *l;
    }

private slots:
    void initTestCase() {
        model_ = dir_.filePath("deepseek2.gguf").toStdString();
        const Status s = write_synth_model("deepseek2", "small", "f32", "", model_, 5);
        QVERIFY2(s.ok(), s.message().c_str());
        for (int i = 0; i < 90; ++i) prompt_.push_back(3 + (i * 37) % 500);
        full_ = logits("full");
    }

    void model_reports_latent_rows() {
        auto e = load("full");
        QVERIFY2(e.ok(), e.status().message().c_str());
        const ModelInfo& info = (*e)->model_info();
        QCOMPARE(info.kv_lora_rank, 128);
        QCOMPARE(info.head_dim, 160);   // the cached row: rank + RoPE key
        QCOMPARE(info.head_dim_v, 128);
        QCOMPARE(info.n_head_kv, 1);
        // One f16 row of 160 values per token and layer: no V stored apart.
        QCOMPARE(info.kv_bytes_per_token, uint64_t{2 * 160 * 2});
    }

    // Expanded per head (EngineConfig::mla_cache): keys of 64 (32 + RoPE 32) and values of 32 in
    // each of 8 heads — 4.8 times the latent rows' bytes — and the same logits within rounding;
    // an unknown form is named.
    void expanded_cache_holds_each_head() {
        auto e = load("full", "f16", "expanded");
        QVERIFY2(e.ok(), e.status().message().c_str());
        const ModelInfo& info = (*e)->model_info();
        QCOMPARE(info.mla_cache, std::string("expanded"));
        QCOMPARE(info.n_head_kv, 8);
        QCOMPARE(info.head_dim, 64);
        QCOMPARE(info.head_dim_v, 32);
        QCOMPARE(info.kv_bytes_per_token, uint64_t{2 * 8 * (64 + 32) * 2});
        const std::vector<float> latent = logits("full", "f32"), expanded = logits("full", "f32", "expanded");
        double worst = 0, spread = 0;
        for (size_t i = 0; i < latent.size(); ++i) {
            worst = std::max(worst, std::abs(static_cast<double>(latent[i]) - expanded[i]));
            spread = std::max(spread, std::abs(static_cast<double>(latent[i])));
        }
        // The kernel rounds each query to f16 (as llama.cpp does) and the two forms' queries differ
        // ([W_k_b·q_nope | RoPE] against [q_nope | RoPE]): on this sharp random model that is
        // ~1e-3 of the largest logit, as f16 rows against f32 are (q8_rows_track_f16); both forms
        // match llama.cpp on the oracle's tiny models (test_arch_oracle).
        qInfo("expanded against latent rows (f32): largest logit difference %.2e of the largest logit", worst / spread);
        QVERIFY(worst / spread < 5e-3);
        auto dense = Engine::load([&] {
            EngineConfig c;
            c.model_path = model_;
            c.mla_cache = "sideways";
            return c;
        }());
        QVERIFY(!dense.ok());
        QVERIFY2(dense.status().message().find("expected latent or expanded") != std::string::npos, dense.status().message().c_str());
    }

    void degenerate_settings_equal_full_attention_data() {
        QTest::addColumn<QString>("spec");
        for (const char* s : {"sliding:window=4096,sinks=4", "topk:k=2048", "compressed:block=1,recent=0",
                              "compressed:block=1,recent=0,pool=weighted", "heavy:block=1,k=4096,recent=0", "cross_layer:group=1",
                              "snapkv:keep=1", "tova:keep=1", "h2o:keep=1"})
            QTest::newRow(s) << QString(s);
    }
    void degenerate_settings_equal_full_attention() {
        QFETCH(QString, spec);
        QVERIFY(logits(spec.toStdString()) == full_);
    }

    // Settings that drop or pool tokens change the logits: each variant really runs on the rows.
    void variants_change_the_logits() {
        for (const char* spec : {"sliding:window=32,sinks=4", "topk:k=32,recent=16", "compressed:block=4,recent=16,sinks=4"})
            QVERIFY2(logits(spec) != full_, spec);
    }

    void refusals_name_the_reason_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        QTest::addColumn<QString>("why");
        QTest::newRow("latent") << "latent:rank=32" << "f16" << "latent already";
        QTest::newRow("pool=max") << "compressed:block=4,recent=16,pool=max" << "f16" << "pool=max";
        QTest::newRow("recent") << "full" << "q8_0,recent=16" << "drop recent=";
        QTest::newRow("k!=v") << "full" << "k=q8_0,v=f16" << "K and V take one type";
        QTest::newRow("rotated") << "full" << "q4_0" << "power-of-two head_dim";
        QTest::newRow("select=token") << "topk:k=64,select=token" << "f16" << "use select=block";
    }
    void refusals_name_the_reason() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        QFETCH(QString, why);
        auto e = load(attention.toStdString(), kv.toStdString());
        QVERIFY(!e.ok());
        QVERIFY2(e.status().message().find(why.toStdString()) != std::string::npos, e.status().message().c_str());
        auto geometry = [&] {
            auto full = load("full");
            return kv_geometry((*full)->model_info());
        }();
        auto p = predict_kv(*parse_attention_layout(attention.toStdString()), kv.toStdString(), geometry, 100);
        QVERIFY2(!p.ok(), qPrintable(attention + " " + kv));
    }

    // 8-bit latent rows (V read from the same blocks as K) move the logits no more than bf16 rows
    // do: this random model's attention is sharp (each change ~1e-1 of the largest logit, against
    // ~1e-2 for a dense synth model), but a value misread would move them by whole units.
    void q8_rows_track_f16() {
        auto change = [&](const char* kv) {
            const std::vector<float> l = logits("full", kv);
            double worst = 0, spread = 0;
            for (size_t i = 0; i < l.size(); ++i) {
                worst = std::max(worst, std::abs(static_cast<double>(l[i]) - full_[i]));
                spread = std::max(spread, std::abs(static_cast<double>(full_[i])));
            }
            qInfo("%s rows: largest logit change %.2e of the largest logit", kv, worst / spread);
            return worst / spread;
        };
        const double q8 = change("q8_0"), bf16 = change("bf16"), f32 = change("f32");
        QVERIFY(q8 > 0 && f32 < q8);
        QVERIFY(q8 < 1.5 * bf16 && q8 < 0.3);
    }

    // The roofline counts the head matrices the CPU reads: the expanded form's W_UK and W_UV are
    // made at load as 8-bit rows from the file's 4-bit k_b and v_b, so per layer its decode reads
    // 8 heads × (32 + 32) rows × 128 values × (34 − 18)/32 bytes more than the latent form's.
    void roofline_counts_the_head_matrices_read() {
        const std::string q4 = dir_.filePath("deepseek2_q4.gguf").toStdString();
        const Status s = write_synth_model("deepseek2", "small", "q4_0", "", q4, 5);
        QVERIFY2(s.ok(), s.message().c_str());
        auto decode_bytes = [&](const char* form) {
            auto e = load("full", "f16", form, q4);
            if (!e.ok()) qFatal("%s", e.status().message().c_str());
            if (!(*e)->generate_tokens(prompt_, greedy(3)).ok()) qFatal("generate");
            const auto r = (*e)->last_step_roofline();
            if (!r.decode) qFatal("no decode step");
            return r.decode->matmul.bytes;
        };
        const double latent = decode_bytes("latent"), expanded = decode_bytes("expanded");
        QCOMPARE(expanded - latent, 2.0 * 8 * (32 + 32) * 128 * (34 - 18) / 32);
    }

    void prediction_equals_measured_bytes_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        QTest::addColumn<QString>("cache");
        for (const char* cache : {"latent", "expanded"})
            for (const char* kv : {"f16", "q8_0"})
                for (const char* a : {"full", "sliding:window=32,sinks=4", "topk:k=32,recent=16", "compressed:block=4,recent=16,sinks=4"})
                    QTest::newRow(qPrintable(QStringLiteral("%1 %2 %3").arg(a, kv, cache))) << QString(a) << QString(kv) << QString(cache);
    }
    void prediction_equals_measured_bytes() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        QFETCH(QString, cache);
        auto e = load(attention.toStdString(), kv.toStdString(), cache.toStdString());
        QVERIFY2(e.ok(), e.status().message().c_str());
        QVERIFY((*e)->generate_tokens(prompt_, greedy(20)).ok());
        const KvUsageReport u = (*e)->kv_usage();
        auto p = predict_kv(*parse_attention_layout(attention.toStdString()), kv.toStdString(), kv_geometry((*e)->model_info()), u.n_tokens);
        QVERIFY2(p.ok(), p.status().message().c_str());
        QCOMPARE(p->bytes_held, u.bytes_in_use);
        QCOMPARE(p->bytes_read, u.bytes_read_last_step);
        QCOMPARE(p->bytes_full, u.bytes_full);
        // The same prediction from the model loaded in the other form (the configuration panel
        // predicts a reload in the form it offers).
        auto other = load("full", "f16", cache == "latent" ? "expanded" : "latent");
        QVERIFY2(other.ok(), other.status().message().c_str());
        auto from_other = predict_kv(*parse_attention_layout(attention.toStdString()), kv.toStdString(),
                                     kv_geometry((*other)->model_info(), cache.toStdString()), u.n_tokens);
        QVERIFY2(from_other.ok(), from_other.status().message().c_str());
        QCOMPARE(from_other->bytes_held, p->bytes_held);
        QCOMPARE(from_other->bytes_read, p->bytes_read);
        QCOMPARE(from_other->bytes_full, p->bytes_full);
        if (attention == "full" && cache == "latent") {
            // Every token's row in each of the 2 layers, once: rank 128 + RoPE 32 values.
            const uint64_t row = kv == "f16" ? 160 * 2 : 160 / 32 * 34;
            const uint64_t n = static_cast<uint64_t>(u.n_tokens);
            QCOMPARE(u.bytes_read_last_step, 2 * n * row);
            QCOMPARE(u.bytes_in_use, 2 * ((n + 15) / 16 * 16) * row);
        }
    }
};

QTEST_GUILESS_MAIN(TestLatentAttention)
#include "test_latent_attention.moc"
