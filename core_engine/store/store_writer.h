// The store's writer: one thread owning the write connection, draining a queue of operations in
// batches, one transaction per batch, so callers (the engine's worker) never wait on disk. Each
// operation runs inside a savepoint: one that fails alone (a constraint) is undone and reported
// while the rest of the batch commits; a failure that ends the transaction (disk full, locked too
// long, I/O) drops the whole batch. Nothing here knows the schema.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "store/store_db.h"

namespace workbench::store {

class Writer {
public:
    // One write: runs on the writer thread inside the batch's transaction; returns a row id (or 0).
    using Operation = std::function<Result<int64_t>(Connection&)>;

    Writer(std::unique_ptr<Connection> conn, int32_t flush_interval_ms, int32_t flush_max_items);
    ~Writer();  // commits what is queued, then joins the thread
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    // Queues `op` for the next batch.
    void post(Operation op);
    // Queues `op`, commits its batch at once and returns its result (or the batch's failure).
    Result<int64_t> call(Operation op);
    // Waits until everything posted before the call is committed or dropped; returns the first
    // failure since the previous flush().
    Status flush();

    Status last_error() const;
    void clear_error();

private:
    struct Item {
        Operation op;
        std::shared_ptr<std::promise<Result<int64_t>>> reply;  // set for call()
    };

    void loop();
    void run_batch(std::deque<Item>& batch);
    // Records a failure: last_error, and the first one not yet returned by flush().
    void record(const Status& status);

    std::unique_ptr<Connection> conn_;  // used only by the writer thread once it runs
    const int32_t flush_interval_ms_;
    const size_t flush_max_items_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;     // the writer: work, urgency or stop
    std::condition_variable progress_; // flushers: items done
    std::deque<Item> queue_;
    uint64_t n_posted_ = 0, n_done_ = 0;
    bool urgent_ = false, stop_ = false;
    Status last_error_, unreported_error_;
    std::thread thread_;
};

}  // namespace workbench::store
