// A session as a document: JSON (everything, samples included), CSV (runs; samples) and a
// Markdown transcript. Each export reads inside one read transaction, so a session that is
// being written to exports as one consistent state.
#include <cstdio>
#include <map>
#include <utility>

#include "store/store_impl.h"
#include "store/store_schema.h"
#include "store/store_text.h"
#include "workbench/json.h"

namespace workbench {

using store::Connection;

namespace {

// The configuration of a session, or none when it was started without one.
Result<std::optional<ConfigurationRecord>> session_configuration(Connection& conn, const SessionRecord& session) {
    if (session.configuration_id == 0) return std::optional<ConfigurationRecord>();
    WB_ASSIGN_OR_RETURN(ConfigurationRecord config, store::read_configuration(conn, session.configuration_id));
    return std::optional<ConfigurationRecord>(std::move(config));
}

// Each run's configuration, by id (the session's runs may have run under several).
Result<std::map<RowId, ConfigurationRecord>> configurations_by_id(Connection& conn, RowId session_id) {
    WB_ASSIGN_OR_RETURN(std::vector<ConfigurationRecord> used, store::read_run_configurations(conn, session_id));
    std::map<RowId, ConfigurationRecord> out;
    for (ConfigurationRecord& c : used) out.emplace(c.id, std::move(c));
    return out;
}

// A row id, or null where the row has none (0).
Json id_or_null(RowId id) { return id == 0 ? Json(nullptr) : Json(id); }

Json run_json(const RunRecord& run, const std::vector<MetricSample>& samples, const std::map<RowId, ConfigurationRecord>& configs) {
    Json o;
    o["id"] = run.id;
    o["configuration_id"] = id_or_null(run.configuration_id);
    const auto config = configs.find(run.configuration_id);
    o["configuration"] = config == configs.end() ? Json(nullptr) : Json(store::config_summary(config->second));
    o["started_unix_ms"] = run.started_unix_ms;
    o["finished_unix_ms"] = run.finished_unix_ms;
    o["n_tokens_prompt"] = run.n_tokens_prompt;
    o["n_tokens_generated"] = run.n_tokens_generated;
    o["ttft_ms"] = json_number(run.ttft_ms);
    o["first_answer_ms"] = json_number(run.first_answer_ms);
    o["prefill_tok_s"] = json_number(run.prefill_tok_s);
    o["decode_tok_s"] = json_number(run.decode_tok_s);
    o["itl_ms_p50"] = json_number(run.itl_ms_p50);
    o["itl_ms_p90"] = json_number(run.itl_ms_p90);
    o["itl_ms_p99"] = json_number(run.itl_ms_p99);
    o["kv_bytes"] = run.kv_bytes;
    o["kv_bytes_peak"] = run.kv_bytes_peak;
    o["kv_bytes_full"] = run.kv_bytes_full;
    o["kv_bytes_read_per_token"] = run.kv_bytes_read_per_token;
    o["stop_reason"] = run.stop_reason;
    o["seed"] = run.seed ? Json(*run.seed) : Json(nullptr);
    o["draft_tokens"] = run.n_draft_tokens ? Json(*run.n_draft_tokens) : Json(nullptr);
    o["accepted_tokens"] = run.n_accepted_tokens ? Json(*run.n_accepted_tokens) : Json(nullptr);
    const RunProvenance& p = run.provenance;
    o["provenance"] = {{"model_sha256", p.model_sha256}, {"app_version", p.app_version}, {"app_commit", p.app_commit},
                       {"cpu_model", p.cpu_model},       {"cpu_features", p.cpu_features}, {"backend", p.backend},
                       {"n_threads", p.n_threads}};
    Json& array = o["samples"] = Json::array();
    for (const MetricSample& s : samples)
        array.push_back({{"token_index", s.token_index}, {"t_ms", json_number(s.t_ms)}, {"kv_bytes", s.kv_bytes},
                         {"kv_bytes_full", s.kv_bytes_full}, {"itl_ms", json_number(s.itl_ms)}, {"tok_s", json_number(s.tok_s)}});
    return o;
}

// The stored EngineConfig text as JSON; null when the row holds none, a string when it does not
// parse (a row written by hand), so the export still says what is there.
Json stored_json(const std::string& text) {
    if (text.empty()) return nullptr;
    auto parsed = parse_json(text);
    return parsed.ok() ? *std::move(parsed) : Json(text);
}

Json configuration_json(const ConfigurationRecord& config) {
    return {{"id", config.id},         {"model", config.model},          {"backend", config.backend},
            {"variant", config.variant}, {"kv_dtype", config.kv_dtype}, {"weight_type", config.weight_type},
            {"summary", store::config_summary(config)}, {"engine_config", stored_json(config.config_json)}};
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
        Json root;
        root["format"] = "inference-workbench-session";
        root["schema_version"] = store::current_schema_version();
        root["session"] = {{"id", session.id},
                           {"title", session.title},
                           {"created_unix_ms", session.created_unix_ms},
                           {"updated_unix_ms", session.updated_unix_ms},
                           {"created_utc", store::format_utc(session.created_unix_ms)}};
        // "configuration": what the session started with; "configurations": what its runs ran
        // under (a run names its own by configuration_id).
        root["configuration"] = config ? configuration_json(*config) : Json(nullptr);
        WB_ASSIGN_OR_RETURN(auto run_configs, configurations_by_id(conn, session_id));
        Json& used = root["configurations"] = Json::array();
        for (const auto& [id, c] : run_configs) used.push_back(configuration_json(c));
        Json& message_array = root["messages"] = Json::array();
        for (const MessageRecord& m : messages) {
            Json message = {{"seq", m.seq}, {"role", m.role}, {"text", m.text}, {"run_id", id_or_null(m.run_id)},
                            {"created_unix_ms", m.created_unix_ms}};
            if (!m.reasoning.empty()) message["reasoning"] = m.reasoning;
            if (!m.tool_calls.empty()) {
                Json& calls = message["tool_calls"] = Json::array();
                for (const ToolCall& c : m.tool_calls) calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
            }
            if (!m.tool_call_id.empty()) message["tool_call_id"] = m.tool_call_id;
            message_array.push_back(std::move(message));
        }
        Json& run_array = root["runs"] = Json::array();
        for (const RunRecord& run : runs) {
            WB_ASSIGN_OR_RETURN(std::vector<MetricSample> samples, store::read_samples(conn, run.id));
            run_array.push_back(run_json(run, samples, run_configs));
        }
        std::string out = dump_json(root);
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
            "n_threads,seed,draft_tokens,accepted_tokens,first_answer_ms,configuration\n";
        WB_ASSIGN_OR_RETURN(auto configs, configurations_by_id(conn, session_id));
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
            out += std::to_string(p.n_threads) + ',';
            if (r.seed) out += std::to_string(*r.seed);
            out += ',';
            if (r.n_draft_tokens) out += std::to_string(*r.n_draft_tokens);
            out += ',';
            if (r.n_accepted_tokens) out += std::to_string(*r.n_accepted_tokens);
            out += ',';
            store::append_csv_number(out, r.first_answer_ms);
            out += ',';
            if (const auto c = configs.find(r.configuration_id); c != configs.end()) store::append_csv_field(out, store::config_summary(c->second));
            out += '\n';
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
                store::append_csv_number(out, s.t_ms);
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
        WB_ASSIGN_OR_RETURN(auto configs, configurations_by_id(conn, session_id));
        // One configuration: the header names it. Several: each reply names its own.
        const bool mixed = configs.size() > 1;
        if (mixed) out += "- Configurations: " + std::to_string(configs.size()) + " (each reply names its own)\n";
        else if (!configs.empty()) out += "- Model: " + configs.begin()->second.model + " (" + store::config_summary(configs.begin()->second) + ")\n";
        else if (config) out += "- Model: " + config->model + " (" + store::config_summary(*config) + ")\n";
        out += "- Started: " + store::format_utc(session.created_unix_ms) + "\n";
        for (const MessageRecord& m : messages) {
            std::string role = m.role;
            if (!role.empty()) role[0] = static_cast<char>(role[0] - ('a' <= role[0] && role[0] <= 'z' ? 32 : 0));
            out += "\n## " + role + "\n\n" + m.text + "\n";
            for (const RunRecord& r : runs) {
                if (m.run_id == 0 || r.id != m.run_id) continue;
                std::string line = run_line(r);
                if (const auto c = configs.find(r.configuration_id); mixed && c != configs.end())
                    line += " · " + configuration_label(c->second);
                out += "\n_" + line + "_\n";
            }
        }
        return out;
    });
}

}  // namespace workbench
