// The batching writer thread. Exceptions from an operation (bad_alloc) are caught here and become
// a Status, so a failure on this thread can never terminate the process.
#include "store/store_writer.h"

#include <chrono>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace workbench::store {

Writer::Writer(std::unique_ptr<Connection> conn, int32_t flush_interval_ms, int32_t flush_max_items)
    : conn_(std::move(conn)),
      flush_interval_ms_(flush_interval_ms > 0 ? flush_interval_ms : 100),
      flush_max_items_(flush_max_items > 0 ? static_cast<size_t>(flush_max_items) : 512) {
    thread_ = std::thread([this] { loop(); });
}

Writer::~Writer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Writer::post(Operation op) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({std::move(op), nullptr});
        ++n_posted_;
    }
    wake_.notify_one();
}

Result<int64_t> Writer::call(Operation op) {
    auto reply = std::make_shared<std::promise<Result<int64_t>>>();
    std::future<Result<int64_t>> result = reply->get_future();
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({std::move(op), reply});
        ++n_posted_;
        urgent_ = true;
    }
    wake_.notify_one();
    return result.get();
}

Status Writer::flush() {
    std::unique_lock lock(mutex_);
    const uint64_t target = n_posted_;
    urgent_ = true;
    wake_.notify_one();
    progress_.wait(lock, [&] { return n_done_ >= target; });
    Status status = std::move(unreported_error_);
    unreported_error_ = Status::ok_status();
    return status;
}

Status Writer::last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

void Writer::clear_error() {
    std::lock_guard lock(mutex_);
    last_error_ = Status::ok_status();
    unreported_error_ = Status::ok_status();
}

void Writer::record(const Status& status) {
    std::lock_guard lock(mutex_);
    last_error_ = status;
    if (unreported_error_.ok()) unreported_error_ = status;
}

void Writer::loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        // Gather: wait for more until the batch is full, someone waits, or the interval passes.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(flush_interval_ms_);
        wake_.wait_until(lock, deadline, [&] { return stop_ || urgent_ || queue_.size() >= flush_max_items_; });
        std::deque<Item> batch;
        batch.swap(queue_);
        urgent_ = false;
        lock.unlock();
        const size_t n_items = batch.size();
        run_batch(batch);
        lock.lock();
        n_done_ += n_items;
        progress_.notify_all();
    }
}

void Writer::run_batch(std::deque<Item>& batch) {
    std::vector<Result<int64_t>> results;
    results.reserve(batch.size());
    Status batch_status = conn_->run("BEGIN IMMEDIATE");
    for (size_t i = 0; batch_status.ok() && i < batch.size(); ++i) {
        Status item_status = conn_->run("SAVEPOINT item");
        if (!item_status.ok()) {
            batch_status = item_status;
            break;
        }
        Result<int64_t> result = Status(StatusCode::internal, "no result");
        try {
            result = batch[i].op(*conn_);
        } catch (const std::exception& e) {
            result = Status(StatusCode::internal, conn_->path() + ": write failed: " + e.what());
        } catch (...) {
            result = Status(StatusCode::internal, conn_->path() + ": write failed with an unknown exception");
        }
        if (!conn_->in_transaction()) {
            // SQLite rolled the whole transaction back (disk full, I/O error): the batch is lost.
            batch_status = result.ok() ? Status(StatusCode::internal, conn_->path() + ": transaction ended early")
                                       : result.status();
            break;
        }
        Status end = result.ok() ? conn_->run("RELEASE item")
                                 : conn_->exec("ROLLBACK TO item; RELEASE item;");
        if (!end.ok()) {
            batch_status = end;
            break;
        }
        if (!result.ok()) record(result.status());
        results.push_back(std::move(result));
    }
    if (batch_status.ok()) batch_status = conn_->run("COMMIT");
    if (!batch_status.ok()) {
        if (conn_->in_transaction()) (void)conn_->exec("ROLLBACK");
        const size_t n = batch.size();
        batch_status = Status(batch_status.code(), batch_status.message() + "; " + std::to_string(n) +
                                                       (n == 1 ? " queued write was" : " queued writes were") +
                                                       " dropped");
        record(batch_status);
        for (Item& item : batch)
            if (item.reply) item.reply->set_value(batch_status);
        return;
    }
    for (size_t i = 0; i < batch.size(); ++i)
        if (batch[i].reply) batch[i].reply->set_value(std::move(results[i]));
}

}  // namespace workbench::store
