// The KV block map on the real model: what each variant does to each layer's blocks after a
// conversation, as the GUI draws it.
#include <QTest>

#include <algorithm>

#include "tests/skip_missing.h"
#include "workbench/engine.h"

using namespace workbench;

namespace {

std::unique_ptr<Engine> load(const std::string& attention) {
    EngineConfig c;
    c.model_path = find_default_model();
    c.n_ctx = 1024;
    c.attention = attention;
    auto e = Engine::load(c);
    if (!e.ok()) qFatal("%s", e.status().message().c_str());
    return std::move(e).value();
}

// Runs a 200-token prompt and 8 greedy tokens; returns the map.
KvBlockMap after_conversation(Engine& e) {
    std::vector<TokenId> prompt;
    for (int i = 0; i < 200; ++i) prompt.push_back(100 + (i * 37) % 5000);
    GenerationRequest g;
    g.max_tokens = 8;
    g.ignore_eos = true;
    g.sampling.temperature = 0;
    auto r = e.generate_tokens(prompt, g);
    if (!r.ok()) qFatal("%s", r.status().message().c_str());
    return e.kv_block_map();
}

int count(const KvBlockMap& m, int layer, KvBlockState s) {
    int n = 0;
    for (int b = 0; b < m.n_blocks; ++b) n += m.at(layer, b) == s;
    return n;
}

}  // namespace

class TestKvBlockMap : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
    }

    void full_attention_holds_every_block() {
        auto e = load("full");
        const KvBlockMap m = after_conversation(*e);
        QCOMPARE(m.n_layers, 30);
        QCOMPARE(m.n_tokens, 207);   // the last sampled token is never run
        QCOMPARE(m.n_blocks, (207 + 15) / 16);
        QCOMPARE(static_cast<int>(m.cells.size()), m.n_layers * m.n_blocks);
        for (int il = 0; il < m.n_layers; ++il) QCOMPARE(count(m, il, KvBlockState::live), m.n_blocks);
        e->reset();
        QCOMPARE(e->kv_block_map().n_blocks, 0);
    }

    void sliding_evicts_between_sinks_and_window() {
        auto e = load("sliding:window=48,sinks=4");
        const KvBlockMap m = after_conversation(*e);
        for (int il = 0; il < m.n_layers; ++il) {
            QCOMPARE(m.at(il, 0), KvBlockState::live);                 // the sinks' block
            QCOMPARE(m.at(il, m.n_blocks - 1), KvBlockState::live);    // the window
            QVERIFY(count(m, il, KvBlockState::evicted) >= m.n_blocks - 1 - (48 + 15) / 16 - 1);
            QCOMPARE(m.at(il, 2), KvBlockState::evicted);
        }
    }

    void compressed_blocks_are_pooled() {
        auto e = load("compressed:block=4,recent=32,sinks=4");
        const KvBlockMap m = after_conversation(*e);
        QVERIFY(count(m, 0, KvBlockState::compressed) >= 8);
        QCOMPARE(m.at(0, 0), KvBlockState::live);
    }

    void topk_skips_blocks_the_last_query_left_out() {
        auto e = load("topk:k=64,recent=32");
        const KvBlockMap m = after_conversation(*e);
        for (int il = 0; il < m.n_layers; ++il) {
            QCOMPARE(m.at(il, 0), KvBlockState::live);   // the sink block is always read
            QVERIFY2(count(m, il, KvBlockState::skipped) > 0, qPrintable(QString("layer %1").arg(il)));
            // Per KV head 4 blocks + the recent window; three heads may pick different blocks.
            QVERIFY(count(m, il, KvBlockState::live) <= 3 * 4 + 3 + 1);
        }
    }

    void cross_layer_layers_borrow() {
        auto e = load("cross_layer:group=2");
        const KvBlockMap m = after_conversation(*e);
        for (int il = 0; il < m.n_layers; ++il)
            QCOMPARE(count(m, il, il % 2 ? KvBlockState::borrowed : KvBlockState::live), m.n_blocks);
    }
};

QTEST_APPLESS_MAIN(TestKvBlockMap)
#include "test_kv_block_map.moc"
