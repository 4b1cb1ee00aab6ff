// Speculative decoding on the real default model is lossless: greedy tokens with prompt lookup
// and with a draft model (the model drafting for itself, and so accepting nearly everything)
// equal the plain run's, for many prompts × the variants that can roll back × KV types, in a
// conversation that continues, and inside a batch beside other requests. Variants that cannot
// roll back refuse with a reason; bad draft settings and files are named.
#include <QTest>

#include "tests/skip_missing.h"
#include "workbench/engine.h"

using namespace workbench;

namespace {

const std::vector<std::string> kPrompts = {
    "Copy this sentence exactly: the early train to Lisbon leaves at seven, and the late one at nine.",
    "Here is a list: apples, pears, plums, cherries, apples, pears, plums, cherries. Continue the list.",
    "Once upon a time, in a small village by the sea,",
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "Summarize, quoting it: \"The committee met on Tuesday and agreed to postpone the vote until the budget is known.\"",
    "The capital of France is",
};

GenerationRequest greedy(int n, DraftKind kind = DraftKind::off) {
    GenerationRequest r;
    r.max_tokens = n;
    r.sampling.temperature = 0;
    r.ignore_eos = true;
    r.speculation.kind = kind;
    r.speculation.draft_max = 6;
    return r;
}

std::unique_ptr<Engine> load(const std::string& attention, const std::string& kv, bool with_draft, int n_seq = 1) {
    EngineConfig c;
    c.model_path = find_default_model();
    c.attention = attention;
    c.kv_types = kv;
    c.n_ctx = 512;
    c.n_seq_max = n_seq;
    if (with_draft) c.draft_model_path = c.model_path;
    auto e = Engine::load(c);
    if (!e.ok()) qFatal("%s", e.status().message().c_str());
    return std::move(e).value();
}

}  // namespace

class TestSpeculativeDecoding : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("the default model is not installed (installer/bootstrap.sh)");
    }

    void greedyIsTokenForTokenIdentical_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        for (const char* kv : {"f16", "q8_0"})
            for (const char* a : {"full", "topk:k=32,recent=16", "cross_layer:group=2", "latent:rank=64"})
                QTest::newRow((std::string(a) + " " + kv).c_str()) << a << kv;
    }
    void greedyIsTokenForTokenIdentical() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        auto engine = load(attention.toStdString(), kv.toStdString(), true);
        int drafted = 0, accepted = 0;
        for (const std::string& text : kPrompts) {
            const std::vector<TokenId> prompt = engine->tokenize(text, true, false);
            auto plain = engine->generate_tokens(prompt, greedy(40));
            QVERIFY2(plain.ok(), plain.status().message().c_str());
            for (DraftKind kind : {DraftKind::lookup, DraftKind::model}) {
                engine->reset();
                auto spec = engine->generate_tokens(prompt, greedy(40, kind));
                QVERIFY2(spec.ok(), spec.status().message().c_str());
                QVERIFY2(spec->tokens == plain->tokens, (text + " / " + draft_kind_name(kind)).c_str());
                const GenerationMetrics& m = spec->metrics;
                QVERIFY(m.n_accepted_tokens <= m.n_draft_tokens);
                if (kind == DraftKind::model) {
                    // The draft runs full attention with f16 KV: where the target does too, it
                    // is the target and agrees nearly always (near-ties between batched and
                    // single rows aside).
                    QVERIFY(m.n_draft_tokens > 0);
                    if (attention == "full" && kv == "f16") QVERIFY2(m.acceptance_rate && *m.acceptance_rate > 0.9, text.c_str());
                } else {
                    drafted += m.n_draft_tokens;
                    accepted += m.n_accepted_tokens;
                }
            }
            engine->reset();
        }
        // Prompt lookup found and kept something on prompts that repeat themselves.
        QVERIFY(drafted > 0 && accepted > 0);
    }

    void aConversationContinuesIdentically() {
        auto plain_engine = load("full", "f16", false);
        auto spec_engine = load("full", "f16", true);
        std::vector<ChatMessage> plain_chat{{"user", kPrompts[0]}}, spec_chat = plain_chat;
        for (int turn = 0; turn < 3; ++turn) {
            GenerationRequest plain = greedy(30), r = greedy(30, turn == 1 ? DraftKind::model : DraftKind::lookup);
            plain.ignore_eos = r.ignore_eos = false;   // a reply ends where the model ends it
            auto a = plain_engine->chat(plain_chat, plain);
            auto b = spec_engine->chat(spec_chat, r);
            QVERIFY(a.ok() && b.ok());
            QCOMPARE(b->text, a->text);
            plain_chat.push_back({"assistant", a->text});
            spec_chat.push_back({"assistant", b->text});
            plain_chat.push_back({"user", "Now say it again, word for word."});
            spec_chat.push_back(plain_chat.back());
        }
        // Later turns reused the cache: the conversation's tokens stayed consistent.
        QVERIFY(spec_engine->n_cached_tokens() > 0);
    }

    void insideABatchBesideOtherRequests() {
        auto engine = load("full", "f16", true, 4);
        std::vector<BatchRequest> batch;
        std::vector<std::vector<TokenId>> solo;
        const DraftKind kinds[] = {DraftKind::lookup, DraftKind::off, DraftKind::model, DraftKind::lookup, DraftKind::off, DraftKind::model};
        for (size_t i = 0; i < kPrompts.size(); ++i) {
            BatchRequest r;
            r.prompt = engine->tokenize(kPrompts[i], true, false);
            r.generation = greedy(32, kinds[i]);
            r.arrival_ms = 5.0 * static_cast<double>(i);
            batch.push_back(r);
            auto alone = engine->generate_tokens(r.prompt, greedy(32));
            QVERIFY(alone.ok());
            solo.push_back(alone->tokens);
            engine->reset();
        }
        BatchOptions options;
        options.max_running = 4;
        options.max_batch_tokens = 24;   // tight: drafts compete with prompt chunks for the budget
        auto result = engine->run_batch(batch, options);
        QVERIFY(result.ok());
        int64_t drafted = 0;
        for (const auto& c : result->completions) {
            QVERIFY2(c.ok, c.error.c_str());
            QVERIFY2(c.tokens == solo[static_cast<size_t>(c.request)], kPrompts[static_cast<size_t>(c.request)].c_str());
            if (kinds[c.request] == DraftKind::off) QCOMPARE(c.metrics.n_draft_tokens, 0);
            drafted += c.metrics.n_draft_tokens;
        }
        QCOMPARE(result->metrics.n_draft_tokens, drafted);
        QVERIFY(drafted > 0);
    }

    void samplingRunsAndCountsAddUp() {
        auto engine = load("full", "f16", true);
        GenerationRequest r = greedy(48, DraftKind::model);
        r.sampling.temperature = 0.8f;
        r.sampling.seed = 4;
        auto out = engine->generate_tokens(engine->tokenize(kPrompts[2], true, false), r);
        QVERIFY(out.ok());
        QCOMPARE(out->metrics.n_generated, 48);
        QVERIFY(out->metrics.n_draft_tokens > 0 && out->metrics.n_accepted_tokens <= out->metrics.n_draft_tokens);
        // The same seed gives the same tokens again.
        engine->reset();
        auto again = engine->generate_tokens(engine->tokenize(kPrompts[2], true, false), r);
        QVERIFY(again.ok());
        QCOMPARE(again->tokens, out->tokens);
    }

    void variantsThatCannotRollBackRefuse() {
        for (const char* attention : {"sliding:window=64,sinks=4", "compressed", "heavy"}) {
            auto engine = load(attention, "f16", false);
            auto out = engine->generate("Hello", greedy(8, DraftKind::lookup));
            QVERIFY(!out.ok());
            QVERIFY2(out.status().message().find("roll") != std::string::npos, out.status().message().c_str());
            QVERIFY2(out.status().message().find(attention) != std::string::npos || std::string(attention).find(':') != std::string::npos,
                     out.status().message().c_str());
            // The engine goes on without speculation.
            QVERIFY(engine->generate("Hello", greedy(4)).ok());
        }
    }

    void badSettingsAreNamed() {
        auto engine = load("full", "f16", false);
        GenerationRequest r = greedy(8, DraftKind::lookup);
        r.speculation.draft_max = 0;
        auto zero = engine->generate("Hello", r);
        QVERIFY(!zero.ok());
        QVERIFY2(zero.status().message().find("draft_max") != std::string::npos, zero.status().message().c_str());
        auto no_draft = engine->generate("Hello", greedy(8, DraftKind::model));
        QVERIFY(!no_draft.ok());
        QVERIFY2(no_draft.status().message().find("draft model") != std::string::npos, no_draft.status().message().c_str());

        EngineConfig c;
        c.model_path = find_default_model();
        c.n_ctx = 256;
        c.draft_model_path = "/nonexistent/draft.gguf";
        auto missing = Engine::load(c);
        QVERIFY(!missing.ok());
        QVERIFY2(missing.status().message().find("draft model") != std::string::npos &&
                     missing.status().message().find("/nonexistent/draft.gguf") != std::string::npos,
                 missing.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestSpeculativeDecoding)
#include "test_speculative_decoding.moc"
