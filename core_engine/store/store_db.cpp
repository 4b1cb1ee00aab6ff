// SQLite connections, cached statements and result codes turned into Status messages. Never
// aborts on an SQLite failure: every error becomes a Status naming the file and the cause.
#include "store/store_db.h"

#include <string>
#include <utility>

namespace workbench::store {

namespace {

// SQLite has no name-of-code function; these are the codes a history file meets in practice.
const char* base_code_name(int rc) {
    switch (rc & 0xff) {
        case SQLITE_ERROR: return "SQLITE_ERROR";
        case SQLITE_PERM: return "SQLITE_PERM";
        case SQLITE_BUSY: return "SQLITE_BUSY";
        case SQLITE_LOCKED: return "SQLITE_LOCKED";
        case SQLITE_NOMEM: return "SQLITE_NOMEM";
        case SQLITE_READONLY: return "SQLITE_READONLY";
        case SQLITE_IOERR: return "SQLITE_IOERR";
        case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
        case SQLITE_FULL: return "SQLITE_FULL";
        case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
        case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT";
        case SQLITE_MISMATCH: return "SQLITE_MISMATCH";
        case SQLITE_MISUSE: return "SQLITE_MISUSE";
        case SQLITE_RANGE: return "SQLITE_RANGE";
        case SQLITE_NOTADB: return "SQLITE_NOTADB";
        default: return "SQLite error";
    }
}

}  // namespace

Status sqlite_status(const std::string& path, int rc, const char* sqlite_message, int32_t busy_timeout_ms) {
    const std::string code = base_code_name(rc);
    const std::string detail = sqlite_message && *sqlite_message ? sqlite_message : sqlite3_errstr(rc);
    const std::string prefix = path + ": ";
    switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return error(StatusCode::io_error, prefix + "database is locked by another process (" + code + " after " +
                                                   std::to_string(busy_timeout_ms) + " ms)");
        case SQLITE_READONLY:
        case SQLITE_PERM:
            return error(StatusCode::io_error,
                         prefix + "database is read-only (" + code + ": " + detail + "); check the file's permissions");
        case SQLITE_NOTADB:
            return error(StatusCode::invalid_file, prefix + "not an SQLite database, or encrypted (" + code + ": " + detail + ")");
        case SQLITE_CORRUPT:
            return error(StatusCode::invalid_file, prefix + "database file is corrupt (" + code + ": " + detail + ")");
        case SQLITE_FULL:
            return error(StatusCode::resource_exhausted, prefix + "database or disk is full (" + code + ")");
        case SQLITE_CANTOPEN:
            return error(StatusCode::io_error, prefix + "cannot open the file (" + code + ": " + detail +
                                                   "); check that its folder exists and is writable");
        case SQLITE_IOERR:
            return error(StatusCode::io_error, prefix + "disk I/O error (" + code + ": " + detail + ")");
        case SQLITE_NOMEM:
            return error(StatusCode::resource_exhausted, prefix + "out of memory (" + code + ")");
        case SQLITE_CONSTRAINT:
            return error(StatusCode::invalid_argument, prefix + detail + " (" + code + ")");
        default:
            return error(StatusCode::internal, prefix + detail + " (" + code + " " + std::to_string(rc) + ")");
    }
}

// --- Statement ---

Statement::~Statement() {
    if (!stmt_) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

Statement& Statement::check_bind(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
}

Statement& Statement::bind(int index, int64_t value) { return check_bind(sqlite3_bind_int64(stmt_, index, value)); }
Statement& Statement::bind(int index, double value) { return check_bind(sqlite3_bind_double(stmt_, index, value)); }

Statement& Statement::bind(int index, const std::optional<double>& value) {
    return value ? bind(index, *value) : check_bind(sqlite3_bind_null(stmt_, index));
}

Statement& Statement::bind(int index, std::string_view text) {
    return check_bind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

Statement& Statement::bind_id(int index, int64_t id) {
    return id == 0 ? check_bind(sqlite3_bind_null(stmt_, index)) : bind(index, id);
}

Result<bool> Statement::next() {
    if (bind_rc_ != SQLITE_OK) return conn_->error(bind_rc_);
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return conn_->error(rc);
}

Status Statement::run() {
    for (;;) {
        Result<bool> row = next();
        if (!row.ok()) return row.status();
        if (!*row) return Status::ok_status();
    }
}

std::optional<double> Statement::column_optional(int index) const {
    if (sqlite3_column_type(stmt_, index) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, index);
}

std::string Statement::column_text(int index) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
    if (!text) return {};
    return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

// --- Connection ---

Result<std::unique_ptr<Connection>> Connection::open(const std::string& path, bool read_only, int32_t busy_timeout_ms) {
    sqlite3* db = nullptr;
    const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        // sqlite3_open_v2 may hand back a handle even on failure; its message is the useful part.
        Status status = sqlite_status(path, rc, db ? sqlite3_errmsg(db) : nullptr, busy_timeout_ms);
        sqlite3_close_v2(db);
        return status;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, busy_timeout_ms);
    std::unique_ptr<Connection> conn(new Connection(db, path, busy_timeout_ms));
    WB_RETURN_IF_ERROR(conn->exec("PRAGMA foreign_keys = ON"));
    return conn;
}

Connection::~Connection() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
}

Status Connection::error(int rc) const { return sqlite_status(path_, rc, sqlite3_errmsg(db_), busy_timeout_ms_); }

Result<Statement> Connection::prepare(std::string_view sql) {
    std::string key(sql);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
        sqlite3_stmt* stmt = nullptr;
        const int rc = sqlite3_prepare_v3(db_, key.data(), static_cast<int>(key.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
        if (rc != SQLITE_OK) return error(rc);
        it = cache_.emplace(std::move(key), stmt).first;
    }
    return Statement(*this, it->second);
}

Status Connection::exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    if (rc == SQLITE_OK) return Status::ok_status();
    Status status = sqlite_status(path_, rc, message, busy_timeout_ms_);
    sqlite3_free(message);
    return status;
}

Status Connection::run(std::string_view sql) {
    WB_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
    return stmt.run();
}

Result<int64_t> Connection::query_int(const std::string& sql) {
    WB_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
    WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
    if (!has_row) return workbench::error(StatusCode::internal, path_ + ": no row from \"" + sql + "\"");
    return stmt.column_int(0);
}

}  // namespace workbench::store
