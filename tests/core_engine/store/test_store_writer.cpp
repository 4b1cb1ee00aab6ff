// The batching writer: it commits when N items are queued, when the interval passes and on
// flush(); a failing item is undone alone while the rest of its batch commits, and its error is
// reported once by flush() and kept by last_error(); a writer and a reader at the same time see
// no errors and no half-written appends.
#include <QTest>

#include <atomic>
#include <thread>

#include "store_test_util.h"

using namespace workbench;
using namespace store_test;

class TestStoreWriter : public QObject {
    Q_OBJECT

    TempFiles files_;
    std::string new_path() { return files_.new_path(); }

private slots:
    void writer_commits_on_interval_count_and_flush() {
        const std::string path = new_path();
        StoreOptions options;
        options.path = path;
        options.flush_interval_ms = 60'000;  // only the count or a flush commits here
        options.flush_max_items = 10;
        auto opened = Store::open(options);
        WB_VERIFY_OK(opened);
        Store& store = **opened;
        auto session_id = store.create_session({});
        WB_VERIFY_OK(session_id);
        auto run_id = store.begin_run(make_run(*session_id, 0, 1, 1.0));
        WB_VERIFY_OK(run_id);
        // Below the count: queued, not yet visible to readers.
        for (int i = 0; i < 5; ++i) WB_VERIFY_OK(store.append_samples(*run_id, make_samples(i, 1)));
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        QCOMPARE(store.load_samples(*run_id)->size(), size_t(0));
        // Reaching the count commits without a flush.
        for (int i = 5; i < 10; ++i) WB_VERIFY_OK(store.append_samples(*run_id, make_samples(i, 1)));
        QVERIFY(wait_until([&] { return store.load_samples(*run_id)->size() == 10; }, 5000));
        WB_VERIFY_OK(store.append_samples(*run_id, make_samples(10, 1)));
        WB_VERIFY_OK(store.flush());
        QCOMPARE(store.load_samples(*run_id)->size(), size_t(11));
        // The interval: a short one commits by itself.
        options.path = new_path();
        options.flush_interval_ms = 30;
        options.flush_max_items = 1000;
        auto timed = Store::open(options);
        WB_VERIFY_OK(timed);
        auto timed_session = (*timed)->create_session({});
        WB_VERIFY_OK(timed_session);
        WB_VERIFY_OK((*timed)->add_message({0, *timed_session, 0, 0, "user", "tick", 0}));
        QVERIFY(wait_until([&] { return (*timed)->load_messages(*timed_session)->size() == 1; }, 5000));
    }

    void failed_item_leaves_the_rest_of_its_batch() {
        auto store = open(new_path(), 60'000);
        QVERIFY(store);
        auto session_id = store->create_session({});
        WB_VERIFY_OK(session_id);
        WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "user", "first", 0}));
        WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "narrator", "bad role", 0}));
        WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "assistant", "second", 0}));
        RunRecord missing;
        missing.id = 31337;
        WB_VERIFY_OK(store->finish_run(missing));
        const Status flushed = store->flush();
        QVERIFY(!flushed.ok());
        QVERIFY2(q(flushed.message()).contains("CHECK constraint"), flushed.message().c_str());
        QVERIFY2(q(flushed.message()).contains(q("session " + std::to_string(*session_id))), flushed.message().c_str());
        const Status last = store->last_error();
        QCOMPARE(last.code(), StatusCode::not_found);  // the latest failure: the missing run
        QVERIFY2(q(last.message()).contains("no run 31337"), last.message().c_str());
        auto messages = store->load_messages(*session_id);
        QCOMPARE(messages->size(), size_t(2));
        QCOMPARE(q((*messages)[1].text), QString("second"));
        QCOMPARE((*messages)[1].seq, 1);
        WB_VERIFY_OK(store->flush());  // reported once
        // A write of several rows is undone whole: no comparison without its configurations.
        ComparisonRecord comparison;
        comparison.name = "dangling";
        comparison.configuration_ids = {424242};
        auto refused = store->save_comparison(comparison);
        QVERIFY(!refused.ok());
        QVERIFY2(q(refused.status().message()).contains("FOREIGN KEY"), refused.status().message().c_str());
        QCOMPARE(store->list_comparisons()->size(), size_t(0));
        store->clear_error();
        WB_VERIFY_OK(store->last_error());
    }

    void concurrent_writer_and_reader() {
        auto store = open(new_path(), 10);
        QVERIFY(store);
        auto session_id = store->create_session({});
        WB_VERIFY_OK(session_id);
        auto run_id = store->begin_run(make_run(*session_id, 0, 1, 1.0));
        WB_VERIFY_OK(run_id);
        constexpr int kBatches = 200, kPerBatch = 25;
        std::atomic<bool> writing{true};
        std::atomic<int> write_errors{0};
        std::thread writer([&] {
            for (int b = 0; b < kBatches; ++b) {
                if (!store->append_samples(*run_id, make_samples(b * kPerBatch, kPerBatch)).ok()) ++write_errors;
                if (b % 50 == 49 && !store->flush().ok()) ++write_errors;
            }
            if (!store->flush().ok()) ++write_errors;
            writing = false;
        });
        int n_reads = 0, read_errors = 0, torn = 0, went_back = 0;
        size_t last_count = 0;
        while (writing || n_reads < 5) {
            auto samples = store->load_samples(*run_id);
            auto sessions = store->list_sessions();
            ++n_reads;
            if (!samples.ok() || !sessions.ok()) {
                ++read_errors;
                continue;
            }
            if (samples->size() % kPerBatch != 0) ++torn;  // an append is one savepoint: all or none
            if (samples->size() < last_count) ++went_back;
            last_count = samples->size();
            if (sessions->size() != 1) ++read_errors;
        }
        writer.join();
        qInfo("%d reads alongside %d appends", n_reads, kBatches);
        QCOMPARE(write_errors.load(), 0);
        QCOMPARE(read_errors, 0);
        QCOMPARE(torn, 0);
        QCOMPARE(went_back, 0);
        QVERIFY(n_reads >= 5);
        QCOMPARE(store->load_samples(*run_id)->size(), size_t(kBatches * kPerBatch));
        WB_VERIFY_OK(store->last_error());
    }

};

QTEST_APPLESS_MAIN(TestStoreWriter)
#include "test_store_writer.moc"
