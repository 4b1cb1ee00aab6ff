// The latent variant's absorbed form on the real default model: U_k folded into the queries, one
// row [c | kept RoPE pairs] per token (per KV head with heads=each) read by the common attention
// kernel with V inside the row. With every RoPE pair kept it is the rebuild form's math (only
// rounding differs); its rows hold what the formula says; sequences batch together; the prompt
// and decode paths agree; and the settings it cannot hold are refused by name.
#include <QTest>

#include <algorithm>
#include <cmath>

#include "tests/skip_missing.h"
#include "workbench/engine.h"
#include "tests/greedy_request.h"

using namespace workbench;
using wbtest::greedy;

namespace {

// Largest |a − b| at each position, then the worst and the mean of those.
std::pair<double, double> logit_distance(const std::vector<float>& a, const std::vector<float>& b, size_t n_positions) {
    const size_t n_vocab = a.size() / n_positions;
    double worst = 0, mean = 0;
    for (size_t p = 0; p < n_positions; ++p) {
        double m = 0;
        for (size_t v = 0; v < n_vocab; ++v) m = std::max(m, static_cast<double>(std::abs(a[p * n_vocab + v] - b[p * n_vocab + v])));
        worst = std::max(worst, m);
        mean += m / static_cast<double>(n_positions);
    }
    return {worst, mean};
}

}  // namespace

class TestLatentAbsorbed : public QObject {
    Q_OBJECT
    std::string model_;
    std::vector<TokenId> prompt_;

    std::unique_ptr<Engine> load(const std::string& attention, const std::string& kv = "f16", int n_ctx = 1024, int n_seq_max = 1,
                                 const std::string& weights = "") {
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = n_ctx;
        c.n_threads = 2;
        c.n_seq_max = n_seq_max;
        c.attention = attention;
        c.kv_types = kv;
        c.weight_type = weights;
        auto e = Engine::load(c);
        if (!e.ok()) qFatal("%s: %s", attention.c_str(), e.status().message().c_str());
        return std::move(e).value();
    }

private slots:
    void initTestCase() {
        model_ = find_default_model();
        if (model_.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto e = load("full");
        const std::string text =
            "The paged KV cache keeps each sequence's keys and values in fixed-size blocks, so memory grows with the tokens a "
            "sequence holds and not with the longest context any request might reach. A block table maps positions to blocks; "
            "prefix caching lets requests that share a system prompt share its blocks, and copy-on-write lets several samples "
            "of one prompt diverge without copying what they share. When the pool runs out, a request is preempted and its "
            "blocks go back; it is recomputed later from its tokens. Latent attention shrinks the rows themselves instead.";
        prompt_ = e->tokenize(text + " " + text, true, false);
        QVERIFY(prompt_.size() > 200);
        prompt_.resize(200);
    }

    // With all 32 RoPE pairs of every KV head kept, no pair is scored position-free: the absorbed
    // form computes the rebuild form's scores and values in another order (and with the query
    // rounded to f16 in the kernel), so it tracks full attention as closely as the rebuild does.
    void every_pair_kept_is_the_rebuild_math() {
        std::vector<float> full, rebuild;
        for (auto [spec, out] : {std::pair{"full", &full}, {"latent:rank=192,rope=32", &rebuild}}) {
            auto l = load(spec, "f16", 512, 1, "f32")->logits_all(prompt_);
            QVERIFY(l.ok());
            *out = *l;
        }
        const auto [rebuild_worst, rebuild_mean] = logit_distance(full, rebuild, prompt_.size());
        for (const char* spec : {"latent:rank=192,rope=32,form=absorbed", "latent:rank=192,rope=32,form=absorbed,heads=each"}) {
            auto l = load(spec, "f16", 512, 1, "f32")->logits_all(prompt_);
            QVERIFY(l.ok());
            const auto [worst, mean] = logit_distance(full, *l, prompt_.size());
            const auto [to_rebuild, to_rebuild_mean] = logit_distance(rebuild, *l, prompt_.size());
            qInfo("%s: vs full max %.4f mean %.4f (rebuild %.4f / %.4f); vs rebuild max %.4f mean %.4f", spec, worst, mean, rebuild_worst,
                  rebuild_mean, to_rebuild, to_rebuild_mean);
            QVERIFY2(worst < 0.1 && mean < 0.03, spec);
            QVERIFY2(to_rebuild < 0.1 && to_rebuild_mean < 0.03, spec);
        }
    }

    // A row holds rank + 2 · rope · 3 KV heads values, stored once (V is its first rank values):
    // 144 + 48 = 192 f16 values against full attention's 2 · 3 · 64, half the bytes held and read.
    void rows_hold_the_latent_and_the_kept_pairs() {
        auto full = load("full");
        QVERIFY(full->generate_tokens(prompt_, greedy(8)).ok());
        const KvUsageReport f = full->kv_usage();
        for (const char* spec : {"latent:rank=144,rope=8,form=absorbed", "latent:rank=144,rope=8,form=absorbed,heads=each"}) {
            auto e = load(spec);
            QVERIFY(e->generate_tokens(prompt_, greedy(8)).ok());
            const KvUsageReport u = e->kv_usage();
            QCOMPARE(u.n_tokens, f.n_tokens);
            QCOMPARE(u.bytes_in_use, f.bytes_in_use / 2);
            QCOMPARE(u.bytes_read_last_step, f.bytes_read_last_step / 2);
            auto predicted = predict_kv(*parse_attention_layout(spec), "f16", kv_geometry(e->model_info()), u.n_tokens);
            QVERIFY2(predicted.ok(), predicted.status().message().c_str());
            QCOMPARE(predicted->bytes_held, u.bytes_in_use);
        }
    }

    // Absorbed rows are token rows like full attention's: several sequences run in one step, and
    // each gets the tokens it gets alone.
    void sequences_batch_together_as_alone() {
        auto e = load("latent:rank=192,rope=32,form=absorbed", "f16", 1024, 4);
        std::vector<BatchRequest> reqs;
        std::vector<std::vector<TokenId>> solo;
        for (size_t n : {size_t{40}, size_t{120}, size_t{200}}) {
            BatchRequest r;
            r.prompt.assign(prompt_.begin(), prompt_.begin() + static_cast<std::ptrdiff_t>(n));
            r.generation = greedy(12);
            e->reset();
            auto alone = e->generate_tokens(r.prompt, r.generation);
            QVERIFY2(alone.ok(), alone.status().message().c_str());
            solo.push_back(alone->tokens);
            reqs.push_back(r);
        }
        e->reset();
        BatchOptions o;
        o.max_running = 3;
        auto r = e->run_batch(reqs, o);
        QVERIFY2(r.ok(), r.status().message().c_str());
        QVERIFY(r->metrics.max_running >= 2);
        for (const auto& c : r->completions) {
            QVERIFY2(c.ok, c.error.c_str());
            QVERIFY2(c.tokens == solo[static_cast<size_t>(c.request)], qPrintable(QString("request %1 differs from its solo run").arg(c.request)));
        }
    }

    // A prompt and a decode step run the same kernel over the same rows: the tokens decoded one
    // at a time are the whole-sequence pass's best, but where it saw a near tie.
    void prompt_and_decode_paths_agree() {
        for (const char* spec : {"latent:rank=144,rope=16,form=absorbed,pick=frequency", "latent:rank=144,rope=16,form=absorbed,heads=each"}) {
            auto e = load(spec);
            std::vector<TokenId> seq = prompt_;
            auto out = e->generate_tokens(seq, greedy(16));
            QVERIFY(out.ok());
            seq.insert(seq.end(), out->tokens.begin(), out->tokens.end());
            e->reset();
            auto logits = e->logits_all(seq);
            QVERIFY(logits.ok());
            const size_t n_vocab = logits->size() / seq.size();
            int near_ties = 0;
            for (size_t i = 0; i < out->tokens.size(); ++i) {
                const float* row = logits->data() + (prompt_.size() - 1 + i) * n_vocab;
                const auto best = static_cast<TokenId>(std::max_element(row, row + n_vocab) - row);
                if (best == out->tokens[i]) continue;
                QVERIFY2(row[best] - row[out->tokens[i]] < 0.05f, spec);
                QVERIFY2(++near_ties <= 2, spec);
            }
        }
    }

    void refuses_what_it_cannot_hold_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("kv");
        QTest::addColumn<QString>("expected");
        QTest::newRow("K and V types differ") << "latent:rank=144,rope=8,form=absorbed" << "k=q8_0,v=f16" << "K and V take one --kv-type";
        QTest::newRow("rank off the q8_0 blocks") << "latent:rank=144,rope=8,form=absorbed" << "q8_0" << "must be multiples of 32";
        QTest::newRow("rank not shared by the KV heads") << "latent:rank=100,form=absorbed,heads=each" << "f16" << "must be a multiple of 3";
        QTest::newRow("measured ranks per head") << "latent:rank=96,heads=each,ranks=measured" << "f16" << "heads=each takes ranks=uniform";
    }
    void refuses_what_it_cannot_hold() {
        QFETCH(QString, spec);
        QFETCH(QString, kv);
        QFETCH(QString, expected);
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = 512;
        c.attention = spec.toStdString();
        c.kv_types = kv.toStdString();
        auto e = Engine::load(c);
        QVERIFY(!e.ok());
        QVERIFY2(e.status().message().find(expected.toStdString()) != std::string::npos, e.status().message().c_str());
        KvGeometry smollm2;   // SmolLM2-135M's
        smollm2.n_layers = 30;
        smollm2.n_kv_heads = 3;
        smollm2.head_dim = 64;
        smollm2.n_head = 9;
        auto predicted = predict_kv(*parse_attention_layout(spec.toStdString()), kv.toStdString(), smollm2, 100);
        QVERIFY(!predicted.ok());
    }
};

QTEST_GUILESS_MAIN(TestLatentAbsorbed)
#include "test_latent_absorbed.moc"
