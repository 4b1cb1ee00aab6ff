// Building store records from what the engine reports: a configuration row from an EngineConfig,
// a run's metrics from GenerationMetrics, this build's provenance, and chat turns as message rows
// and back. No SQLite here.
#include <fstream>
#include <string>

#include "store/store_text.h"
#include "workbench/store.h"

namespace workbench {

ConfigurationRecord make_configuration(const EngineConfig& config) {
    ConfigurationRecord record;
    const size_t slash = config.model_path.find_last_of('/');
    record.model = slash == std::string::npos ? config.model_path : config.model_path.substr(slash + 1);
    record.backend = config.backend;
    record.variant = config.attention;
    record.kv_dtype = config.kv_types;
    record.weight_type = config.weight_type;
    record.config_json = engine_config_json(config);
    return record;
}

void apply_metrics(RunRecord& run, const GenerationMetrics& metrics) {
    run.n_tokens_prompt = metrics.n_prompt_tokens;
    run.n_tokens_generated = metrics.n_generated;
    // A run that produced no token has no time to first token.
    run.ttft_ms = metrics.n_generated > 0 ? std::optional<double>(metrics.ttft_ms) : std::nullopt;
    run.first_answer_ms = metrics.first_answer_ms;
    run.prefill_tok_s = metrics.prefill_tok_s;
    run.decode_tok_s = metrics.decode_tok_s;
    run.itl_ms_p50 = metrics.itl_ms_p50;
    run.itl_ms_p90 = metrics.itl_ms_p90;
    run.itl_ms_p99 = metrics.itl_ms_p99;
    run.kv_bytes = metrics.kv_bytes;
    run.kv_bytes_peak = metrics.kv_bytes_peak;
    run.kv_bytes_full = metrics.kv_bytes_full;
    run.kv_bytes_read_per_token = metrics.kv_bytes_read_per_token;
    if (metrics.n_draft_tokens > 0) {
        run.n_draft_tokens = metrics.n_draft_tokens;
        run.n_accepted_tokens = metrics.n_accepted_tokens;
    }
}

MessageRecord message_record(const ChatMessage& message) {
    MessageRecord r;
    r.role = message.role;
    r.text = message.content;
    r.reasoning = message.reasoning;
    r.tool_calls = message.tool_calls;
    r.tool_call_id = message.tool_call_id;
    return r;
}

ChatMessage chat_message(const MessageRecord& record) {
    ChatMessage m{record.role, record.text};
    m.reasoning = record.reasoning;
    m.tool_calls = record.tool_calls;
    m.tool_call_id = record.tool_call_id;
    return m;
}

RunProvenance app_provenance() {
    RunProvenance provenance;
    provenance.app_version = WB_VERSION;
    provenance.app_commit = WB_GIT_COMMIT;
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        const size_t start = line.find_first_not_of(' ', colon + 1);
        if (start != std::string::npos) provenance.cpu_model = line.substr(start);
        break;
    }
    return provenance;
}

}  // namespace workbench
