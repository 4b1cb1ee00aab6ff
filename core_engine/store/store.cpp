// Store: opening (file checks, WAL, migrations, the two connections) and every write, each a
// small operation queued to the writer thread. Timestamps left 0 are taken when the call is made,
// not when the batch commits, so they say when things happened.
#include <cstdlib>
#include <exception>
#include <utility>

#include "store/store_impl.h"
#include "store/store_schema.h"
#include "store/store_text.h"
#include "workbench/json.h"

namespace workbench {

using store::Connection;
using store::Statement;
using store::while_doing;

namespace {

int64_t or_now(int64_t unix_ms) { return unix_ms != 0 ? unix_ms : store::now_unix_ms(); }

// The run's outcome, bound at `first` .. first + 13 (finish_run and begin_run share it).
void bind_outcome(Statement& stmt, int first, const RunRecord& run) {
    stmt.bind(first, run.finished_unix_ms)
        .bind(first + 1, run.n_tokens_prompt)
        .bind(first + 2, run.n_tokens_generated)
        .bind(first + 3, run.ttft_ms)
        .bind(first + 4, run.prefill_tok_s)
        .bind(first + 5, run.decode_tok_s)
        .bind(first + 6, run.itl_ms_p50)
        .bind(first + 7, run.itl_ms_p90)
        .bind(first + 8, run.itl_ms_p99)
        .bind(first + 9, run.kv_bytes)
        .bind(first + 10, run.kv_bytes_peak)
        .bind(first + 11, run.kv_bytes_full)
        .bind(first + 12, run.kv_bytes_read_per_token)
        .bind(first + 13, run.stop_reason);
}

// Speculative decoding's counts at `first`, first + 1 (left NULL for a run that did not
// speculate), and the time to the first answer token at first + 2.
void bind_drafts(Statement& stmt, int first, const RunRecord& run) {
    if (run.n_draft_tokens) stmt.bind(first, *run.n_draft_tokens);
    if (run.n_accepted_tokens) stmt.bind(first + 1, *run.n_accepted_tokens);
    stmt.bind(first + 2, run.first_answer_ms);
}

// Sets WAL (readers never block the writer, and a killed process loses at most its open
// transaction) and checks it took: some file systems refuse it.
Status use_wal(Connection& conn) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("PRAGMA journal_mode = WAL"));
    WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
    const std::string mode = has_row ? stmt.column_text(0) : "";
    if (mode != "wal")
        return error(StatusCode::io_error, conn.path() + ": cannot use write-ahead logging (journal mode stays '" + mode +
                                               "'); put the history on a local file system");
    // NORMAL in WAL mode: a commit survives a crash of the process; only power loss may undo the last ones.
    return conn.exec("PRAGMA synchronous = NORMAL");
}

Result<std::unique_ptr<Connection>> open_writer(const StoreOptions& options) {
    WB_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::open(options.path, false, options.busy_timeout_ms));
    if (sqlite3_db_readonly(conn->handle(), "main") == 1)
        return error(StatusCode::io_error, options.path + ": the file is read-only (no write permission); "
                                                          "open the history read-only to browse it");
    // Refuse another application's file before changing anything in it.
    WB_RETURN_IF_ERROR(store::history_version(*conn).status());
    WB_RETURN_IF_ERROR(use_wal(*conn));
    WB_RETURN_IF_ERROR(store::migrate(*conn, store::current_schema_version()));
    if (options.max_page_count > 0)
        WB_RETURN_IF_ERROR(conn->exec("PRAGMA max_page_count = " + std::to_string(options.max_page_count)));
    return conn;
}

}  // namespace

std::string default_history_path() {
    if (const char* env = std::getenv("WORKBENCH_HISTORY_DB"); env && *env) return env;
    const char* xdg = std::getenv("XDG_DATA_HOME");
    const char* home = std::getenv("HOME");
    const std::string base = xdg && *xdg ? std::string(xdg) : home && *home ? std::string(home) + "/.local/share" : ".";
    return base + "/inference-workbench/history.db";
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const StoreOptions& options) {
    if (options.path.empty()) return error(StatusCode::invalid_argument, "history: no database file given");
    if (options.path == ":memory:" || options.path.rfind("file:", 0) == 0)
        return error(StatusCode::invalid_argument, options.path + ": the history needs a plain file path "
                                                                  "(its writer and readers use separate connections)");
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    std::unique_ptr<Connection> writer_conn;
    if (!options.read_only) {
        WB_ASSIGN_OR_RETURN(writer_conn, open_writer(options));
    }
    WB_ASSIGN_OR_RETURN(impl->reader, Connection::open(options.path, true, options.busy_timeout_ms));
    WB_RETURN_IF_ERROR(impl->reader->exec("PRAGMA query_only = ON"));
    WB_RETURN_IF_ERROR(store::check_schema(*impl->reader, store::current_schema_version()));
    if (writer_conn) {
        try {
            impl->writer = std::make_unique<store::Writer>(std::move(writer_conn), options.flush_interval_ms,
                                                           options.flush_max_items);
        } catch (const std::exception& e) {  // std::thread could not start: no exception crosses the API
            return error(StatusCode::resource_exhausted, options.path + ": cannot start the writer thread: " + e.what());
        }
    }
    return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const std::string& Store::path() const { return impl_->options.path; }
int32_t Store::schema_version() { return store::current_schema_version(); }

Status Store::flush() { return impl_->writer ? impl_->writer->flush() : Status::ok_status(); }
Status Store::last_error() const { return impl_->writer ? impl_->writer->last_error() : Status::ok_status(); }
void Store::clear_error() {
    if (impl_->writer) impl_->writer->clear_error();
}

// --- writes that return an id ---

namespace {

// The row that holds `config_json` for `backend`: by its text, or else by its parsed value, so a
// row written before the JSON library change (whose escapes or number spellings differ, e.g.
// "\u0008" for "\b") is found rather than saved a second time.
Result<std::optional<int64_t>> find_configuration(Connection& conn, const std::string& backend, const std::string& config_json) {
    WB_ASSIGN_OR_RETURN(Statement exact, conn.prepare("SELECT id FROM configurations WHERE backend = ?1 AND config_json = ?2"));
    exact.bind(1, backend).bind(2, config_json);
    WB_ASSIGN_OR_RETURN(bool found, exact.next());
    if (found) return std::optional<int64_t>(exact.column_int(0));
    auto wanted = parse_json(config_json);
    if (!wanted.ok()) return std::optional<int64_t>();
    WB_ASSIGN_OR_RETURN(Statement all, conn.prepare("SELECT id, config_json FROM configurations WHERE backend = ?1 ORDER BY id"));
    all.bind(1, backend);
    while (true) {
        WB_ASSIGN_OR_RETURN(bool more, all.next());
        if (!more) return std::optional<int64_t>();
        auto stored = parse_json(all.column_text(1));
        if (stored.ok() && *stored == *wanted) return std::optional<int64_t>(all.column_int(0));
    }
}

}  // namespace

Result<RowId> Store::save_configuration(const ConfigurationRecord& config) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = store::now_unix_ms();
    return impl_->writer->call([config, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(std::optional<int64_t> existing, find_configuration(conn, config.backend, config.config_json));
        if (existing) return *existing;
        WB_ASSIGN_OR_RETURN(Statement insert,
                            conn.prepare("INSERT INTO configurations (model, backend, variant, kv_dtype, weight_type, "
                                         "config_json, created_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
        insert.bind(1, config.model).bind(2, config.backend).bind(3, config.variant).bind(4, config.kv_dtype);
        insert.bind(5, config.weight_type).bind(6, config.config_json).bind(7, created);
        WB_RETURN_IF_ERROR(while_doing(insert.run(), "saving a configuration"));
        return conn.last_insert_id();
    });
}

Result<RowId> Store::create_session(const SessionRecord& session) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = or_now(session.created_unix_ms);
    return impl_->writer->call([session, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("INSERT INTO sessions (configuration_id, title, created_unix_ms, "
                                                         "updated_unix_ms) VALUES (?1, ?2, ?3, ?3)"));
        stmt.bind_id(1, session.configuration_id).bind(2, session.title).bind(3, created);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "creating a session"));
        return conn.last_insert_id();
    });
}

Result<RowId> Store::begin_run(const RunRecord& run) {
    if (!impl_->writer) return impl_->read_only_error();
    RunRecord start = run;
    start.started_unix_ms = or_now(run.started_unix_ms);
    return impl_->writer->call([start = std::move(start)](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(
            Statement stmt,
            conn.prepare("INSERT INTO runs (session_id, configuration_id, started_unix_ms, finished_unix_ms, "
                         "n_tokens_prompt, n_tokens_generated, ttft_ms, prefill_tok_s, decode_tok_s, itl_ms_p50, "
                         "itl_ms_p90, itl_ms_p99, kv_bytes, kv_bytes_peak, kv_bytes_full, kv_bytes_read_per_token, "
                         "stop_reason, model_sha256, app_version, app_commit, cpu_model, cpu_features, backend, "
                         "n_threads, seed, draft_tokens, accepted_tokens, first_answer_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                         "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)"));
        stmt.bind_id(1, start.session_id).bind_id(2, start.configuration_id).bind(3, start.started_unix_ms);
        bind_outcome(stmt, 4, start);
        const RunProvenance& p = start.provenance;
        stmt.bind(18, p.model_sha256).bind(19, p.app_version).bind(20, p.app_commit).bind(21, p.cpu_model);
        stmt.bind(22, p.cpu_features).bind(23, p.backend).bind(24, p.n_threads);
        if (start.seed) stmt.bind(25, *start.seed);
        bind_drafts(stmt, 26, start);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "starting a run"));
        return conn.last_insert_id();
    });
}

Result<RowId> Store::save_evaluation(const EvaluationRecord& evaluation) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = or_now(evaluation.created_unix_ms);
    return impl_->writer->call([e = evaluation, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("INSERT INTO evaluations (configuration_id, reference_configuration_id, "
                                         "text_name, text_sha256, n_tokens, perplexity, kl_mean, top1_agreement, json, "
                                         "created_unix_ms, retrieval_accuracy) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
        stmt.bind_id(1, e.configuration_id).bind_id(2, e.reference_configuration_id).bind(3, e.text_name);
        stmt.bind(4, e.text_sha256).bind(5, e.n_tokens).bind(6, e.perplexity).bind(7, e.kl_mean);
        stmt.bind(8, e.top1_agreement).bind(9, e.json).bind(10, created).bind(11, e.retrieval_accuracy);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "saving an evaluation"));
        return conn.last_insert_id();
    });
}

Result<RowId> Store::save_benchmark(const BenchmarkRecord& benchmark) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = or_now(benchmark.created_unix_ms);
    return impl_->writer->call([b = benchmark, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("INSERT INTO benchmarks (configuration_id, test_name, n_prompt, n_gen, "
                                         "n_batch, n_threads, avg_ts, stddev_ts, json, created_unix_ms) "
                                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
        stmt.bind_id(1, b.configuration_id).bind(2, b.test_name).bind(3, b.n_prompt).bind(4, b.n_gen);
        stmt.bind(5, b.n_batch).bind(6, b.n_threads).bind(7, b.avg_ts).bind(8, b.stddev_ts).bind(9, b.json);
        stmt.bind(10, created);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "saving a benchmark row"));
        return conn.last_insert_id();
    });
}

Result<RowId> Store::save_comparison(const ComparisonRecord& comparison) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = or_now(comparison.created_unix_ms);
    return impl_->writer->call([c = comparison, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement insert, conn.prepare("INSERT INTO comparisons (name, prompt, created_unix_ms) "
                                                           "VALUES (?1, ?2, ?3)"));
        insert.bind(1, c.name).bind(2, c.prompt).bind(3, created);
        WB_RETURN_IF_ERROR(while_doing(insert.run(), "saving a comparison"));
        const int64_t id = conn.last_insert_id();
        for (size_t i = 0; i < c.configuration_ids.size(); ++i) {
            WB_ASSIGN_OR_RETURN(Statement link, conn.prepare("INSERT INTO comparison_configurations (comparison_id, "
                                                             "position, configuration_id, error) VALUES (?1, ?2, ?3, ?4)"));
            link.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, c.configuration_ids[i]);
            if (i < c.errors.size() && !c.errors[i].empty()) link.bind(4, c.errors[i]);
            WB_RETURN_IF_ERROR(while_doing(link.run(), "linking a configuration to comparison " + std::to_string(id)));
        }
        for (const RowId run_id : c.run_ids) {
            WB_ASSIGN_OR_RETURN(Statement link, conn.prepare("INSERT OR IGNORE INTO comparison_runs (comparison_id, "
                                                             "run_id) VALUES (?1, ?2)"));
            link.bind(1, id).bind(2, run_id);
            WB_RETURN_IF_ERROR(while_doing(link.run(), "linking run " + std::to_string(run_id) + " to a comparison"));
        }
        return id;
    });
}

Status Store::delete_session(RowId session_id) {
    if (!impl_->writer) return impl_->read_only_error();
    return impl_->writer
        ->call([session_id](Connection& conn) -> Result<int64_t> {
            WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("DELETE FROM sessions WHERE id = ?1"));
            stmt.bind(1, session_id);
            WB_RETURN_IF_ERROR(while_doing(stmt.run(), "deleting session " + std::to_string(session_id)));
            if (conn.changes() == 0)
                return error(StatusCode::not_found, conn.path() + ": no session " + std::to_string(session_id));
            return session_id;
        })
        .status();
}

Status Store::truncate_session(RowId session_id, int32_t keep_messages) {
    if (!impl_->writer) return impl_->read_only_error();
    if (keep_messages < 0) return error(StatusCode::invalid_argument, "truncating a session: keep_messages < 0");
    return impl_->writer
        ->call([session_id, keep_messages](Connection& conn) -> Result<int64_t> {
            WB_ASSIGN_OR_RETURN(Statement exists, conn.prepare("SELECT 1 FROM sessions WHERE id = ?1"));
            exists.bind(1, session_id);
            WB_ASSIGN_OR_RETURN(bool found, exists.next());
            if (!found) return error(StatusCode::not_found, conn.path() + ": no session " + std::to_string(session_id));
            // The first message that goes; none: nothing to do.
            WB_ASSIGN_OR_RETURN(Statement cut, conn.prepare("SELECT seq FROM messages WHERE session_id = ?1 "
                                                            "ORDER BY seq LIMIT 1 OFFSET ?2"));
            cut.bind(1, session_id).bind(2, static_cast<int64_t>(keep_messages));
            WB_ASSIGN_OR_RETURN(bool has_cut, cut.next());
            if (!has_cut) return int64_t{0};
            const int64_t first_seq = cut.column_int(0);
            // The replies' runs first (their samples and comparison links cascade), then the messages.
            WB_ASSIGN_OR_RETURN(Statement runs, conn.prepare("DELETE FROM runs WHERE id IN (SELECT run_id FROM messages "
                                                             "WHERE session_id = ?1 AND seq >= ?2 AND run_id IS NOT NULL)"));
            runs.bind(1, session_id).bind(2, first_seq);
            WB_RETURN_IF_ERROR(while_doing(runs.run(), "truncating session " + std::to_string(session_id)));
            WB_ASSIGN_OR_RETURN(Statement messages, conn.prepare("DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2"));
            messages.bind(1, session_id).bind(2, first_seq);
            WB_RETURN_IF_ERROR(while_doing(messages.run(), "truncating session " + std::to_string(session_id)));
            return conn.changes();
        })
        .status();
}

Result<RowId> Store::save_preset(const PresetRecord& preset) {
    if (!impl_->writer) return impl_->read_only_error();
    if (preset.name.empty()) return error(StatusCode::invalid_argument, "a preset needs a name");
    const int64_t created = or_now(preset.created_unix_ms);
    return impl_->writer->call([p = preset, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement insert,
                            conn.prepare("INSERT INTO presets (name, configuration_id, created_unix_ms) VALUES (?1, ?2, ?3) "
                                         "ON CONFLICT (name) DO UPDATE SET configuration_id = excluded.configuration_id, "
                                         "created_unix_ms = excluded.created_unix_ms"));
        insert.bind(1, p.name).bind(2, p.configuration_id).bind(3, created);
        WB_RETURN_IF_ERROR(while_doing(insert.run(), "saving preset '" + p.name + "'"));
        WB_ASSIGN_OR_RETURN(Statement find, conn.prepare("SELECT id FROM presets WHERE name = ?1"));
        find.bind(1, p.name);
        WB_ASSIGN_OR_RETURN(bool found, find.next());
        if (!found) return error(StatusCode::internal, conn.path() + ": a saved preset is missing");
        return find.column_int(0);
    });
}

Status Store::delete_preset(RowId preset_id) {
    if (!impl_->writer) return impl_->read_only_error();
    return impl_->writer
        ->call([preset_id](Connection& conn) -> Result<int64_t> {
            WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("DELETE FROM presets WHERE id = ?1"));
            stmt.bind(1, preset_id);
            WB_RETURN_IF_ERROR(while_doing(stmt.run(), "deleting preset " + std::to_string(preset_id)));
            if (conn.changes() == 0)
                return error(StatusCode::not_found, conn.path() + ": no preset " + std::to_string(preset_id));
            return preset_id;
        })
        .status();
}

// --- async writes ---

Status Store::add_message(const MessageRecord& message) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = or_now(message.created_unix_ms);
    impl_->writer->post([m = message, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("INSERT INTO messages (session_id, run_id, seq, role, text, created_unix_ms, "
                                         "reasoning, tool_calls, tool_call_id) "
                                         "VALUES (?1, ?2, (SELECT coalesce(max(seq) + 1, 0) FROM messages "
                                         "WHERE session_id = ?1), ?3, ?4, ?5, ?6, ?7, ?8)"));
        stmt.bind(1, m.session_id).bind_id(2, m.run_id).bind(3, m.role).bind(4, m.text).bind(5, created);
        // What a message does not have stays NULL.
        if (!m.reasoning.empty()) stmt.bind(6, m.reasoning);
        if (!m.tool_calls.empty()) stmt.bind(7, store::tool_calls_text(m.tool_calls));
        if (!m.tool_call_id.empty()) stmt.bind(8, m.tool_call_id);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "saving a message to session " + std::to_string(m.session_id)));
        return conn.last_insert_id();
    });
    return Status::ok_status();
}

Status Store::finish_run(const RunRecord& run) {
    if (!impl_->writer) return impl_->read_only_error();
    RunRecord outcome = run;
    outcome.finished_unix_ms = or_now(run.finished_unix_ms);
    impl_->writer->post([r = std::move(outcome)](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("UPDATE runs SET finished_unix_ms = ?1, n_tokens_prompt = ?2, "
                                         "n_tokens_generated = ?3, ttft_ms = ?4, prefill_tok_s = ?5, decode_tok_s = ?6, "
                                         "itl_ms_p50 = ?7, itl_ms_p90 = ?8, itl_ms_p99 = ?9, kv_bytes = ?10, "
                                         "kv_bytes_peak = ?11, kv_bytes_full = ?12, kv_bytes_read_per_token = ?13, "
                                         "stop_reason = ?14, draft_tokens = ?16, accepted_tokens = ?17, first_answer_ms = ?18 "
                                         "WHERE id = ?15"));
        bind_outcome(stmt, 1, r);
        stmt.bind(15, r.id);
        bind_drafts(stmt, 16, r);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "finishing run " + std::to_string(r.id)));
        if (conn.changes() == 0)
            return error(StatusCode::not_found, conn.path() + ": no run " + std::to_string(r.id) + " to finish");
        return r.id;
    });
    return Status::ok_status();
}

Status Store::append_samples(RowId run_id, std::vector<MetricSample> samples) {
    if (!impl_->writer) return impl_->read_only_error();
    if (samples.empty()) return Status::ok_status();
    impl_->writer->post([run_id, s = std::move(samples)](Connection& conn) -> Result<int64_t> {
        for (const MetricSample& sample : s) {
            WB_ASSIGN_OR_RETURN(Statement stmt,
                                conn.prepare("INSERT OR REPLACE INTO metric_samples (run_id, token_index, t_ms, "
                                             "kv_bytes, kv_bytes_full, itl_ms, tok_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
            stmt.bind(1, run_id).bind(2, sample.token_index).bind(3, sample.t_ms).bind(4, sample.kv_bytes);
            stmt.bind(5, sample.kv_bytes_full).bind(6, sample.itl_ms).bind(7, sample.tok_s);
            WB_RETURN_IF_ERROR(while_doing(stmt.run(), "saving samples of run " + std::to_string(run_id)));
        }
        return run_id;
    });
    return Status::ok_status();
}

Status Store::set_session_title(RowId session_id, std::string title) {
    if (!impl_->writer) return impl_->read_only_error();
    impl_->writer->post([session_id, t = std::move(title)](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("UPDATE sessions SET title = ?1 WHERE id = ?2"));
        stmt.bind(1, t).bind(2, session_id);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "renaming session " + std::to_string(session_id)));
        return session_id;
    });
    return Status::ok_status();
}

Status Store::add_comparison_run(RowId comparison_id, RowId run_id) {
    if (!impl_->writer) return impl_->read_only_error();
    impl_->writer->post([comparison_id, run_id](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("INSERT OR IGNORE INTO comparison_runs (comparison_id, run_id) "
                                                         "VALUES (?1, ?2)"));
        stmt.bind(1, comparison_id).bind(2, run_id);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "linking run " + std::to_string(run_id) + " to comparison " +
                                                       std::to_string(comparison_id)));
        return comparison_id;
    });
    return Status::ok_status();
}

}  // namespace workbench
