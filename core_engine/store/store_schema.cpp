// The migrations, oldest first. Never edit a released one: add the next. Each runs in one
// transaction together with its user_version bump, so a crash leaves the file at a whole version.
#include "store/store_schema.h"

#include <string>
#include <vector>

namespace workbench::store {

namespace {

// Version 1: the chat history: configurations, sessions, messages, runs and their samples.
constexpr const char* kMigration1 = R"sql(
CREATE TABLE configurations (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    backend TEXT NOT NULL,
    variant TEXT NOT NULL,
    kv_dtype TEXT NOT NULL,
    weight_type TEXT NOT NULL,
    config_json TEXT NOT NULL,
    created_unix_ms INTEGER NOT NULL,
    UNIQUE (backend, config_json)
);
CREATE INDEX configurations_model ON configurations(model);
CREATE INDEX configurations_variant ON configurations(variant);
CREATE INDEX configurations_kv_dtype ON configurations(kv_dtype);
CREATE INDEX configurations_weight_type ON configurations(weight_type);

CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    configuration_id INTEGER REFERENCES configurations(id),
    title TEXT NOT NULL DEFAULT '',
    created_unix_ms INTEGER NOT NULL,
    updated_unix_ms INTEGER NOT NULL
);
CREATE INDEX sessions_created ON sessions(created_unix_ms);
CREATE INDEX sessions_updated ON sessions(updated_unix_ms);
CREATE INDEX sessions_configuration ON sessions(configuration_id);

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    configuration_id INTEGER REFERENCES configurations(id),
    started_unix_ms INTEGER NOT NULL,
    finished_unix_ms INTEGER NOT NULL DEFAULT 0,
    n_tokens_prompt INTEGER NOT NULL DEFAULT 0,
    n_tokens_generated INTEGER NOT NULL DEFAULT 0,
    ttft_ms REAL, prefill_tok_s REAL, decode_tok_s REAL,
    itl_ms_p50 REAL, itl_ms_p90 REAL, itl_ms_p99 REAL,
    kv_bytes INTEGER NOT NULL DEFAULT 0,
    kv_bytes_peak INTEGER NOT NULL DEFAULT 0,
    kv_bytes_full INTEGER NOT NULL DEFAULT 0,
    kv_bytes_read_per_token INTEGER NOT NULL DEFAULT 0,
    stop_reason TEXT NOT NULL DEFAULT '',
    model_sha256 TEXT NOT NULL DEFAULT '',
    app_version TEXT NOT NULL DEFAULT '',
    app_commit TEXT NOT NULL DEFAULT '',
    cpu_model TEXT NOT NULL DEFAULT '',
    cpu_features TEXT NOT NULL DEFAULT '',
    backend TEXT NOT NULL DEFAULT '',
    n_threads INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_session ON runs(session_id);
CREATE INDEX runs_configuration ON runs(configuration_id);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    text TEXT NOT NULL,
    created_unix_ms INTEGER NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE INDEX messages_run ON messages(run_id);

-- The charts' time series: one row per sampled token, clustered by run.
CREATE TABLE metric_samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    token_index INTEGER NOT NULL,
    t_ms REAL NOT NULL,
    kv_bytes INTEGER NOT NULL,
    kv_bytes_full INTEGER NOT NULL,
    itl_ms REAL,
    tok_s REAL,
    PRIMARY KEY (run_id, token_index)
) WITHOUT ROWID;

-- A session's "updated" time follows its last message and run, so lists sort by activity.
CREATE TRIGGER messages_touch_session AFTER INSERT ON messages BEGIN
    UPDATE sessions SET updated_unix_ms = max(updated_unix_ms, new.created_unix_ms) WHERE id = new.session_id;
END;
CREATE TRIGGER runs_touch_session AFTER UPDATE OF finished_unix_ms ON runs WHEN new.session_id IS NOT NULL BEGIN
    UPDATE sessions SET updated_unix_ms = max(updated_unix_ms, new.finished_unix_ms) WHERE id = new.session_id;
END;
)sql";

// Version 2: full-text search over messages. An external-content FTS5 index kept in step by
// triggers (which also fire for cascaded deletes); existing messages are indexed by 'rebuild'.
constexpr const char* kMigration2 = R"sql(
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
)sql";

// Version 3: measurements outside chat: evaluations, benchmark rows, named comparisons.
constexpr const char* kMigration3 = R"sql(
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    configuration_id INTEGER REFERENCES configurations(id),
    reference_configuration_id INTEGER REFERENCES configurations(id),
    text_name TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    n_tokens INTEGER NOT NULL,
    perplexity REAL, kl_mean REAL, top1_agreement REAL,
    json TEXT NOT NULL DEFAULT '',
    created_unix_ms INTEGER NOT NULL
);
CREATE INDEX evaluations_configuration ON evaluations(configuration_id);

CREATE TABLE benchmarks (
    id INTEGER PRIMARY KEY,
    configuration_id INTEGER REFERENCES configurations(id),
    test_name TEXT NOT NULL,
    n_prompt INTEGER NOT NULL, n_gen INTEGER NOT NULL, n_batch INTEGER NOT NULL, n_threads INTEGER NOT NULL,
    avg_ts REAL NOT NULL, stddev_ts REAL NOT NULL,
    json TEXT NOT NULL DEFAULT '',
    created_unix_ms INTEGER NOT NULL
);
CREATE INDEX benchmarks_configuration ON benchmarks(configuration_id);

CREATE TABLE comparisons (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    prompt TEXT NOT NULL,
    created_unix_ms INTEGER NOT NULL
);
CREATE TABLE comparison_configurations (
    comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    configuration_id INTEGER NOT NULL REFERENCES configurations(id),
    PRIMARY KEY (comparison_id, position)
) WITHOUT ROWID;
CREATE TABLE comparison_runs (
    comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    PRIMARY KEY (comparison_id, run_id)
) WITHOUT ROWID;
CREATE INDEX comparison_runs_run ON comparison_runs(run_id);
)sql";

// Version 4: configurations saved under a name (the Compare page's presets).
constexpr const char* kMigration4 = R"sql(
CREATE TABLE presets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    configuration_id INTEGER NOT NULL REFERENCES configurations(id),
    created_unix_ms INTEGER NOT NULL
);
)sql";

// Version 5: the sampling seed a run drew (NULL for runs recorded before, or without one).
constexpr const char* kMigration5 = R"sql(
ALTER TABLE runs ADD COLUMN seed INTEGER;
)sql";

// Version 6: why a comparison's configuration did not run (NULL: it ran), so a saved comparison
// keeps its failed columns with their reason instead of dropping them.
constexpr const char* kMigration6 = R"sql(
ALTER TABLE comparison_configurations ADD COLUMN error TEXT;
)sql";

// Version 7: speculative decoding's drafted and accepted tokens per run (NULL: it did not speculate,
// or was recorded before), and an evaluation's retrieval accuracy (NULL: not measured).
constexpr const char* kMigration7 = R"sql(
ALTER TABLE runs ADD COLUMN draft_tokens INTEGER;
ALTER TABLE runs ADD COLUMN accepted_tokens INTEGER;
ALTER TABLE evaluations ADD COLUMN retrieval_accuracy REAL;
)sql";

// Version 8: a sweep (workbench/sweep.h) kept as a unit: its settings and its rows in the order
// measured, failed rows too, each linked to the evaluation it also saved (NULL: failed, or that
// evaluation since deleted). `source` is the CLI's -o file, so a resumed sweep continues its record.
constexpr const char* kMigration8 = R"sql(
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    model TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL DEFAULT '',
    created_unix_ms INTEGER NOT NULL
);
CREATE TABLE sweep_rows (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    evaluation_id INTEGER REFERENCES evaluations(id) ON DELETE SET NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (sweep_id, position)
) WITHOUT ROWID;
)sql";

// Version 9: a chat's tool calls and results and its thinking (NULL: none, or recorded before):
// an assistant message's calls as JSON [{"id", "name", "arguments"}] and its reasoning, a tool
// message's call id; and a run's time to its first answer token (NULL: not measured).
constexpr const char* kMigration9 = R"sql(
ALTER TABLE messages ADD COLUMN reasoning TEXT;
ALTER TABLE messages ADD COLUMN tool_calls TEXT;
ALTER TABLE messages ADD COLUMN tool_call_id TEXT;
ALTER TABLE runs ADD COLUMN first_answer_ms REAL;
)sql";

const std::vector<const char*>& migrations() {
    static const std::vector<const char*> list = {kMigration1, kMigration2, kMigration3, kMigration4, kMigration5, kMigration6, kMigration7,
                                                   kMigration8, kMigration9};
    return list;
}

}  // namespace

Result<int32_t> history_version(Connection& conn) {
    WB_ASSIGN_OR_RETURN(int64_t application_id, conn.query_int("PRAGMA application_id"));
    WB_ASSIGN_OR_RETURN(int64_t version, conn.query_int("PRAGMA user_version"));
    WB_ASSIGN_OR_RETURN(int64_t n_objects, conn.query_int("SELECT count(*) FROM sqlite_master"));
    const bool fresh = application_id == 0 && version == 0 && n_objects == 0;
    if (!fresh && application_id != kApplicationId)
        return error(StatusCode::invalid_file, conn.path() + ": an SQLite file of another application (application_id " +
                                                   std::to_string(application_id) + ", expected " +
                                                   std::to_string(kApplicationId) + "); choose another history file");
    if (version > current_schema_version())
        return error(StatusCode::unsupported, conn.path() + ": schema version " + std::to_string(version) +
                                                  " is newer than this build understands (" +
                                                  std::to_string(current_schema_version()) +
                                                  "); open it with a newer Inference Workbench");
    return static_cast<int32_t>(version);
}

int32_t current_schema_version() { return static_cast<int32_t>(migrations().size()); }

Status migrate(Connection& conn, int32_t target_version) {
    if (target_version < 0 || target_version > current_schema_version())
        return error(StatusCode::invalid_argument, "schema version " + std::to_string(target_version) + " does not exist");
    WB_ASSIGN_OR_RETURN(int32_t version, history_version(conn));
    for (int32_t next = version + 1; next <= target_version; ++next) {
        // IMMEDIATE: take the write lock up front, so a second process migrating waits here.
        WB_RETURN_IF_ERROR(conn.exec("BEGIN IMMEDIATE"));
        // Another process may have migrated while we waited for the lock.
        Result<int64_t> now = conn.query_int("PRAGMA user_version");
        Status status = now.status();
        if (status.ok() && *now < next) {
            status = conn.exec(std::string(migrations()[static_cast<size_t>(next - 1)]) +
                               "\nPRAGMA application_id = " + std::to_string(kApplicationId) +
                               ";\nPRAGMA user_version = " + std::to_string(next) + ";");
        }
        if (status.ok()) status = conn.exec("COMMIT");
        if (!status.ok()) {
            if (conn.in_transaction()) (void)conn.exec("ROLLBACK");
            return status.with_context("migrating to schema version " + std::to_string(next) + ": ");
        }
    }
    return Status::ok_status();
}

Status check_schema(Connection& conn, int32_t expected_version) {
    WB_ASSIGN_OR_RETURN(int32_t version, history_version(conn));
    if (version != expected_version)
        return error(StatusCode::unsupported, conn.path() + ": schema version " + std::to_string(version) +
                                                  " needs upgrading to " + std::to_string(expected_version) +
                                                  ", which a read-only store cannot do; open it once for writing");
    return Status::ok_status();
}

}  // namespace workbench::store
