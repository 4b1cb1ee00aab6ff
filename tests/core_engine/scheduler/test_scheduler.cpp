// The continuous-batching policy as pure logic: step plans down to request ids and token counts.
#include <QTest>

#include "scheduler/scheduler.h"

using namespace workbench;

namespace {

// "id:n" or "id:n*" (* = completes the known tokens) per item, for compact expectations.
QString show(const std::vector<StepItem>& items) {
    QStringList parts;
    for (const StepItem& it : items) parts << QString("%1:%2%3").arg(it.request).arg(it.n_tokens).arg(it.completes ? "*" : "");
    return parts.join(' ');
}

// Runs a plan as the engine would: absorb, then a token for each completing item.
void run(Scheduler& s, const std::vector<StepItem>& items) {
    s.absorb(items);
    for (const StepItem& it : items)
        if (it.completes) s.append_token(it.request);
}

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT
private slots:
    void prompts_are_chunked_under_the_budget() {
        Scheduler s({.max_batch_tokens = 8, .max_running = 4});
        QCOMPARE(s.add(20), 0);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:8"));
        run(s, p);
        p = s.plan();
        QCOMPARE(show(p), QString("0:8"));
        run(s, p);
        p = s.plan();
        QCOMPARE(show(p), QString("0:4*"));
        run(s, p);
        QCOMPARE(s.n_cached(0), 20);
        QCOMPARE(s.n_known(0), 21);
        QCOMPARE(show(s.plan()), QString("0:1*"));  // now decoding
    }

    void decodes_go_first_then_chunks_then_admissions() {
        Scheduler s({.max_batch_tokens = 8, .max_running = 4});
        s.add(3);
        s.add(3);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:3* 1:3*"));
        run(s, p);
        s.add(12);   // a long prompt arrives while two stream
        p = s.plan();
        QCOMPARE(show(p), QString("0:1* 1:1* 2:6"));
        run(s, p);
        p = s.plan();
        QCOMPARE(show(p), QString("0:1* 1:1* 2:6*"));
        run(s, p);
        QCOMPARE(show(s.plan()), QString("0:1* 1:1* 2:1*"));
    }

    void admission_respects_max_running_and_fcfs() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 2});
        for (int i = 0; i < 4; ++i) s.add(2);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:2* 1:2*"));
        QCOMPARE(s.n_waiting(), 2);
        run(s, p);
        s.finish(0);
        p = s.plan();
        QCOMPARE(show(p), QString("1:1* 2:2*"));
        QCOMPARE(s.state(3), RequestState::waiting);
    }

    void admit_callback_reports_cached_tokens_or_blocks() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 8});
        s.add(40);
        s.add(40);
        s.add(40);
        int calls = 0;
        auto p = s.plan([&](int32_t id, int32_t n_first) {
            ++calls;
            if (id == 0) { [&] { QCOMPARE(n_first, 40); }(); return 32; }  // 32 tokens found cached
            if (id == 1) return 0;
            return -1;                                                   // no room: 2 and later wait
        });
        QCOMPARE(show(p), QString("0:8* 1:40*"));
        QCOMPARE(calls, 3);
        QCOMPARE(s.n_cached(0), 32);
        QCOMPARE(s.state(2), RequestState::waiting);
        // A cache hit never covers the last token: something must run to produce logits.
        Scheduler t({.max_batch_tokens = 64, .max_running = 8});
        t.add(16);
        QCOMPARE(show(t.plan([](int32_t, int32_t) { return 16; })), QString("0:1*"));
    }

    void preemption_takes_the_youngest_and_requeues_it_first() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 8});
        s.add(4);
        s.add(4);
        s.add(4);
        auto p = s.plan();
        run(s, p);
        s.add(4);  // 3 waits behind the preempted one
        QCOMPARE(s.preempt_youngest(), 2);
        QCOMPARE(s.state(2), RequestState::waiting);
        QCOMPARE(s.n_cached(2), 0);
        QCOMPARE(s.n_known(2), 5);  // prompt + its sampled token run again
        QCOMPARE(s.n_preemptions(2), 1);
        // The step right after a preemption admits nobody.
        p = s.plan();
        QCOMPARE(show(p), QString("0:1* 1:1*"));
        run(s, p);
        p = s.plan();
        QCOMPARE(show(p), QString("0:1* 1:1* 2:5* 3:4*"));
        // Alone, nothing can be preempted.
        Scheduler one({});
        one.add(3);
        one.plan();
        QCOMPARE(one.preempt_youngest(), -1);
    }

    void benchmark_phases_hold_decodes_until_prompts_ran() {
        Scheduler s({.max_batch_tokens = 6, .max_running = 4, .prefill_before_decode = true});
        s.add(4);
        s.add(4);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:4* 1:2"));
        run(s, p);
        QCOMPARE(show(s.plan()), QString("1:2*"));  // 0 waits for 1's prompt
        run(s, s.plan());
        QCOMPARE(show(s.plan()), QString("0:1* 1:1*"));
    }

    void forked_samples_start_running_with_their_prompt_cached() {
        Scheduler s({.max_batch_tokens = 16, .max_running = 4});
        s.add(5);
        run(s, s.plan());
        const int32_t child = s.add_running(5);
        QCOMPARE(s.state(child), RequestState::running);
        QCOMPARE(show(s.plan()), QString("0:1*"));  // the child waits for its first token
        s.append_token(child);
        QCOMPARE(show(s.plan()), QString("0:1* 1:1*"));
    }

    void chunks_are_capped_per_sequence() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 4, .max_chunk_tokens = 20});
        s.add(50);
        s.add(30);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:20 1:20"));
        run(s, p);
        QCOMPARE(show(s.plan()), QString("0:20 1:10*"));
    }

    void prompt_tokens_cap_leaves_decodes_alone() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 4});
        s.add(3);
        run(s, s.plan());
        s.add(40);
        QCOMPARE(s.n_decoding(), 1);
        auto p = s.plan({}, 5);
        QCOMPARE(show(p), QString("0:1* 1:5"));
        run(s, p);
        QCOMPARE(show(s.plan({}, 0)), QString("0:1* 1:1"));   // at least one prompt token per step
        QCOMPARE(show(s.plan({}, -1)), QString("0:1* 1:35*"));  // (the plan above was not run)
    }

    void benchmark_phases_decode_when_a_waiting_prompt_cannot_be_admitted() {
        Scheduler s({.max_batch_tokens = 16, .max_running = 4, .prefill_before_decode = true});
        s.add(4);
        run(s, s.plan());
        s.add(4);   // waits, and the pool refuses it: the running one must still decode
        QCOMPARE(show(s.plan([](int32_t, int32_t) { return -1; })), QString("0:1*"));
    }

    void a_preemption_does_not_block_admission_once_nothing_runs() {
        Scheduler s({.max_batch_tokens = 64, .max_running = 4});
        s.add(4);
        s.add(4);
        s.plan();
        QCOMPARE(s.preempt_youngest(), 1);
        s.finish(0);   // the older one failed alone: nothing runs, nothing can free room
        QCOMPARE(show(s.plan()), QString("1:4*"));
    }

    void forked_samples_beyond_max_running_all_decode() {
        Scheduler s({.max_batch_tokens = 2, .max_running = 2});
        s.add(3);
        run(s, s.plan());
        for (int i = 0; i < 4; ++i) s.append_token(s.add_running(3));
        QCOMPARE(show(s.plan()), QString("0:1* 1:1* 2:1* 3:1* 4:1*"));
    }

    void budget_never_starves_running_decodes() {
        Scheduler s({.max_batch_tokens = 2, .max_running = 4});  // raised to 4
        QCOMPARE(s.config().max_batch_tokens, 4);
        for (int i = 0; i < 4; ++i) s.add(1);
        auto p = s.plan();
        QCOMPARE(show(p), QString("0:1* 1:1* 2:1* 3:1*"));
        run(s, p);
        s.finish(1);
        QCOMPARE(show(s.plan()), QString("0:1* 2:1* 3:1*"));
    }
};

QTEST_APPLESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
