// Two sequences over one paged cache on the real default model: a second prompt that shares a
// first one's opening adopts its cached blocks (memory counted once), and a fork shares every
// block until one side writes (copy-on-write). Either way each sequence's logits equal a run of
// it alone, bit for bit: sharing changes memory, never results.
#include <QTest>

#include "tests/skip_missing.h"
#include "attention/paged_kv.h"
#include "gguf/gguf_file.h"
#include "model/decoder_model.h"
#include "tokenizer/vocab_loader.h"
#include "workbench/engine.h"

using namespace workbench;

class TestPrefixSharing : public QObject {
    Q_OBJECT
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<DecoderModel> model_;
    std::unique_ptr<ThreadPool> pool_;

    std::unique_ptr<PagedKv> make_kv() {
        auto kv = PagedKv::create(AttentionSpec{}, KvTypes{}, model_->kv_shape(), 0, 2048);
        if (!kv.ok()) qFatal("%s", kv.status().message().c_str());
        return std::move(kv).value();
    }
    std::vector<TokenId> tokens(int n, int salt) {
        std::vector<TokenId> t;
        for (int i = 0; i < n; ++i) t.push_back(static_cast<TokenId>((i * 7919 + salt * 104729 + 17) % 49000));
        return t;
    }
    // Last-position logits of `prompt` run alone from an empty cache.
    std::vector<float> alone(const std::vector<TokenId>& prompt) {
        auto kv = make_kv();
        std::vector<float> logits;
        if (!model_->forward(prompt, 0, *kv, false, logits, *pool_).ok()) qFatal("forward failed");
        return logits;
    }

private slots:
    void initTestCase() {
        const std::string path = find_default_model();
        if (path.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto f = GgufFile::open(path);
        QVERIFY(f.ok());
        file_ = std::move(f).value();
        auto vocab = load_tokenizer_vocab(*file_);
        QVERIFY(vocab.ok());
        auto hp = load_hparams(*file_, static_cast<int32_t>(vocab->tokens.size()));
        QVERIFY(hp.ok());
        auto w = load_weights(*file_, *hp);
        QVERIFY(w.ok());
        auto m = DecoderModel::create(*hp, std::move(w).value());
        QVERIFY(m.ok());
        model_ = std::move(m).value();
        pool_ = std::make_unique<ThreadPool>(2);
    }

    void common_prompt_blocks_are_shared() {
        std::vector<TokenId> common = tokens(600, 0), a = common, b = common;
        const auto tail_a = tokens(20, 1), tail_b = tokens(20, 2);
        a.insert(a.end(), tail_a.begin(), tail_a.end());
        b.insert(b.end(), tail_b.begin(), tail_b.end());
        auto kv = make_kv();
        std::vector<float> la, lb;
        QVERIFY(model_->forward(a, 0, *kv, false, la, *pool_).ok());
        const uint64_t one = kv->usage().bytes_in_use;
        const int32_t adopted = kv->adopt_cached_prefix(1, b);
        QCOMPARE(adopted, 592);  // 37 full blocks of 16
        QVERIFY(model_->forward(std::span(b).subspan(static_cast<size_t>(adopted)), 1, *kv, false, lb, *pool_).ok());
        QCOMPARE(kv->n_tokens(1), 620);
        const uint64_t per_block = kv->usage(0).bytes_in_use / 39;  // 620 tokens: 39 blocks
        // B holds 39 blocks of which 37 are A's: only 2 new ones.
        QCOMPARE(kv->usage().bytes_in_use, one + 2 * per_block);
        QCOMPARE(kv->usage(1).bytes_in_use, 39 * per_block);
        QCOMPARE(kv->usage().bytes_full, 2 * 39 * per_block);
        QCOMPARE(la, alone(a));
        QCOMPARE(lb, alone(b));
    }

    void fork_then_diverge_copies_on_write() {
        const auto prompt = tokens(300, 3);  // 18.75 blocks: the last one partly filled
        auto kv = make_kv();
        std::vector<float> l0, l1;
        QVERIFY(model_->forward(prompt, 0, *kv, false, l0, *pool_).ok());
        const uint64_t before = kv->usage().bytes_in_use;
        QVERIFY(kv->fork(0, 1).ok());
        QCOMPARE(kv->usage().bytes_in_use, before);  // nothing copied yet
        const std::vector<TokenId> next0 = {101, 202}, next1 = {303, 404};
        QVERIFY(model_->forward(next0, 0, *kv, false, l0, *pool_).ok());
        QVERIFY(model_->forward(next1, 1, *kv, false, l1, *pool_).ok());
        QCOMPARE(kv->usage().bytes_in_use, before + kv->usage(0).bytes_in_use / 19);  // one block copied
        auto full0 = prompt, full1 = prompt;
        full0.insert(full0.end(), next0.begin(), next0.end());
        full1.insert(full1.end(), next1.begin(), next1.end());
        QCOMPARE(l0, alone(full0));
        QCOMPARE(l1, alone(full1));
    }
};

QTEST_APPLESS_MAIN(TestPrefixSharing)
#include "test_prefix_sharing.moc"
