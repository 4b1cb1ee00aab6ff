// The thread pool: every chunk runs exactly once per run(), across back-to-back runs with varying
// chunk counts and thread counts (the spin/sleep hand-off between jobs is where races hide), and
// parallel_for covers [0, n) exactly.
#include <QTest>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "kernels/cpu/thread_pool.h"

using namespace workbench;

class TestThreadPool : public QObject {
    Q_OBJECT
private slots:
    void every_chunk_once_across_many_runs() {
        for (int n_threads : {1, 2, 3, 5}) {
            ThreadPool pool(n_threads);
            QCOMPARE(pool.n_threads(), n_threads);
            std::mt19937 rng(static_cast<unsigned>(n_threads));
            std::vector<std::atomic<int>> hits(257);
            for (int run = 0; run < 3000; ++run) {
                const int64_t n = 1 + static_cast<int64_t>(rng() % 257);
                for (int64_t i = 0; i < n; ++i) hits[static_cast<size_t>(i)] = 0;
                pool.run(n, [&](int64_t c) { hits[static_cast<size_t>(c)].fetch_add(1); });
                for (int64_t i = 0; i < n; ++i)
                    if (hits[static_cast<size_t>(i)] != 1)
                        QFAIL(qPrintable(QString("threads %1, run %2: chunk %3 ran %4 times").arg(n_threads).arg(run).arg(i).arg(hits[static_cast<size_t>(i)].load())));
            }
        }
    }

    void runs_after_workers_fell_asleep() {
        ThreadPool pool(3);
        std::atomic<int> total{0};
        for (int round = 0; round < 5; ++round) {
            // Longer than the workers' spin, so the next job has to wake them from sleep.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            pool.run(64, [&](int64_t) { total.fetch_add(1); });
        }
        QCOMPARE(total.load(), 5 * 64);
    }

    // Gaps around the workers' spin time, so jobs open while a worker is between giving up its
    // spin and waiting: run() skips the wake-up when it sees no sleeper, and a missed one would
    // hang here (ctest's timeout) or leave chunks undone.
    void no_lost_wakeups_at_the_spin_edge() {
        ThreadPool pool(3);
        std::mt19937 rng(7);
        std::atomic<int> total{0};
        const auto start = std::chrono::steady_clock::now();
        int runs = 0;
        for (; runs < 400 && std::chrono::steady_clock::now() - start < std::chrono::seconds(4); ++runs) {
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1500));
            pool.run(8, [&](int64_t) { total.fetch_add(1); });
        }
        QCOMPARE(total.load(), runs * 8);
    }

    void parallel_for_covers_the_range_exactly() {
        ThreadPool pool(2);
        for (int64_t n : {1, 2, 7, 8, 9, 100, 1001}) {
            // Checks run on worker threads, so they only record; QTest asserts on this thread.
            std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
            std::atomic<int> empty_ranges{0};
            pool.parallel_for(n, [&](int64_t b, int64_t e) {
                if (b >= e) empty_ranges.fetch_add(1);
                for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
            });
            QCOMPARE(empty_ranges.load(), 0);
            for (int64_t i = 0; i < n; ++i) QCOMPARE(seen[static_cast<size_t>(i)].load(), 1);
        }
        std::atomic<int> calls{0};
        pool.parallel_for(0, [&](int64_t, int64_t) { calls.fetch_add(1); });
        QCOMPARE(calls.load(), 0);
    }

    void destroys_cleanly_while_idle_or_just_used() {
        for (int i = 0; i < 50; ++i) {
            ThreadPool pool(2 + i % 3);
            if (i % 2) pool.run(10, [](int64_t) {});
        }
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
