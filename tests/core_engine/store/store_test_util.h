// Helpers shared by the store suites: a raw sqlite3 connection for checking the file from the
// outside, Status assertions that print the message, and small record builders.
#pragma once

#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "workbench/store.h"

namespace store_test {

inline const workbench::Status& status_of(const workbench::Status& s) { return s; }
template <typename T>
const workbench::Status& status_of(const workbench::Result<T>& r) {
    return r.status();
}

inline QString q(const std::string& s) { return QString::fromStdString(s); }

// A connection of our own, outside the store, to look at (or lock, or damage) the file.
class RawDb {
public:
    explicit RawDb(const std::string& path) { sqlite3_open(path.c_str(), &db_); sqlite3_busy_timeout(db_, 5000); }
    ~RawDb() { sqlite3_close(db_); }
    RawDb(const RawDb&) = delete;
    RawDb& operator=(const RawDb&) = delete;

    // sqlite3_exec's result code; the error text goes to last_error.
    int exec(const std::string& sql) {
        char* message = nullptr;
        const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
        last_error = message ? message : "";
        sqlite3_free(message);
        return rc;
    }
    // The first column of the first row as text ("" when no row or on error).
    std::string text(const std::string& sql) {
        sqlite3_stmt* stmt = nullptr;
        std::string out;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
            out = t ? t : "";
        }
        sqlite3_finalize(stmt);
        return out;
    }
    long long count(const std::string& sql) {
        const std::string value = text(sql);
        return value.empty() ? 0 : std::stoll(value);
    }
    sqlite3* handle() { return db_; }
    std::string last_error;

private:
    sqlite3* db_ = nullptr;
};

// Fresh database paths in one temporary folder, removed with it.
class TempFiles {
public:
    std::string new_path() { return (dir_.path() + QString("/history%1.db").arg(++n_files_)).toStdString(); }

private:
    QTemporaryDir dir_;
    int n_files_ = 0;
};

// A store on `path`, or null after printing why it did not open.
inline std::unique_ptr<workbench::Store> open(const std::string& path, int32_t flush_interval_ms = 20) {
    workbench::StoreOptions options;
    options.path = path;
    options.flush_interval_ms = flush_interval_ms;
    workbench::Result<std::unique_ptr<workbench::Store>> store = workbench::Store::open(options);
    if (!store.ok()) qWarning("%s", store.status().message().c_str());
    return store.ok() ? std::move(store).value() : nullptr;
}

// Polls `done` every 5 ms for up to `timeout_ms` (the suites run without an event loop).
inline bool wait_until(const std::function<bool()>& done, int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

inline workbench::RunRecord make_run(workbench::RowId session_id, workbench::RowId configuration_id, int n_generated,
                                     double decode_tok_s) {
    workbench::RunRecord run;
    run.session_id = session_id;
    run.configuration_id = configuration_id;
    run.n_tokens_prompt = 11;
    run.n_tokens_generated = n_generated;
    run.decode_tok_s = decode_tok_s;
    run.stop_reason = "max_tokens";
    return run;
}

inline std::vector<workbench::MetricSample> make_samples(int first_token, int n) {
    std::vector<workbench::MetricSample> samples;
    for (int i = 0; i < n; ++i) {
        workbench::MetricSample s;
        s.token_index = first_token + i;
        s.t_ms = 10.0 * (first_token + i);
        s.kv_bytes = 1024u * static_cast<uint64_t>(first_token + i + 1);
        s.kv_bytes_full = 2048u * static_cast<uint64_t>(first_token + i + 1);
        if (s.token_index > 0) s.itl_ms = 10.0;
        s.tok_s = 100.0;
        samples.push_back(s);
    }
    return samples;
}

}  // namespace store_test

// Asserts a Status or Result is ok, printing its message when not.
#define WB_VERIFY_OK(expr)                                                            \
    do {                                                                              \
        const auto& wb_checked_ = (expr);                                             \
        const ::workbench::Status& wb_status_ = ::store_test::status_of(wb_checked_); \
        QVERIFY2(wb_status_.ok(), wb_status_.message().c_str());                      \
    } while (0)
