// One sqlite3 connection with its prepared-statement cache, and the translation of SQLite result
// codes into Status messages that name the file and the cause. A Connection is used by one thread
// at a time (the writer thread, or a reader holding the store's read mutex); it knows nothing of
// the schema.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "workbench/status.h"

namespace workbench::store {

class Connection;

// A cached statement borrowed for one use: bind, step, read columns. Resets and clears its
// bindings when it goes out of scope, so the cache hands it out clean next time.
class Statement {
public:
    Statement(Connection& conn, sqlite3_stmt* stmt) : conn_(&conn), stmt_(stmt) {}
    ~Statement();
    Statement(Statement&& other) noexcept : conn_(other.conn_), stmt_(other.stmt_), bind_rc_(other.bind_rc_) {
        other.stmt_ = nullptr;
    }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement& operator=(Statement&&) = delete;

    // Parameters are 1-based, as in SQL text (?1, ?2, ...).
    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int32_t value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, uint64_t value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, const std::optional<double>& value);
    Statement& bind(int index, std::string_view text);
    Statement& bind_id(int index, int64_t id);  // 0 binds NULL (an absent foreign key)

    // Steps once: true with a row to read, false when done.
    Result<bool> next();
    // Steps to completion, for statements that return no rows.
    Status run();

    int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
    uint64_t column_u64(int index) const { return static_cast<uint64_t>(sqlite3_column_int64(stmt_, index)); }
    double column_double(int index) const { return sqlite3_column_double(stmt_, index); }
    std::optional<double> column_optional(int index) const;
    bool column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
    std::string column_text(int index) const;

private:
    Statement& check_bind(int rc);
    Connection* conn_;
    sqlite3_stmt* stmt_;
    int bind_rc_ = SQLITE_OK;
};

class Connection {
public:
    // Opens `path` read-write (created when absent) or read-only, with extended result codes,
    // the busy timeout and foreign keys on. Errors name the file.
    static Result<std::unique_ptr<Connection>> open(const std::string& path, bool read_only, int32_t busy_timeout_ms);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // The statement for `sql`, prepared once per connection and cached by its text.
    Result<Statement> prepare(std::string_view sql);
    // Runs one or more statements that return no rows (schema, pragmas, migrations).
    Status exec(const std::string& sql);
    // Runs one cached statement that returns no rows (BEGIN, SAVEPOINT, COMMIT on every batch).
    Status run(std::string_view sql);
    // The first column of the first row of `sql` as an integer.
    Result<int64_t> query_int(const std::string& sql);
    int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
    int64_t changes() const { return sqlite3_changes64(db_); }
    bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

    // The Status for a failed SQLite call with result code `rc` on this connection.
    Status error(int rc) const;
    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }

private:
    Connection(sqlite3* db, std::string path, int32_t busy_timeout_ms)
        : db_(db), path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}
    sqlite3* db_;
    std::string path_;
    int32_t busy_timeout_ms_;
    std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

// "history.db: database is locked by another process (SQLITE_BUSY after 2000 ms)": the message
// for result code `rc`, with SQLite's own text where it adds something.
Status sqlite_status(const std::string& path, int rc, const char* sqlite_message, int32_t busy_timeout_ms);

}  // namespace workbench::store
