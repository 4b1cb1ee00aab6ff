// Per-layer attention and the public KV prediction (workbench/attention.h): the layout grammar
// and its errors; on the real default model, a policy split over two groups of layers gives the
// single policy's exact logits, tokens and batch samples (the groups' own block tables, steps,
// forks and prefix reuse are invisible in the output); a mixed layout changes only its layers;
// and predict_kv gives the bytes the engine then measures, for every variant and some mixes.
#include <QFile>
#include <QTest>

#include <cmath>
#include <cstring>

#include "attention/paged_kv.h"
#include "tests/skip_missing.h"
#include "workbench/attention.h"
#include "workbench/engine.h"

using namespace workbench;

namespace {

constexpr size_t kPromptTokens = 300;
constexpr int kGenerated = 24;

}  // namespace

class TestAttentionLayout : public QObject {
    Q_OBJECT
    std::string model_;
    std::vector<TokenId> prompt_;
    KvGeometry geometry_;

    std::unique_ptr<Engine> load(const std::string& attention, const std::string& kv_types = "f16") {
        EngineConfig c;
        c.model_path = model_;
        c.n_ctx = 1024;
        c.n_threads = 2;
        c.n_seq_max = 4;
        c.attention = attention;
        c.kv_types = kv_types;
        auto e = Engine::load(c);
        if (!e.ok()) qFatal("%s: %s", attention.c_str(), e.status().message().c_str());
        return std::move(*e);
    }

    GenerationRequest greedy() const {
        GenerationRequest req;
        req.max_tokens = kGenerated;
        req.ignore_eos = true;
        req.sampling.temperature = 0;
        return req;
    }

    struct Outputs {
        std::vector<float> logits;                 // every prompt position
        std::vector<TokenId> greedy;
        std::vector<std::vector<TokenId>> batch;   // two prompts, two samples of the first
        std::vector<TokenId> second_turn;          // a follow-up that keeps the first turn's cache
    };

    Outputs outputs(const std::string& attention) {
        auto e = load(attention);
        Outputs o;
        auto logits = e->logits_all(prompt_);
        if (!logits.ok()) qFatal("%s", logits.status().message().c_str());
        o.logits = std::move(*logits);
        e->reset();
        auto g = e->generate_tokens(prompt_, greedy());
        if (!g.ok()) qFatal("%s", g.status().message().c_str());
        o.greedy = g->tokens;
        std::vector<TokenId> longer = prompt_;
        longer.insert(longer.end(), g->tokens.begin(), g->tokens.end());
        longer.insert(longer.end(), prompt_.begin() + 10, prompt_.begin() + 30);
        auto again = e->generate_tokens(longer, greedy());
        if (!again.ok()) qFatal("%s", again.status().message().c_str());
        o.second_turn = again->tokens;
        GenerationRequest sampled = greedy();
        sampled.sampling.temperature = 0.8f;
        sampled.sampling.seed = 7;
        std::vector<BatchRequest> requests{{prompt_, sampled, 2, 0},
                                           {std::vector<TokenId>(prompt_.begin(), prompt_.begin() + 120), greedy(), 1, 0}};
        auto b = e->run_batch(requests, BatchOptions{});
        if (!b.ok()) qFatal("%s", b.status().message().c_str());
        for (const auto& c : b->completions) o.batch.push_back(c.tokens);
        return o;
    }

private slots:
    void initTestCase() {
        model_ = find_default_model();
        if (model_.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QFile f(QStringLiteral(WB_EVAL_TEXT));
        QVERIFY2(f.open(QIODevice::ReadOnly), "resources/eval text missing");
        auto e = load("full");
        prompt_ = e->tokenize(f.readAll().toStdString(), true, false);
        QVERIFY(prompt_.size() > kPromptTokens);
        prompt_.resize(kPromptTokens);
        const ModelInfo& info = e->model_info();
        geometry_ = {info.n_layer, info.n_head_kv, info.head_dim, info.n_head, 16, {}};
    }

    void grammar_round_trips() {
        auto l = parse_attention_layout("sliding:window=512,sinks=4,layers=0-9+20-29; topk:k=256");
        QVERIFY2(l.ok(), l.status().message().c_str());
        QCOMPARE(l->size(), size_t{2});
        QCOMPARE((*l)[0].layers.size(), size_t{2});
        QCOMPARE((*l)[0].layers[1], (std::pair<int32_t, int32_t>{20, 29}));
        QVERIFY((*l)[1].layers.empty());
        const std::string name = attention_layout_name(*l);
        QCOMPARE(name, std::string("sliding:window=512,sinks=4,layers=0-9+20-29;topk:k=256,recent=64"));
        auto again = parse_attention_layout(name);
        QVERIFY(again.ok());
        QCOMPARE(attention_layout_name(*again), name);
        QCOMPARE(attention_layout_name(*parse_attention_layout("full:layers=3")), std::string("full:layers=3"));
        // A single spec keeps the name the session database keys on.
        QCOMPARE(attention_layout_name(*parse_attention_layout("sliding")), std::string("sliding:window=1020,sinks=4"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("cross_layer:layers=2-9")),
                 std::string("cross_layer:group=2,layers=2-9,merge=none"));
        // topk's select=block is left out of the name (the names stored before it existed); token is named.
        QCOMPARE(attention_layout_name(*parse_attention_layout("topk:k=64,select=block")), std::string("topk:k=64,recent=64"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("topk:select=token,k=64")), std::string("topk:k=64,recent=64,select=token"));
        QVERIFY(parse_attention_spec("topk:select=token")->select == TopkSelect::token);
        // Pooling's defaults (mean, pooled reads, around 0) are left out of the name; others are named.
        QCOMPARE(attention_layout_name(*parse_attention_layout("heavy:pool=mean,read=pooled")), std::string("heavy:block=16,k=32,recent=64"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("heavy:around=4,read=tokens,pool=weighted")),
                 std::string("heavy:block=16,k=32,recent=64,pool=weighted,read=tokens,around=4"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("compressed:pool=max")), std::string("compressed:block=4,recent=256,pool=max"));
        // TOVA's and H2O's decoding=evict (the default) is left out of the name; grow is named.
        QCOMPARE(attention_layout_name(*parse_attention_layout("tova:keep=0.25,decoding=evict")), std::string("tova:keep=0.25"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("h2o:decoding=grow,keep=0.5")), std::string("h2o:keep=0.5,decoding=grow"));
        QVERIFY(parse_attention_spec("h2o:decoding=grow")->decoding == PressDecoding::grow);
        // Latent's balance=energy (the default) is left out of the name; none is named.
        QCOMPARE(attention_layout_name(*parse_attention_layout("latent:rank=192,balance=energy")), std::string("latent:rank=192"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("latent:balance=none,rank=192")), std::string("latent:rank=192,balance=none"));
        QVERIFY(parse_attention_spec("latent:balance=none")->balance == LatentBalance::none);
        // The forms and picks name themselves only when not the defaults (rows recorded before them keep their keys).
        QCOMPARE(attention_layout_name(*parse_attention_layout("latent:rank=192,form=rebuild,pick=norm,heads=joint")), std::string("latent:rank=192"));
        QCOMPARE(attention_layout_name(*parse_attention_layout("latent:heads=each,pick=frequency,form=absorbed,rank=96,rope=16")),
                 std::string("latent:rank=96,rope=16,form=absorbed,pick=frequency,heads=each"));
        QVERIFY(!parse_attention_spec("latent:form=folded").ok());
        // Every variant's defaults are what its bare name parses to.
        for (const AttentionVariant& v : attention_variants()) {
            auto bare = parse_attention_spec(v.name);
            QVERIFY(bare.ok());
            QCOMPARE(attention_spec_name(*bare), attention_spec_name(default_attention_spec(v.kind)));
            for (const AttentionParameter& p : v.parameters) {
                QVERIFY(!p.help.empty() && !p.label.empty());
                if (p.type == AttentionParameter::Type::integer) QVERIFY(p.min_value <= p.default_value && p.default_value <= p.max_value);
            }
        }
    }

    // What a sequence under each policy can do, as the engine and speculative decoding ask it;
    // a layout can do what all its groups can.
    void capabilities_of_each_policy() {
        struct Row { const char* spec; bool fork, adopt, truncate, unbounded; };
        for (const Row& r : {Row{"full", true, true, true, false}, Row{"sliding", false, false, false, true},
                             Row{"cross_layer", true, true, true, false}, Row{"cross_layer:merge=mean", true, false, false, false},
                             Row{"topk", true, true, true, false}, Row{"compressed", false, false, false, false},
                             Row{"heavy", false, false, false, false}, Row{"latent", false, true, true, false}}) {
            auto spec = parse_attention_spec(r.spec);
            QVERIFY(spec.ok());
            const auto policy = make_attention_policy(*spec);
            QVERIFY2(policy->can_fork() == r.fork && policy->can_adopt_prefix() == r.adopt &&
                         policy->can_truncate() == r.truncate && policy->unbounded_context() == r.unbounded, r.spec);
        }
        PagedKvShape shape;
        shape.n_layers = 4, shape.n_kv_heads = 1, shape.n_head = 1, shape.head_dim = 32;
        auto mixed = PagedKv::create(*parse_attention_layout("sliding:layers=0-1;topk"), KvTypes{}, shape, 0, 64);
        QVERIFY2(mixed.ok(), mixed.ok() ? "" : mixed.status().message().c_str());
        QVERIFY(!(*mixed)->can_fork() && !(*mixed)->can_truncate() && !(*mixed)->unbounded_context());
        QCOMPARE((*mixed)->groups().size(), size_t{2});
        auto split = PagedKv::create(*parse_attention_layout("sliding:layers=0-1;sliding"), KvTypes{}, shape, 0, 64);
        QVERIFY(split.ok() && (*split)->unbounded_context());
    }

    void grammar_errors_name_the_fault_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("named");
        QTest::newRow("two rests") << "full;full" << "only one term";
        QTest::newRow("latent mixed") << "latent;full:layers=0-3" << "latent runs on every layer";
        QTest::newRow("latent with layers") << "latent:layers=0-3" << "latent runs on every layer";
        QTest::newRow("reversed range") << "sliding:layers=9-3" << "layers '9-3'";
        QTest::newRow("not a layer") << "sliding:layers=x" << "layers 'x'";
        QTest::newRow("empty term") << "full;;topk" << "empty term";
        QTest::newRow("cross_layer as rest") << "cross_layer:group=2;full:layers=0-3" << "names its range";
        QTest::newRow("bad parameter") << "sliding:window=0,layers=1-2" << "window must be at least 1";
        QTest::newRow("bad choice") << "topk:select=tokens" << "select 'tokens': expected block or token";
        QTest::newRow("bad pool") << "compressed:pool=median" << "pool 'median'";
        QTest::newRow("keep above one") << "snapkv:keep=2" << "keep must be in [0.001, 1], got 2";
        QTest::newRow("keep zero") << "knorm:keep=0,layers=0-3" << "keep must be in [0.001, 1], got 0";
        QTest::newRow("keep not a number") << "tova:keep=half" << "keep 'half' is not a number";
        QTest::newRow("window on tova") << "tova:window=8" << "'window' is not a parameter of tova; expected keep";
        QTest::newRow("decoding on knorm") << "knorm:decoding=grow" << "'decoding' is not a parameter of knorm";
        QTest::newRow("bad decoding") << "h2o:decoding=drop" << "decoding 'drop': expected evict or grow";
    }
    void grammar_errors_name_the_fault() {
        QFETCH(QString, spec);
        QFETCH(QString, named);
        auto l = parse_attention_layout(spec.toStdString());
        QVERIFY(!l.ok());
        QCOMPARE(l.status().code(), StatusCode::invalid_argument);
        QVERIFY2(QString::fromStdString(l.status().message()).contains(named), l.status().message().c_str());
    }

    void load_refuses_layers_the_model_lacks() {
        for (auto [spec, named] : {std::pair{"sliding:layers=0-40", "outside this model's 0-29"},
                                   std::pair{"heavy:around=4", "it needs read=tokens"},
                                   std::pair{"full:layers=0-5;sliding:layers=5-9", "layer 5 is named by two terms"},
                                   std::pair{"sliding:layers=0-29;topk", "is left no layer"}}) {
            EngineConfig c;
            c.model_path = model_;
            c.attention = spec;
            auto e = Engine::load(c);
            QVERIFY(!e.ok());
            QVERIFY2(e.status().message().find(named) != std::string::npos, e.status().message().c_str());
            auto p = predict_kv(*parse_attention_layout(spec), "f16", geometry_, 100);
            QVERIFY(!p.ok());
            QCOMPARE(p.status().message(), e.status().message());
        }
    }

    // One policy split over two groups of layers: the same arithmetic on every layer, through
    // separate block tables, steps, forks and prefix reuse.
    void split_policy_equals_single_policy_data() {
        QTest::addColumn<QString>("single");
        QTest::addColumn<QString>("split");
        QTest::newRow("full") << "full" << "full:layers=0-9;full";
        QTest::newRow("sliding") << "sliding:window=64,sinks=4" << "sliding:window=64,sinks=4,layers=0-14;sliding:window=64,sinks=4";
        QTest::newRow("topk") << "topk:k=64,recent=16" << "topk:k=64,recent=16,layers=3+7-29;topk:k=64,recent=16,layers=0-2+4-6";
        QTest::newRow("compressed") << "compressed:block=4,recent=32,sinks=4"
                                    << "compressed:block=4,recent=32,sinks=4,layers=0-19;compressed:block=4,recent=32,sinks=4";
    }
    void split_policy_equals_single_policy() {
        QFETCH(QString, single);
        QFETCH(QString, split);
        const Outputs a = outputs(single.toStdString()), b = outputs(split.toStdString());
        QCOMPARE(a.logits.size(), b.logits.size());
        QVERIFY(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * sizeof(float)) == 0);
        QCOMPARE(b.greedy, a.greedy);
        QCOMPARE(b.second_turn, a.second_turn);
        QCOMPARE(b.batch, a.batch);
    }

    void mixed_layout_changes_only_its_layers() {
        const std::string mixed = "sliding:window=64,sinks=4,layers=0-14";
        auto full = load("full"), sliding = load("sliding:window=64,sinks=4"), part = load(mixed);
        QVERIFY(part->model_info().context_bounded);  // the full layers keep every token
        QVERIFY(!sliding->model_info().context_bounded);
        QCOMPARE(part->model_info().attention, mixed);
        std::vector<std::vector<float>> logits;
        for (Engine* e : {full.get(), sliding.get(), part.get()}) logits.push_back(*e->logits_all(prompt_));
        const size_t per = logits[0].size() / prompt_.size();
        // Within the window every layer sees every token: all three agree bit for bit there.
        QVERIFY(std::memcmp(logits[2].data(), logits[0].data(), 64 * per * sizeof(float)) == 0);
        QVERIFY(logits[2] != logits[0]);
        QVERIFY(logits[2] != logits[1]);
        for (Engine* e : {full.get(), part.get()}) {
            e->reset();
            QVERIFY(e->generate_tokens(prompt_, greedy()).ok());
        }
        const KvUsageReport f = full->kv_usage(), p = part->kv_usage();
        QCOMPARE(p.n_tokens, f.n_tokens);
        for (size_t il = 0; il < 30; ++il) {
            if (il < 15) QVERIFY2(p.layer_bytes[il] < f.layer_bytes[il] / 3, qPrintable(QString::number(il)));
            else QCOMPARE(p.layer_bytes[il], f.layer_bytes[il]);
        }
    }

    // A budget too small for a request names one that holds the whole context, for the cache as
    // a whole (every group's blocks, index data included, one step in flight): it then does.
    void budget_advice_covers_every_group_data() {
        QTest::addColumn<QString>("attention");
        for (const char* a : {"full", "topk:k=64,recent=16", "sliding:window=64,sinks=4,layers=0-14",
                              "topk:k=64,recent=16,layers=0-9;compressed:block=4,recent=32,sinks=4"})
            QTest::newRow(a) << QString(a);
    }
    void budget_advice_covers_every_group() {
        QFETCH(QString, attention);
        auto with_budget = [&](uint64_t bytes) {
            EngineConfig c;
            c.model_path = model_;
            c.n_ctx = 1024;
            c.n_threads = 2;
            c.attention = attention.toStdString();
            c.kv_budget_bytes = bytes;
            auto e = Engine::load(c);
            if (!e.ok()) qFatal("%s", e.status().message().c_str());
            return std::move(*e);
        };
        auto small = with_budget(3u << 20);
        auto failed = small->generate_tokens(prompt_, greedy());
        QVERIFY(!failed.ok());
        const std::string m = failed.status().message();
        const size_t at = m.find("raise the KV budget (--kv-budget) to at least ");
        QVERIFY2(at != std::string::npos && m.find("what the whole 1024-token context needs") != std::string::npos, m.c_str());
        const double advised_mib = std::stod(m.substr(at + 46));
        // The advice holds a conversation that fills the context.
        auto whole = with_budget(static_cast<uint64_t>(advised_mib * (1 << 20)));
        GenerationRequest fill = greedy();
        fill.max_tokens = 1024 - static_cast<int>(kPromptTokens);
        auto filled = whole->generate_tokens(prompt_, fill);
        QVERIFY2(filled.ok(), filled.ok() ? "" : filled.status().message().c_str());
        QCOMPARE(filled->tokens.size(), static_cast<size_t>(fill.max_tokens));
    }

    // The bytes the GUI predicts before a load are the bytes the engine then holds and reads.
    void prediction_equals_measured_bytes_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        for (const char* kv : {"f16", "k=q8_0,v=q4_0"}) {
            for (const char* a : {"full", "sliding:window=64,sinks=4", "sliding:window=1020,sinks=4", "cross_layer:group=2",
                                  "cross_layer:group=3,layers=4-20,merge=mean", "topk:k=64,recent=16", "topk", "topk:k=64,recent=16,select=token",
                                  "compressed:block=4,recent=32,sinks=4", "compressed", "heavy:block=4,k=8,recent=32", "heavy",
                                  "compressed:block=4,recent=32,pool=weighted", "heavy:block=4,k=8,recent=32,read=tokens",
                                  "latent:rank=64", "latent:rank=144,rope=8", "sliding:window=64,sinks=4,layers=0-14",
                                  "topk:k=64,recent=16,layers=0-9;sliding:window=48,sinks=4,layers=20-29",
                                  "compressed:block=4,recent=32,layers=10-19;cross_layer:group=2,layers=20-29;heavy:block=4,k=8,recent=16"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(a, kv))) << QString(a) << QString(kv);
        }
        // The absorbed latent's rows hold their values (K and V take one type).
        for (const char* kv : {"f16", "q8_0"})
            for (const char* a : {"latent:rank=128,rope=16,form=absorbed,pick=frequency", "latent:rank=96,rope=16,form=absorbed,heads=each"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(a, kv))) << QString(a) << QString(kv);
        // A recent window in f16 (its ring held beside the blocks) under policies that read their last tokens.
        for (const char* a : {"full", "sliding:window=64,sinks=4", "compressed:block=4,recent=32,sinks=4"})
            QTest::newRow(qPrintable(QStringLiteral("%1 q4_0,recent=32").arg(a))) << QString(a) << QStringLiteral("q4_0,recent=32");
    }
    void prediction_equals_measured_bytes() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        auto e = load(attention.toStdString(), kv.toStdString());
        QVERIFY(e->generate_tokens(prompt_, greedy()).ok());
        const KvUsageReport u = e->kv_usage();
        QCOMPARE(u.n_tokens, static_cast<int32_t>(kPromptTokens) + kGenerated - 1);
        auto layout = parse_attention_layout(attention.toStdString());
        QVERIFY(layout.ok());
        auto p = predict_kv(*layout, kv.toStdString(), geometry_, u.n_tokens);
        QVERIFY2(p.ok(), p.status().message().c_str());
        QCOMPARE(p->bytes_held, u.bytes_in_use);
        QCOMPARE(p->bytes_read, u.bytes_read_last_step);
        QCOMPARE(p->bytes_full, u.bytes_full);
        QVERIFY(p->bytes_full_read >= p->bytes_read || attention.startsWith("topk"));
    }

    // A press's formula is one prompt pressed at its end: what the cache holds once the prompt's
    // last step is committed (the first token sampled, none fed back yet), for every budget rule.
    void press_prediction_equals_measured_bytes_data() {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("kv");
        for (const char* kv : {"f16", "q4_0"})
            for (const char* a : {"snapkv:keep=0.25", "snapkv:keep=1", "adakv:keep=0.3,window=16", "tova:keep=0.5", "knorm:keep=0.1",
                                  "pyramidkv:keep=0.25,window=8", "knorm:keep=0.2,layers=0-9", "h2o:keep=0.3"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(a, kv))) << QString(a) << QString(kv);
    }
    void press_prediction_equals_measured_bytes() {
        QFETCH(QString, attention);
        QFETCH(QString, kv);
        auto e = load(attention.toStdString(), kv.toStdString());
        GenerationRequest one = greedy();
        one.max_tokens = 1;
        QVERIFY(e->generate_tokens(prompt_, one).ok());
        const KvUsageReport u = e->kv_usage();
        QCOMPARE(u.n_tokens, static_cast<int32_t>(kPromptTokens));
        auto p = predict_kv(*parse_attention_layout(attention.toStdString()), kv.toStdString(), geometry_, u.n_tokens);
        QVERIFY2(p.ok(), p.status().message().c_str());
        QCOMPARE(p->bytes_held, u.bytes_in_use);
        QCOMPARE(p->bytes_full, u.bytes_full);
        if (!attention.startsWith("snapkv:keep=1")) QVERIFY(u.bytes_in_use < u.bytes_full);
    }
};

QTEST_GUILESS_MAIN(TestAttentionLayout)
#include "test_attention_layout.moc"
