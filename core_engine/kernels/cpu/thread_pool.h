// One pool of worker threads for the whole engine. run(n_chunks, fn) splits work into chunks
// that the caller's thread and the workers claim from a shared counter, then returns when all
// chunks are done. Workers spin briefly before sleeping, because ops come back to back in a
// forward pass and waking a sleeping thread costs more than a short spin. Not reentrant: one
// run() at a time, from the thread that owns the engine.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace workbench {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);  // n_threads counts the caller; <= 1 means no workers
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int n_threads() const { return static_cast<int>(workers_.size()) + 1; }

    // Calls fn(chunk) for every chunk in [0, n_chunks) across the threads; blocks until done.
    void run(int64_t n_chunks, const std::function<void(int64_t chunk)>& fn);

    // Convenience: splits [0, n) into about 4 ranges per thread and calls fn(begin, end).
    void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

private:
    void worker_loop();
    void work_on_current_job();

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    // Each counter on its own cache line: they are hammered by different threads.
    alignas(64) std::atomic<uint64_t> generation_{0};
    alignas(64) std::atomic<int64_t> next_chunk_{0};
    alignas(64) std::atomic<int64_t> chunks_done_{0};
    alignas(64) std::atomic<int> active_workers_{0};
    alignas(64) std::atomic<int> sleepers_{0};  // workers on (or about to wait on) wake_
    int64_t n_chunks_ = 0;
    const std::function<void(int64_t)>* job_ = nullptr;
    std::atomic<bool> stop_{false};
};

// Threads to use when the user did not say: one per online core.
int default_thread_count();

}  // namespace workbench
