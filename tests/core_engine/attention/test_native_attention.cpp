// A model's trained local/global layers (Gemma 3) under the caller's attention layout: the local
// layers keep their window, variants apply to the global layers or are refused with the reason,
// a degenerate variant equals full attention exactly, and predict_kv gives the bytes the engine
// then holds and reads — below the every-layer-global figure, which kv_bytes_full keeps.
// Runs on a generated gemma3 model (synth: 3 layers, window 32, layers 0 and 2 local).
#include <QTemporaryDir>
#include <QTest>

#include "workbench/attention.h"
#include "workbench/engine.h"
#include "workbench/model_file.h"
#include "tests/greedy_request.h"

using namespace workbench;
using wbtest::greedy;

class TestNativeAttention : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;
    std::vector<TokenId> prompt_;

    Result<std::unique_ptr<Engine>> load(const std::string& attention, const std::string& kv_types = "f16") {
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = 128;
        c.n_threads = 2;
        c.attention = attention;
        c.kv_types = kv_types;
        return Engine::load(c);
    }

private slots:
    void initTestCase() {
        model_ = dir_.filePath("gemma3.gguf").toStdString();
        const Status s = write_synth_model("gemma3", "tiny", "f32", "", model_, 3);
        QVERIFY2(s.ok(), s.message().c_str());
        for (int i = 0; i < 70; ++i) prompt_.push_back(3 + (i * 37) % 90);
    }

    void layout_applies_to_the_global_layers() {
        const NativeAttention native{512, {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16}};
        QCOMPARE(native_attention_name(native, 18), std::string("local layers 0-4+6-10+12-16 (window 512), global 5+11+17"));
        auto runs = [&](const char* spec) {
            auto r = apply_native_attention(*parse_attention_layout(spec), native, 18);
            return r.ok() ? attention_layout_name(*r) : "error: " + r.status().message();
        };
        QCOMPARE(runs("full"), std::string("sliding:window=512,sinks=0,layers=0-4+6-10+12-16"));
        QCOMPARE(runs("sliding:window=128,sinks=4"),
                 std::string("sliding:window=128,sinks=4,layers=5+11+17;sliding:window=512,sinks=0,layers=0-4+6-10+12-16"));
        QCOMPARE(runs("topk:k=64,recent=16,layers=5;sliding:window=128,sinks=4"),
                 std::string("topk:k=64,recent=16,layers=5;sliding:window=128,sinks=4,layers=11+17;"
                             "sliding:window=512,sinks=0,layers=0-4+6-10+12-16"));
        for (auto [spec, why] : {std::pair{"latent:rank=64", "latent runs on every layer or none"},
                                 {"cross_layer:group=2", "cross_layer shares one cache between neighbouring layers"},
                                 {"sliding:window=64,layers=3", "names layer 3, a trained local layer"},
                                 {"topk:k=64,layers=5+11+17;sliding", "sliding is left no global layer"}}) {
            const std::string message = runs(spec);
            QVERIFY2(message.find(why) != std::string::npos && message.find("global 5+11+17") != std::string::npos, message.c_str());
        }
        QCOMPARE(runs("full"), runs("full"));
        auto plain = apply_native_attention(*parse_attention_layout("topk:k=64"), NativeAttention{}, 18);
        QCOMPARE(attention_layout_name(*plain), std::string("topk:k=64,recent=64"));  // no pattern: the layout itself
    }

    void model_reports_its_pattern() {
        auto e = load("full");
        QVERIFY2(e.ok(), e.status().message().c_str());
        const ModelInfo& info = (*e)->model_info();
        QCOMPARE(info.native_attention.window, 32);
        QCOMPARE(info.native_attention.local_layers, (std::vector<int32_t>{0, 2}));
        QCOMPARE(info.attention, std::string("full"));
        QCOMPARE(info.attention_runs, std::string("sliding:window=32,sinks=0,layers=0+2"));
        QCOMPARE(info.chat_template_family, std::string("gemma"));  // the file has no template: its family's
        QVERIFY2(info.chat_template_warning.find("no chat template") != std::string::npos, info.chat_template_warning.c_str());
        auto refused = load("latent:rank=16");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.status().message().find("local layers 0+2 (window 32), global 1") != std::string::npos,
                 refused.status().message().c_str());
    }

    // A window no shorter than the context on the global layers is full attention, bit for bit.
    void degenerate_variant_equals_full() {
        auto full = load("full");
        auto wide = load("sliding:window=4096,sinks=4");
        QVERIFY(full.ok() && wide.ok());
        auto a = (*full)->logits_all(prompt_);
        auto b = (*wide)->logits_all(prompt_);
        QVERIFY(a.ok() && b.ok());
        QVERIFY(*a == *b);
        auto narrow = load("sliding:window=16,sinks=4");
        auto c = (*narrow)->logits_all(prompt_);
        QVERIFY(c.ok() && *c != *a);  // the global layer's window does change it
    }

    void prediction_equals_measured_bytes_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        for (const char* kv : {"f16", "k=bf16,v=f32"})  // head_dim 16: no block types
            for (const char* a : {"full", "sliding:window=16,sinks=4", "topk:k=16,recent=8", "compressed:block=4,recent=16,sinks=4",
                                  "heavy:block=4,k=4,recent=16"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(a, kv))) << QString(a) << QString(kv);
    }
    void prediction_equals_measured_bytes() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        auto e = load(attention.toStdString(), kv.toStdString());
        QVERIFY2(e.ok(), e.status().message().c_str());
        QVERIFY((*e)->generate_tokens(prompt_, greedy(20)).ok());
        const KvUsageReport u = (*e)->kv_usage();
        QCOMPARE(u.n_tokens, static_cast<int32_t>(prompt_.size()) + 19);
        auto p = predict_kv(*parse_attention_layout(attention.toStdString()), kv.toStdString(), kv_geometry((*e)->model_info()), u.n_tokens);
        QVERIFY2(p.ok(), p.status().message().c_str());
        QCOMPARE(p->bytes_held, u.bytes_in_use);
        QCOMPARE(p->bytes_read, u.bytes_read_last_step);
        QCOMPARE(p->bytes_full, u.bytes_full);
        QVERIFY(u.bytes_in_use < u.bytes_full);  // the local layers' saving, whatever the global layers do
        if (attention == "full" && kv == "f16") {
            // The per-layer formula: the global layer holds every token's block; a local layer the
            // blocks from the one holding the next query's first key (n + 1 − window) on.
            const uint64_t n = static_cast<uint64_t>(u.n_tokens), bs = 16, window = 32;
            const uint64_t row = 2 /*K,V*/ * 2 /*f16*/ * 2 /*kv heads*/ * 16 /*head_dim*/;
            const uint64_t all_blocks = (n + bs - 1) / bs, local_blocks = all_blocks - (n + 1 - window) / bs;
            QCOMPARE(u.bytes_in_use, (all_blocks + 2 * local_blocks) * bs * row);
            QCOMPARE(u.bytes_full, 3 * all_blocks * bs * row);
        }
    }
};

QTEST_GUILESS_MAIN(TestNativeAttention)
#include "test_native_attention.moc"
