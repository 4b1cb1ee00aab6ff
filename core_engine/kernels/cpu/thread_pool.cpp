// Chunk-claiming thread pool: a generation counter announces a job; workers spin on it for a
// few microseconds, then sleep on a condition variable.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#define WB_PAUSE() _mm_pause()
#else
#define WB_PAUSE() ((void)0)
#endif

namespace workbench {

int default_thread_count() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(std::min(n, 64u));
}

ThreadPool::ThreadPool(int n_threads) {
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
    stop_ = true;
    generation_.fetch_add(2);
    {
        std::lock_guard<std::mutex> lock(mutex_);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::work_on_current_job() {
    const auto& fn = *job_;
    for (;;) {
        int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
        if (chunk >= n_chunks_) break;
        fn(chunk);
        chunks_done_.fetch_add(1, std::memory_order_release);
    }
}

// generation_ is odd while a job is open. A worker announces itself (active_workers_) and then
// re-checks that the job it saw is still open; run() closes the job and waits for active workers
// to leave. Both sides use seq_cst so one of them always sees the other (Dekker-style), and no
// worker can touch a job after run() returned. The same pairing lets run() skip the mutex and the
// notify while no worker sleeps (the usual case, mid forward pass): a worker counts itself in
// sleepers_ before it checks generation_ under the mutex, and run() reads sleepers_ after it
// bumped generation_, so either run() locks and notifies or the worker sees the new job.
void ThreadPool::worker_loop() {
    uint64_t seen = 0;
    for (;;) {
        for (int spin = 0; spin < 20000 && generation_.load() == seen; ++spin) WB_PAUSE();
        if (generation_.load() == seen) {
            sleepers_.fetch_add(1);
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return generation_.load() != seen || stop_.load(); });
            }
            sleepers_.fetch_sub(1);
        }
        if (stop_.load()) return;
        seen = generation_.load();
        if (seen % 2 == 0) continue;  // the job closed before we got here
        active_workers_.fetch_add(1);
        if (generation_.load() == seen) work_on_current_job();
        active_workers_.fetch_sub(1);
    }
}

void ThreadPool::run(int64_t n_chunks, const std::function<void(int64_t)>& fn) {
    if (n_chunks <= 0) return;
    if (workers_.empty() || n_chunks == 1) {
        for (int64_t c = 0; c < n_chunks; ++c) fn(c);
        return;
    }
    job_ = &fn;
    n_chunks_ = n_chunks;
    chunks_done_.store(0);
    next_chunk_.store(0);
    generation_.fetch_add(1);  // open (odd)
    if (sleepers_.load() > 0) {
        { std::lock_guard<std::mutex> lock(mutex_); }  // a sleeper is either waiting or will see the job
        wake_.notify_all();
    }
    work_on_current_job();
    while (chunks_done_.load(std::memory_order_acquire) < n_chunks) WB_PAUSE();
    generation_.fetch_add(1);  // close (even)
    while (active_workers_.load() != 0) WB_PAUSE();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    int64_t n_chunks = std::min<int64_t>(n, static_cast<int64_t>(n_threads()) * 4);
    int64_t per = (n + n_chunks - 1) / n_chunks;
    n_chunks = (n + per - 1) / per;
    run(n_chunks, [&](int64_t c) { fn(c * per, std::min(n, (c + 1) * per)); });
}

}  // namespace workbench
