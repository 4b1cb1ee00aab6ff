// A session as a document: JSON (everything, samples included), CSV (runs; samples) and a
// Markdown transcript. Each export reads inside one read transaction, so a session that is
// being written to exports as one consistent state.
#include <cstdio>
#include <utility>

#include "store/store_impl.h"
#include "store/store_schema.h"
#include "store/store_text.h"

namespace workbench {

using store::Connection;
using store::JsonObject;

namespace {

// The configuration of a session, or none when it was started without one.
Result<std::optional<ConfigurationRecord>> session_configuration(Connection& conn, const SessionRecord& session) {
    if (session.configuration_id == 0) return std::optional<ConfigurationRecord>();
    WB_ASSIGN_OR_RETURN(ConfigurationRecord config, store::read_configuration(conn, session.configuration_id));
    return std::optional<ConfigurationRecord>(std::move(config));
}

void append_id(JsonObject& object, std::string_view key, RowId id) {
    if (id == 0) object.key(key) += "null";
    else object.field(key, id);
}

void append_run_json(std::string& out, const RunRecord& run, const std::vector<MetricSample>& samples) {
    JsonObject o(out);
    o.field("id", run.id);
    append_id(o, "configuration_id", run.configuration_id);
    o.field("started_unix_ms", run.started_unix_ms).field("finished_unix_ms", run.finished_unix_ms);
    o.field("n_tokens_prompt", static_cast<int64_t>(run.n_tokens_prompt));
    o.field("n_tokens_generated", static_cast<int64_t>(run.n_tokens_generated));
    o.field("ttft_ms", run.ttft_ms).field("prefill_tok_s", run.prefill_tok_s).field("decode_tok_s", run.decode_tok_s);
    o.field("itl_ms_p50", run.itl_ms_p50).field("itl_ms_p90", run.itl_ms_p90).field("itl_ms_p99", run.itl_ms_p99);
    o.field("kv_bytes", static_cast<int64_t>(run.kv_bytes)).field("kv_bytes_peak", static_cast<int64_t>(run.kv_bytes_peak));
    o.field("kv_bytes_full", static_cast<int64_t>(run.kv_bytes_full));
    o.field("kv_bytes_read_per_token", static_cast<int64_t>(run.kv_bytes_read_per_token));
    o.field("stop_reason", run.stop_reason);
    JsonObject p(o.key("provenance"));
    p.field("model_sha256", run.provenance.model_sha256).field("app_version", run.provenance.app_version);
    p.field("app_commit", run.provenance.app_commit).field("cpu_model", run.provenance.cpu_model);
    p.field("cpu_features", run.provenance.cpu_features).field("backend", run.provenance.backend);
    p.field("n_threads", static_cast<int64_t>(run.provenance.n_threads));
    p.close();
    std::string& array = o.key("samples");
    array += '[';
    for (size_t i = 0; i < samples.size(); ++i) {
        if (i > 0) array += ',';
        const MetricSample& s = samples[i];
        JsonObject so(array);
        so.field("token_index", static_cast<int64_t>(s.token_index)).field("t_ms", s.t_ms);
        so.field("kv_bytes", static_cast<int64_t>(s.kv_bytes)).field("kv_bytes_full", static_cast<int64_t>(s.kv_bytes_full));
        so.field("itl_ms", s.itl_ms).field("tok_s", s.tok_s);
        so.close();
    }
    array += ']';
    o.close();
}

std::string format_fixed(double value, int decimals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

// "52 tokens · TTFT 123.4 ms · 45.6 tok/s · stop: max_tokens" under an assistant message.
std::string run_line(const RunRecord& run) {
    std::string line = std::to_string(run.n_tokens_generated) + " tokens";
    if (run.ttft_ms) line += " · TTFT " + format_fixed(*run.ttft_ms, 1) + " ms";
    if (run.decode_tok_s) line += " · " + format_fixed(*run.decode_tok_s, 1) + " tok/s";
    if (run.finished_unix_ms == 0) line += " · unfinished";
    else if (!run.stop_reason.empty()) line += " · stop: " + run.stop_reason;
    return line;
}

}  // namespace

Result<std::string> Store::export_session_json(RowId session_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::string> {
        WB_ASSIGN_OR_RETURN(SessionRecord session, store::read_session(conn, session_id));
        WB_ASSIGN_OR_RETURN(std::optional<ConfigurationRecord> config, session_configuration(conn, session));
        WB_ASSIGN_OR_RETURN(std::vector<MessageRecord> messages, store::read_messages(conn, session_id));
        WB_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, store::read_runs(conn, session_id));
        std::string out;
        JsonObject root(out);
        root.field("format", "inference-workbench-session");
        root.field("schema_version", static_cast<int64_t>(store::current_schema_version()));
        JsonObject s(root.key("session"));
        s.field("id", session.id).field("title", session.title);
        s.field("created_unix_ms", session.created_unix_ms).field("updated_unix_ms", session.updated_unix_ms);
        s.field("created_utc", store::format_utc(session.created_unix_ms));
        s.close();
        if (config) {
            JsonObject c(root.key("configuration"));
            c.field("id", config->id).field("model", config->model).field("backend", config->backend);
            c.field("variant", config->variant).field("kv_dtype", config->kv_dtype);
            c.field("weight_type", config->weight_type).raw("engine_config", config->config_json);
            c.close();
        } else {
            root.key("configuration") += "null";
        }
        std::string& message_array = root.key("messages");
        message_array += '[';
        for (size_t i = 0; i < messages.size(); ++i) {
            if (i > 0) message_array += ',';
            JsonObject m(message_array);
            m.field("seq", static_cast<int64_t>(messages[i].seq)).field("role", messages[i].role);
            m.field("text", messages[i].text);
            append_id(m, "run_id", messages[i].run_id);
            m.field("created_unix_ms", messages[i].created_unix_ms);
            m.close();
        }
        message_array += ']';
        std::string& run_array = root.key("runs");
        run_array += '[';
        for (size_t i = 0; i < runs.size(); ++i) {
            if (i > 0) run_array += ',';
            WB_ASSIGN_OR_RETURN(std::vector<MetricSample> samples, store::read_samples(conn, runs[i].id));
            append_run_json(run_array, runs[i], samples);
        }
        run_array += ']';
        root.close();
        out += '\n';
        return out;
    });
}

Result<std::string> Store::export_runs_csv(RowId session_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::string> {
        WB_RETURN_IF_ERROR(store::read_session(conn, session_id).status());
        WB_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, store::read_runs(conn, session_id));
        std::string out =
            "run_id,session_id,configuration_id,started_utc,finished_utc,n_tokens_prompt,n_tokens_generated,ttft_ms,"
            "prefill_tok_s,decode_tok_s,itl_ms_p50,itl_ms_p90,itl_ms_p99,kv_bytes,kv_bytes_peak,kv_bytes_full,"
            "kv_bytes_read_per_token,stop_reason,model_sha256,app_version,app_commit,cpu_model,cpu_features,backend,"
            "n_threads\n";
        for (const RunRecord& r : runs) {
            out += std::to_string(r.id) + ',' + std::to_string(r.session_id) + ',' + std::to_string(r.configuration_id) + ',';
            out += store::format_utc(r.started_unix_ms) + ',' + store::format_utc(r.finished_unix_ms) + ',';
            out += std::to_string(r.n_tokens_prompt) + ',' + std::to_string(r.n_tokens_generated) + ',';
            for (const auto& figure : {r.ttft_ms, r.prefill_tok_s, r.decode_tok_s, r.itl_ms_p50, r.itl_ms_p90, r.itl_ms_p99}) {
                store::append_csv_number(out, figure);
                out += ',';
            }
            out += std::to_string(r.kv_bytes) + ',' + std::to_string(r.kv_bytes_peak) + ',' +
                   std::to_string(r.kv_bytes_full) + ',' + std::to_string(r.kv_bytes_read_per_token) + ',';
            const RunProvenance& p = r.provenance;
            for (const std::string* text : {&r.stop_reason, &p.model_sha256, &p.app_version, &p.app_commit,
                                            &p.cpu_model, &p.cpu_features, &p.backend}) {
                store::append_csv_field(out, *text);
                out += ',';
            }
            out += std::to_string(p.n_threads) + '\n';
        }
        return out;
    });
}

Result<std::string> Store::export_samples_csv(RowId session_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::string> {
        WB_RETURN_IF_ERROR(store::read_session(conn, session_id).status());
        WB_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, store::read_runs(conn, session_id));
        std::string out = "run_id,token_index,t_ms,kv_bytes,kv_bytes_full,itl_ms,tok_s\n";
        for (const RunRecord& r : runs) {
            WB_ASSIGN_OR_RETURN(std::vector<MetricSample> samples, store::read_samples(conn, r.id));
            for (const MetricSample& s : samples) {
                out += std::to_string(r.id) + ',' + std::to_string(s.token_index) + ',';
                store::append_number(out, s.t_ms);
                out += ',' + std::to_string(s.kv_bytes) + ',' + std::to_string(s.kv_bytes_full) + ',';
                store::append_csv_number(out, s.itl_ms);
                out += ',';
                store::append_csv_number(out, s.tok_s);
                out += '\n';
            }
        }
        return out;
    });
}

Result<std::string> Store::export_session_markdown(RowId session_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::string> {
        WB_ASSIGN_OR_RETURN(SessionRecord session, store::read_session(conn, session_id));
        WB_ASSIGN_OR_RETURN(std::optional<ConfigurationRecord> config, session_configuration(conn, session));
        WB_ASSIGN_OR_RETURN(std::vector<MessageRecord> messages, store::read_messages(conn, session_id));
        WB_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, store::read_runs(conn, session_id));
        std::string title = session.title;
        for (const MessageRecord& m : messages)
            if (title.empty() && m.role == "user") title = m.text.substr(0, m.text.find('\n'));
        std::string out = "# " + (title.empty() ? "Session " + std::to_string(session.id) : title) + "\n\n";
        if (config) out += "- Model: " + config->model + " (" + store::config_summary(*config) + ")\n";
        out += "- Started: " + store::format_utc(session.created_unix_ms) + "\n";
        for (const MessageRecord& m : messages) {
            std::string role = m.role;
            if (!role.empty()) role[0] = static_cast<char>(role[0] - ('a' <= role[0] && role[0] <= 'z' ? 32 : 0));
            out += "\n## " + role + "\n\n" + m.text + "\n";
            for (const RunRecord& r : runs)
                if (m.run_id != 0 && r.id == m.run_id) out += "\n_" + run_line(r) + "_\n";
        }
        return out;
    });
}

}  // namespace workbench
