// Continuous batching on the real default model: every request's greedy tokens inside a batch
// (mixed prompt lengths, staggered arrivals, chunked prefill, queueing, preemption, n samples)
// equal its solo run through the plain generation path; metrics and events add up.
#include <QTest>

#include <algorithm>

#include "tests/skip_missing.h"
#include "workbench/engine.h"
#include "tests/greedy_request.h"

using namespace workbench;
using wbtest::greedy;

namespace {

std::unique_ptr<Engine> load(int n_ctx, int n_seq_max, uint64_t budget = 0, const std::string& attention = "full") {
    EngineConfig c;
    c.attention = attention;
    c.model_path = find_default_model();
    c.n_ctx = n_ctx;
    c.n_seq_max = n_seq_max;
    c.kv_budget_bytes = budget;
    auto e = Engine::load(c);
    if (!e.ok()) qFatal("%s", e.status().message().c_str());
    return std::move(e).value();
}

}  // namespace

class TestBatchGeneration : public QObject {
    Q_OBJECT
    std::unique_ptr<Engine> engine_;
    std::vector<std::vector<TokenId>> prompts_;
    std::vector<std::vector<TokenId>> solo_;   // each prompt's greedy tokens, run alone
    static constexpr int kTokens = 20;

    std::vector<BatchRequest> requests(const std::vector<double>& arrivals = {}) const {
        std::vector<BatchRequest> out;
        for (size_t i = 0; i < prompts_.size(); ++i) {
            BatchRequest r;
            r.prompt = prompts_[i];
            r.generation = greedy(kTokens);
            r.arrival_ms = i < arrivals.size() ? arrivals[i] : 0;
            out.push_back(r);
        }
        return out;
    }

    void expect_solo_tokens(const BatchResult& r) {
        QCOMPARE(r.completions.size(), prompts_.size());
        for (const auto& c : r.completions) {
            QVERIFY2(c.ok, c.error.c_str());
            QVERIFY2(c.tokens == solo_[static_cast<size_t>(c.request)],
                     qPrintable(QString("request %1 differs from its solo run").arg(c.request)));
        }
    }

private slots:
    void initTestCase() {
        if (find_default_model().empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        engine_ = load(1024, 8);
        const char* texts[] = {
            "What is the capital of France?",
            "Write a haiku about the sea.",
            "Explain in detail how a paged KV cache works in an inference engine, what a block table is, "
            "why prefix caching saves prefill time, how copy-on-write lets several samples share a prompt, and "
            "what happens when the pool runs out of blocks and a request must be preempted and recomputed later. "
            "Then compare it with a contiguous cache that reserves the whole context for every sequence up front.",
            "Hi",
            "List three prime numbers and say why each is prime.",
            "Once upon a time, in a small village by the mountains, there lived an old clockmaker who",
        };
        for (const char* t : texts) prompts_.push_back(engine_->tokenize(engine_->render_chat({{"user", t}}, true), true, true));
        for (const auto& p : prompts_) {
            engine_->reset();
            auto r = engine_->generate_tokens(p, greedy(kTokens));
            QVERIFY2(r.ok(), r.status().message().c_str());
            solo_.push_back(r->tokens);
        }
        engine_->reset();
    }

    void batched_equals_solo_with_chunks_queueing_and_arrivals() {
        BatchOptions o;
        o.max_batch_tokens = 48;   // the long prompt runs in several chunks beside decodes
        o.max_running = 4;         // two requests queue
        int n_token_events = 0, n_finished = 0, max_running = 0;
        std::vector<std::string> streamed(prompts_.size());
        auto r = engine_->run_batch(requests({0, 0, 3, 8, 20, 40}), o, [&](const RequestEvent& ev) {
            if (ev.kind == RequestEvent::Kind::token) ++n_token_events, streamed[static_cast<size_t>(ev.request)] += ev.text;
            if (ev.kind == RequestEvent::Kind::finished) {
                ++n_finished;
                QCOMPARE(ev.text, streamed[static_cast<size_t>(ev.request)]);
            }
            if (ev.kind == RequestEvent::Kind::step) {
                max_running = std::max(max_running, ev.n_running);
                QVERIFY(ev.n_step_tokens <= o.max_batch_tokens);
            }
        });
        QVERIFY2(r.ok(), r.status().message().c_str());
        expect_solo_tokens(*r);
        QCOMPARE(n_token_events, static_cast<int>(prompts_.size()) * kTokens);
        QCOMPARE(n_finished, static_cast<int>(prompts_.size()));
        QCOMPARE(max_running, 4);
        QCOMPARE(r->metrics.max_running, 4);

        const BatchMetrics& m = r->metrics;
        QCOMPARE(m.n_completed, static_cast<int32_t>(prompts_.size()));
        QCOMPARE(m.n_output_tokens, static_cast<int64_t>(prompts_.size()) * kTokens);
        QVERIFY(m.output_tok_s > 0 && m.total_tok_s > m.output_tok_s && m.request_throughput > 0);
        QCOMPARE(m.itl_ms.n, static_cast<int64_t>(prompts_.size()) * (kTokens - 1));
        for (const LatencyStats* s : {&m.ttft_ms, &m.tpot_ms, &m.itl_ms, &m.e2e_ms})
            QVERIFY(s->p50 <= s->p90 && s->p90 <= s->p99 && s->p50 > 0);
        for (const auto& c : r->completions) {
            const RequestMetrics& rm = c.metrics;
            QCOMPARE(rm.n_output_tokens, kTokens);
            QCOMPARE(static_cast<int>(rm.itl_ms.size()), kTokens - 1);
            QVERIFY(rm.ttft_ms > 0 && rm.ttft_ms <= rm.e2e_ms && rm.queue_ms <= rm.ttft_ms);
            QVERIFY(rm.tpot_ms && *rm.tpot_ms > 0);
        }
        // The last two queued behind max_running: they waited.
        QVERIFY(r->completions[5].metrics.queue_ms > 0);
    }

    // A step-time budget far below any step's cost: prompts that arrive while others stream run
    // one token per step (the floor), and still give the solo tokens.
    void step_time_budget_chunks_prompts_finely() {
        BatchOptions o;
        o.max_step_ms = 0.001;
        o.max_running = 8;
        int max_prompt_tokens_beside_decodes = 0;
        auto r = engine_->run_batch(requests({0, 30, 30, 30, 30, 30}), o, [&](const RequestEvent& ev) {
            if (ev.kind == RequestEvent::Kind::step && ev.n_running > 1) max_prompt_tokens_beside_decodes = std::max(max_prompt_tokens_beside_decodes, ev.n_step_tokens);
        });
        QVERIFY2(r.ok(), r.status().message().c_str());
        expect_solo_tokens(*r);
        // Decodes of the running ones plus the probe chunk at most.
        QVERIFY2(max_prompt_tokens_beside_decodes <= 8 + 16, qPrintable(QString::number(max_prompt_tokens_beside_decodes)));
    }

    void batched_equals_solo_all_at_once() {
        BatchOptions o;
        o.max_batch_tokens = 512;
        o.max_running = 8;
        auto r = engine_->run_batch(requests(), o);
        QVERIFY2(r.ok(), r.status().message().c_str());
        expect_solo_tokens(*r);
    }

    void samples_share_the_prompt_and_match_solo() {
        std::vector<BatchRequest> reqs = requests();
        reqs.resize(2);
        for (auto& q : reqs) q.n_samples = 3;
        auto r = engine_->run_batch(reqs, BatchOptions{});
        QVERIFY2(r.ok(), r.status().message().c_str());
        QCOMPARE(r->completions.size(), size_t{6});
        for (const auto& c : r->completions) {
            QVERIFY(c.ok);
            QVERIFY(c.tokens == solo_[static_cast<size_t>(c.request)]);
            // Samples after the first fork the first's prompt: nothing of it is recomputed.
            if (c.sample > 0) QCOMPARE(c.metrics.n_prompt_cached, c.metrics.n_prompt_tokens);
        }
    }

    void preemption_under_a_small_pool_keeps_outputs() {
        // A pool of 24 blocks (16 tokens each) cannot hold six sequences of 30–120 tokens at once.
        const uint64_t per_token = engine_->model_info().kv_bytes_per_token;
        auto small = load(1024, 1, 24 * 16 * per_token);
        BatchOptions o;
        o.max_batch_tokens = 256;
        o.max_running = 6;
        auto r = small->run_batch(requests(), o);
        QVERIFY2(r.ok(), r.status().message().c_str());
        expect_solo_tokens(*r);
        QVERIFY2(r->metrics.n_preemptions > 0, "the pool was meant to run out");
        int preempted = 0;
        for (const auto& c : r->completions) preempted += c.metrics.n_preemptions;
        QCOMPARE(preempted, r->metrics.n_preemptions);
    }

    // Each variant's sequences in one step read their own streams (sliding's re-rotated sinks,
    // heavy's per-head selections over pooled entries, cross-layer merging's step buffers).
    void variants_batched_equal_solo_data() {
        QTest::addColumn<QString>("attention");
        for (const char* a : {"sliding:window=40,sinks=4", "heavy:block=4,k=4,recent=16,sinks=4", "cross_layer:group=2,merge=mean",
                              "topk:k=32,recent=16"})
            QTest::newRow(a) << QString(a);
    }
    void variants_batched_equal_solo() {
        QFETCH(QString, attention);
        auto e = load(1024, 8, 0, attention.toStdString());
        std::vector<BatchRequest> reqs = requests({0, 0, 2, 4, 6, 8});
        for (auto& q : reqs) q.generation.max_tokens = 12;
        std::vector<std::vector<TokenId>> solo;
        for (const auto& q : reqs) {
            e->reset();
            auto r = e->generate_tokens(q.prompt, q.generation);
            QVERIFY2(r.ok(), r.status().message().c_str());
            solo.push_back(r->tokens);
        }
        BatchOptions o;
        o.max_batch_tokens = 40;
        o.max_running = 5;
        // Merged cross-layer caches let a step's tokens see each other unmerged, so they are
        // invariant to batching but not to how a prompt is chunked: prompts run whole here.
        if (attention.contains("merge")) o.max_batch_tokens = 512, o.max_running = 8;
        auto r = e->run_batch(reqs, o);
        QVERIFY2(r.ok(), r.status().message().c_str());
        for (const auto& c : r->completions) {
            QVERIFY2(c.ok, c.error.c_str());
            QVERIFY2(c.tokens == solo[static_cast<size_t>(c.request)], qPrintable(QString("request %1 differs").arg(c.request)));
        }
    }

    // Latent steps run their sequences one by one; when the pool runs out midway, the ones already
    // run go back (all or nothing), so preemption and recompute still give the solo tokens.
    void latent_batch_with_preemption_equals_solo() {
        const uint64_t block = 16ull * 128 * 2 * 30;   // rank 128 values of f16 per token, 30 layers
        auto e = load(1024, 1, 14 * block, "latent:rank=128");
        std::vector<BatchRequest> reqs = requests();
        reqs.resize(4);
        for (auto& q : reqs) q.generation.max_tokens = 48;   // the running ones outgrow the pool
        std::vector<std::vector<TokenId>> solo;
        for (const auto& q : reqs) {
            e->reset();
            auto r = e->generate_tokens(q.prompt, q.generation);
            QVERIFY2(r.ok(), r.status().message().c_str());
            solo.push_back(r->tokens);
        }
        e->reset();   // the chat's cached conversation would hold part of the small pool
        BatchOptions o;
        o.max_running = 4;
        auto r = e->run_batch(reqs, o);
        QVERIFY2(r.ok(), r.status().message().c_str());
        QVERIFY(r->metrics.n_preemptions > 0);
        for (const auto& c : r->completions) {
            QVERIFY2(c.ok, c.error.c_str());
            QVERIFY2(c.tokens == solo[static_cast<size_t>(c.request)], qPrintable(QString("request %1 differs").arg(c.request)));
        }
    }

    void bad_requests_fail_alone() {
        std::vector<BatchRequest> reqs = requests();
        reqs.resize(2);
        BatchRequest empty;
        empty.generation = greedy(4);
        BatchRequest too_long;
        too_long.prompt.assign(2000, prompts_[0][1]);
        too_long.generation = greedy(4);
        BatchRequest bad_id;
        bad_id.prompt = {1, 2, 1 << 30};
        bad_id.generation = greedy(4);
        reqs.insert(reqs.begin() + 1, {empty, too_long, bad_id});
        std::vector<std::string> errors;
        auto r = engine_->run_batch(reqs, BatchOptions{}, [&](const RequestEvent& ev) {
            if (ev.kind == RequestEvent::Kind::failed) errors.push_back(ev.status.message());
        });
        QVERIFY2(r.ok(), r.status().message().c_str());
        QCOMPARE(errors.size(), size_t{3});
        QVERIFY2(errors[0].find("empty") != std::string::npos, errors[0].c_str());
        QVERIFY2(errors[1].find("2000 tokens") != std::string::npos, errors[1].c_str());
        QVERIFY2(errors[2].find("vocabulary") != std::string::npos, errors[2].c_str());
        QCOMPARE(r->metrics.n_failed, 3);
        QCOMPARE(r->metrics.n_completed, 2);
        QVERIFY(r->completions[0].tokens == solo_[0]);
        QVERIFY(r->completions[4].tokens == solo_[1]);
        BatchOptions bad;
        bad.max_running = 0;
        QCOMPARE(engine_->run_batch(reqs, bad).status().code(), StatusCode::invalid_argument);
    }

    void cancel_ends_every_unfinished_request() {
        std::atomic<bool> cancel{false};
        int tokens = 0;
        auto r = engine_->run_batch(requests(), BatchOptions{}, [&](const RequestEvent& ev) {
            if (ev.kind == RequestEvent::Kind::token && ++tokens == 30) cancel = true;
        }, &cancel);
        QVERIFY2(r.ok(), r.status().message().c_str());
        int cancelled = 0;
        for (const auto& c : r->completions) cancelled += c.stop_reason == StopReason::cancelled;
        QVERIFY(cancelled >= 1);
        QVERIFY(r->metrics.n_output_tokens < static_cast<int64_t>(prompts_.size()) * kTokens);
        // The pool is whole again: a new batch still matches.
        auto again = engine_->run_batch(requests(), BatchOptions{});
        QVERIFY(again.ok());
        expect_solo_tokens(*again);
    }
};

QTEST_APPLESS_MAIN(TestBatchGeneration)
#include "test_batch_generation.moc"
