// The Store's internals, shared by its source files: the options, the writer (absent when
// read-only) and the read connection with the mutex that serializes readers on it.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/store_db.h"
#include "store/store_writer.h"
#include "workbench/store.h"

namespace workbench {

struct Store::Impl {
    StoreOptions options;
    std::unique_ptr<store::Writer> writer;     // null when opened read-only
    std::unique_ptr<store::Connection> reader; // query_only; guarded by reader_mutex
    mutable std::mutex reader_mutex;

    // Runs `read(conn)` on the read connection, one reader at a time.
    template <typename F>
    auto read(F&& read) const {
        std::lock_guard lock(reader_mutex);
        return read(*reader);
    }
    // As read(), inside one read transaction: every query sees the same committed state.
    template <typename F>
    auto read_snapshot(F&& read) const -> decltype(read(*reader)) {
        std::lock_guard lock(reader_mutex);
        WB_RETURN_IF_ERROR(reader->run("BEGIN"));
        auto result = read(*reader);
        (void)reader->run("COMMIT");
        return result;
    }

    // The error every write returns on a read-only store.
    Status read_only_error() const {
        return error(StatusCode::invalid_argument, options.path + ": the history was opened read-only; nothing is saved");
    }
};

namespace store {

// Appends what was being done to an error, so a dropped write says which one.
inline Status while_doing(const Status& status, const std::string& what) {
    if (status.ok()) return status;
    return {status.code(), status.message() + " while " + what};
}

// FTS5 query for what a user typed: every word quoted (so no FTS syntax leaks in), all required,
// the last one as a prefix (search as you type). Empty when the text has no words.
std::string fts_query(const std::string& text);

// Row readers shared by the queries and the exports; they run on the caller's connection.
Result<SessionRecord> read_session(Connection& conn, RowId session_id);
Result<std::vector<MessageRecord>> read_messages(Connection& conn, RowId session_id);
Result<std::vector<RunRecord>> read_runs(Connection& conn, RowId session_id);
Result<std::vector<MetricSample>> read_samples(Connection& conn, RowId run_id);
Result<ConfigurationRecord> read_configuration(Connection& conn, RowId configuration_id);
// The configurations a session's runs ran under, in the order of first use.
Result<std::vector<ConfigurationRecord>> read_run_configurations(Connection& conn, RowId session_id);

// "full · KV f16 · weights q8_0 · cpu": a configuration in one line, for lists and transcripts.
std::string config_summary(const ConfigurationRecord& config);

}  // namespace store

}  // namespace workbench
