// The store's reads, on the read connection: session lists with filters and full-text search,
// a session's messages, runs and samples, and the measurement tables. Never writes.
#include <utility>

#include "store/store_impl.h"
#include "store/store_text.h"

namespace workbench {

using store::Connection;
using store::Statement;

namespace store {

namespace {

constexpr const char* kRunColumns =
    "id, session_id, configuration_id, started_unix_ms, finished_unix_ms, n_tokens_prompt, n_tokens_generated, "
    "ttft_ms, prefill_tok_s, decode_tok_s, itl_ms_p50, itl_ms_p90, itl_ms_p99, kv_bytes, kv_bytes_peak, "
    "kv_bytes_full, kv_bytes_read_per_token, stop_reason, model_sha256, app_version, app_commit, cpu_model, "
    "cpu_features, backend, n_threads, seed, draft_tokens, accepted_tokens, first_answer_ms";

RunRecord run_from_row(const Statement& row) {
    RunRecord run;
    run.id = row.column_int(0);
    run.session_id = row.column_int(1);
    run.configuration_id = row.column_int(2);
    run.started_unix_ms = row.column_int(3);
    run.finished_unix_ms = row.column_int(4);
    run.n_tokens_prompt = static_cast<int32_t>(row.column_int(5));
    run.n_tokens_generated = static_cast<int32_t>(row.column_int(6));
    run.ttft_ms = row.column_optional(7);
    run.prefill_tok_s = row.column_optional(8);
    run.decode_tok_s = row.column_optional(9);
    run.itl_ms_p50 = row.column_optional(10);
    run.itl_ms_p90 = row.column_optional(11);
    run.itl_ms_p99 = row.column_optional(12);
    run.kv_bytes = row.column_u64(13);
    run.kv_bytes_peak = row.column_u64(14);
    run.kv_bytes_full = row.column_u64(15);
    run.kv_bytes_read_per_token = row.column_u64(16);
    run.stop_reason = row.column_text(17);
    run.provenance.model_sha256 = row.column_text(18);
    run.provenance.app_version = row.column_text(19);
    run.provenance.app_commit = row.column_text(20);
    run.provenance.cpu_model = row.column_text(21);
    run.provenance.cpu_features = row.column_text(22);
    run.provenance.backend = row.column_text(23);
    run.provenance.n_threads = static_cast<int32_t>(row.column_int(24));
    if (!row.column_is_null(25)) run.seed = row.column_int(25);
    if (!row.column_is_null(26)) run.n_draft_tokens = static_cast<int32_t>(row.column_int(26));
    if (!row.column_is_null(27)) run.n_accepted_tokens = static_cast<int32_t>(row.column_int(27));
    run.first_answer_ms = row.column_optional(28);
    return run;
}

Status no_row(const Connection& conn, const char* what, RowId id) {
    return error(StatusCode::not_found, conn.path() + ": no " + what + " " + std::to_string(id));
}

// The first line of a message, cut at a character boundary: a list title, not the whole text.
std::string title_from(const std::string& text) {
    constexpr size_t kMaxBytes = 120;
    std::string title = text.substr(0, text.find('\n'));
    if (title.size() > kMaxBytes) {
        size_t cut = kMaxBytes;
        while (cut > 0 && (static_cast<unsigned char>(title[cut]) & 0xc0) == 0x80) --cut;
        title = title.substr(0, cut) + "…";
    }
    return title;
}

}  // namespace

std::string fts_query(const std::string& text) {
    std::string query;
    size_t i = 0;
    while (i < text.size()) {
        const size_t start = text.find_first_not_of(" \t\r\n", i);
        if (start == std::string::npos) break;
        size_t end = text.find_first_of(" \t\r\n", start);
        if (end == std::string::npos) end = text.size();
        if (!query.empty()) query += ' ';
        query += '"';
        for (size_t k = start; k < end; ++k) {
            if (text[k] == '"') query += '"';
            query += text[k];
        }
        query += '"';
        i = end;
    }
    if (!query.empty()) query += '*';
    return query;
}

std::string config_summary(const ConfigurationRecord& config) {
    if (config.variant.empty() && config.kv_dtype.empty() && config.backend.empty()) return {};
    std::string summary = config.variant.empty() ? "full" : config.variant;
    summary += " · KV " + (config.kv_dtype.empty() ? std::string("f16") : config.kv_dtype);
    summary += " · weights " + (config.weight_type.empty() ? std::string("as stored") : config.weight_type);
    if (!config.backend.empty()) summary += " · " + config.backend;
    return summary;
}

Result<SessionRecord> read_session(Connection& conn, RowId session_id) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT id, configuration_id, title, created_unix_ms, "
                                                     "updated_unix_ms FROM sessions WHERE id = ?1"));
    stmt.bind(1, session_id);
    WB_ASSIGN_OR_RETURN(bool found, stmt.next());
    if (!found) return no_row(conn, "session", session_id);
    SessionRecord session;
    session.id = stmt.column_int(0);
    session.configuration_id = stmt.column_int(1);
    session.title = stmt.column_text(2);
    session.created_unix_ms = stmt.column_int(3);
    session.updated_unix_ms = stmt.column_int(4);
    return session;
}

Result<std::vector<MessageRecord>> read_messages(Connection& conn, RowId session_id) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT id, session_id, run_id, seq, role, text, created_unix_ms, "
                                                     "reasoning, tool_calls, tool_call_id "
                                                     "FROM messages WHERE session_id = ?1 ORDER BY seq"));
    stmt.bind(1, session_id);
    std::vector<MessageRecord> messages;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        MessageRecord m;
        m.id = stmt.column_int(0);
        m.session_id = stmt.column_int(1);
        m.run_id = stmt.column_int(2);
        m.seq = static_cast<int32_t>(stmt.column_int(3));
        m.role = stmt.column_text(4);
        m.text = stmt.column_text(5);
        m.created_unix_ms = stmt.column_int(6);
        m.reasoning = stmt.column_text(7);
        m.tool_calls = tool_calls_from_text(stmt.column_text(8));
        m.tool_call_id = stmt.column_text(9);
        messages.push_back(std::move(m));
    }
    return messages;
}

Result<std::vector<RunRecord>> read_runs(Connection& conn, RowId session_id) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string("SELECT ") + kRunColumns +
                                                     " FROM runs WHERE session_id = ?1 ORDER BY started_unix_ms, id"));
    stmt.bind(1, session_id);
    std::vector<RunRecord> runs;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        runs.push_back(run_from_row(stmt));
    }
    return runs;
}

Result<std::vector<MetricSample>> read_samples(Connection& conn, RowId run_id) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT token_index, t_ms, kv_bytes, kv_bytes_full, itl_ms, tok_s "
                                                     "FROM metric_samples WHERE run_id = ?1 ORDER BY token_index"));
    stmt.bind(1, run_id);
    std::vector<MetricSample> samples;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        MetricSample s;
        s.token_index = static_cast<int32_t>(stmt.column_int(0));
        s.t_ms = stmt.column_double(1);
        s.kv_bytes = stmt.column_u64(2);
        s.kv_bytes_full = stmt.column_u64(3);
        s.itl_ms = stmt.column_optional(4);
        s.tok_s = stmt.column_optional(5);
        samples.push_back(s);
    }
    return samples;
}

namespace {

constexpr const char* kConfigurationColumns = "id, model, backend, variant, kv_dtype, weight_type, config_json";

ConfigurationRecord configuration_from_row(const Statement& row) {
    ConfigurationRecord c;
    c.id = row.column_int(0);
    c.model = row.column_text(1);
    c.backend = row.column_text(2);
    c.variant = row.column_text(3);
    c.kv_dtype = row.column_text(4);
    c.weight_type = row.column_text(5);
    c.config_json = row.column_text(6);
    return c;
}

}  // namespace

Result<ConfigurationRecord> read_configuration(Connection& conn, RowId configuration_id) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string("SELECT ") + kConfigurationColumns +
                                                     " FROM configurations WHERE id = ?1"));
    stmt.bind(1, configuration_id);
    WB_ASSIGN_OR_RETURN(bool found, stmt.next());
    if (!found) return no_row(conn, "configuration", configuration_id);
    return configuration_from_row(stmt);
}

Result<std::vector<ConfigurationRecord>> read_run_configurations(Connection& conn, RowId session_id) {
    const std::string sql = std::string("SELECT ") + kConfigurationColumns +
                            " FROM configurations WHERE id IN (SELECT configuration_id FROM runs WHERE session_id = ?1) "
                            "ORDER BY (SELECT min(r.id) FROM runs r WHERE r.session_id = ?1 AND r.configuration_id = configurations.id)";
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(sql));
    stmt.bind(1, session_id);
    std::vector<ConfigurationRecord> out;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        out.push_back(configuration_from_row(stmt));
    }
    return out;
}

namespace {

Result<std::vector<SessionSummary>> list_sessions_on(Connection& conn, const SessionFilter& filter) {
    const std::string match = fts_query(filter.search_text);
    std::string sql =
        "SELECT s.id, s.title, s.created_unix_ms, s.updated_unix_ms, coalesce(c.model, ''), coalesce(c.variant, ''), "
        "coalesce(c.kv_dtype, ''), coalesce(c.weight_type, ''), coalesce(c.backend, ''), "
        "coalesce((SELECT m.text FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.seq LIMIT 1), ''), "
        "(SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'user'), "
        "(SELECT coalesce(sum(r.n_tokens_prompt), 0) FROM runs r WHERE r.session_id = s.id), "
        "(SELECT coalesce(sum(r.n_tokens_generated), 0) FROM runs r WHERE r.session_id = s.id), "
        "(SELECT avg(r.decode_tok_s) FROM runs r WHERE r.session_id = s.id), "
        "(SELECT count(DISTINCT r.configuration_id) FROM runs r WHERE r.session_id = s.id) "
        "FROM sessions s LEFT JOIN configurations c ON c.id = s.configuration_id "
        // A session matches a model or variant it started with or any of its turns ran under.
        "WHERE (?1 = '' OR c.model = ?1 OR EXISTS (SELECT 1 FROM runs r JOIN configurations rc ON rc.id = r.configuration_id "
        "WHERE r.session_id = s.id AND rc.model = ?1)) "
        "AND (?2 = '' OR c.variant = ?2 OR EXISTS (SELECT 1 FROM runs r JOIN configurations rc ON rc.id = r.configuration_id "
        "WHERE r.session_id = s.id AND rc.variant = ?2)) "
        "AND (?3 = 0 OR s.created_unix_ms >= ?3) AND (?4 = 0 OR s.created_unix_ms < ?4) "
        "AND (?8 = 1 OR NOT EXISTS (SELECT 1 FROM runs r JOIN comparison_runs cr ON cr.run_id = r.id "
        "WHERE r.session_id = s.id)) ";
    // Two statements rather than one with "?5 = '' OR": FTS5 rejects an empty MATCH string.
    if (!match.empty())
        sql += "AND s.id IN (SELECT m.session_id FROM messages_fts f JOIN messages m ON m.id = f.rowid "
               "WHERE messages_fts MATCH ?5) ";
    sql += "ORDER BY s.updated_unix_ms DESC, s.id DESC LIMIT ?6 OFFSET ?7";
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(sql));
    stmt.bind(1, filter.model).bind(2, filter.variant).bind(3, filter.created_from_unix_ms);
    stmt.bind(4, filter.created_to_unix_ms);
    if (!match.empty()) stmt.bind(5, match);
    stmt.bind(6, static_cast<int64_t>(filter.limit > 0 ? filter.limit : -1)).bind(7, static_cast<int64_t>(filter.offset));
    stmt.bind(8, static_cast<int64_t>(filter.include_comparisons ? 1 : 0));
    std::vector<SessionSummary> sessions;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        SessionSummary s;
        s.id = stmt.column_int(0);
        s.title = stmt.column_text(1);
        s.created_unix_ms = stmt.column_int(2);
        s.updated_unix_ms = stmt.column_int(3);
        ConfigurationRecord config;
        config.model = stmt.column_text(4);
        config.variant = stmt.column_text(5);
        config.kv_dtype = stmt.column_text(6);
        config.weight_type = stmt.column_text(7);
        config.backend = stmt.column_text(8);
        s.model = config.model;
        s.variant = config.variant;
        s.config_summary = config_summary(config);
        if (s.title.empty()) s.title = title_from(stmt.column_text(9));
        s.n_turns = static_cast<int32_t>(stmt.column_int(10));
        s.n_tokens_prompt = stmt.column_int(11);
        s.n_tokens_generated = stmt.column_int(12);
        s.mean_decode_tok_s = stmt.column_optional(13);
        s.n_configurations = static_cast<int32_t>(stmt.column_int(14));
        sessions.push_back(std::move(s));
    }
    // Turns under different configurations: the list says so rather than show the first one.
    for (SessionSummary& s : sessions) {
        if (s.n_configurations < 2) continue;
        WB_ASSIGN_OR_RETURN(std::vector<ConfigurationRecord> used, read_run_configurations(conn, s.id));
        auto same = [&](auto field) {
            for (const ConfigurationRecord& c : used)
                if (c.*field != used.front().*field) return false;
            return true;
        };
        s.model = same(&ConfigurationRecord::model) ? used.front().model : "mixed";
        s.variant = same(&ConfigurationRecord::variant) ? used.front().variant : "mixed";
        s.config_summary = "mixed: " + std::to_string(used.size()) + " configurations";
    }
    return sessions;
}

}  // namespace

}  // namespace store

Result<std::vector<SessionSummary>> Store::list_sessions(const SessionFilter& filter) const {
    return impl_->read([&](Connection& conn) { return store::list_sessions_on(conn, filter); });
}

Result<SessionRecord> Store::load_session(RowId session_id) const {
    return impl_->read([&](Connection& conn) { return store::read_session(conn, session_id); });
}

Result<std::vector<MessageRecord>> Store::load_messages(RowId session_id) const {
    return impl_->read([&](Connection& conn) { return store::read_messages(conn, session_id); });
}

Result<std::vector<RunRecord>> Store::load_runs(RowId session_id) const {
    return impl_->read([&](Connection& conn) { return store::read_runs(conn, session_id); });
}

Result<RunRecord> Store::load_run(RowId run_id) const {
    return impl_->read([&](Connection& conn) -> Result<RunRecord> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string("SELECT ") + store::kRunColumns +
                                                         " FROM runs WHERE id = ?1"));
        stmt.bind(1, run_id);
        WB_ASSIGN_OR_RETURN(bool found, stmt.next());
        if (!found) return store::no_row(conn, "run", run_id);
        return store::run_from_row(stmt);
    });
}

Result<std::vector<MetricSample>> Store::load_samples(RowId run_id) const {
    return impl_->read([&](Connection& conn) { return store::read_samples(conn, run_id); });
}

Result<ConfigurationRecord> Store::load_configuration(RowId configuration_id) const {
    return impl_->read([&](Connection& conn) { return store::read_configuration(conn, configuration_id); });
}

Result<std::vector<ConfigurationRecord>> Store::load_run_configurations(RowId session_id) const {
    return impl_->read([&](Connection& conn) { return store::read_run_configurations(conn, session_id); });
}

std::string configuration_summary(const ConfigurationRecord& config) { return store::config_summary(config); }
std::string configuration_label(const ConfigurationRecord& config) { return config.model + " · " + store::config_summary(config); }

Result<std::vector<ConfigurationRecord>> Store::list_configurations() const {
    return impl_->read([&](Connection& conn) -> Result<std::vector<ConfigurationRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string("SELECT ") + store::kConfigurationColumns +
                                                         " FROM configurations ORDER BY model, variant, id"));
        std::vector<ConfigurationRecord> configs;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            configs.push_back(store::configuration_from_row(stmt));
        }
        return configs;
    });
}

}  // namespace workbench
