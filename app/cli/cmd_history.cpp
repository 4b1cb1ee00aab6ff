// `history`: the sessions in a session database (the GUI's, or one the CLI recorded with --db),
// newest first, each with its runs; --search finds sessions by words in their messages.
#include <ctime>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "history_recorder.h"
#include "json_writer.h"

namespace wbcli {
namespace {

std::string when(int64_t unix_ms) {
    const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

std::string opt(const std::optional<double>& v, const char* fmt) {
    if (!v) return "n/a";
    char buf[48];
    std::snprintf(buf, sizeof buf, fmt, *v);
    return buf;
}

void run_json(JsonWriter& j, const workbench::RunRecord& r) {
    j.begin_object().key("id").value(r.id).key("started").value(when(r.started_unix_ms));
    j.key("finished").value(r.finished_unix_ms ? when(r.finished_unix_ms) : std::string());
    j.key("prompt_tokens").value(r.n_tokens_prompt).key("generated_tokens").value(r.n_tokens_generated);
    j.key("ttft_ms").value(r.ttft_ms).key("decode_tok_s").value(r.decode_tok_s);
    j.key("itl_ms_p50").value(r.itl_ms_p50).key("itl_ms_p90").value(r.itl_ms_p90).key("itl_ms_p99").value(r.itl_ms_p99);
    j.key("kv_bytes_peak").value(r.kv_bytes_peak).key("stop_reason").value(r.stop_reason);
    j.key("model_sha256").value(r.provenance.model_sha256).key("app_commit").value(r.provenance.app_commit);
    j.key("threads").value(r.provenance.n_threads).end_object();
}

}  // namespace

int cmd_history(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--db", "", true, "PATH  the session database (default: " + workbench::default_history_path() + ")"},
        {"--search", "-s", true, "TEXT  sessions with a message containing all these words"},
        {"--model-file", "", true, "NAME  only sessions on this model file name"},
        {"--variant", "", true, "SPEC  only sessions with this attention variant"},
        {"--limit", "", true, "N  at most N sessions (default 50)"},
        {"--json", "", false, "print a JSON array of sessions with their runs"},
    };
    const std::string synopsis = "[--db PATH] [--search TEXT] [--json]";
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "history", synopsis, flags, ctx, false); rc >= 0) return rc;
    std::string err;
    const int limit = ctx.args.get_int("--limit", 50, 1, 1 << 20, err);
    if (!err.empty()) return usage_error("history: " + err);
    workbench::StoreOptions options;
    options.path = ctx.args.get("--db", workbench::default_history_path());
    options.read_only = true;
    auto store = workbench::Store::open(options);
    if (!store.ok()) return runtime_error(store.status().message());
    workbench::SessionFilter filter;
    filter.search_text = ctx.args.get("--search");
    filter.model = ctx.args.get("--model-file");
    filter.variant = ctx.args.get("--variant");
    filter.limit = limit;
    auto sessions = (*store)->list_sessions(filter);
    if (!sessions.ok()) return runtime_error(sessions.status().message());

    const bool json = ctx.args.has("--json");
    JsonWriter j;
    if (json) j.begin_array();
    for (const auto& s : *sessions) {
        auto runs = (*store)->load_runs(s.id);
        if (!runs.ok()) return runtime_error(runs.status().message());
        if (json) {
            j.begin_object().key("id").value(s.id).key("title").value(s.title).key("model").value(s.model).key("variant").value(s.variant);
            j.key("config").value(s.config_summary).key("turns").value(s.n_turns);
            j.key("prompt_tokens").value(s.n_tokens_prompt).key("generated_tokens").value(s.n_tokens_generated);
            j.key("mean_decode_tok_s").value(s.mean_decode_tok_s);
            j.key("created").value(when(s.created_unix_ms)).key("updated").value(when(s.updated_unix_ms));
            j.key("runs").begin_array();
            for (const auto& r : *runs) run_json(j, r);
            j.end_array().end_object();
            continue;
        }
        std::printf("#%lld  %s  %s\n      %s · %s · %d turns · %lld+%lld tokens · decode %s\n", static_cast<long long>(s.id),
                    when(s.created_unix_ms).c_str(), s.title.c_str(), s.model.c_str(), s.config_summary.c_str(), s.n_turns,
                    static_cast<long long>(s.n_tokens_prompt), static_cast<long long>(s.n_tokens_generated),
                    opt(s.mean_decode_tok_s, "%.1f tok/s").c_str());
        for (const auto& r : *runs)
            std::printf("      run %lld  %s  prompt %d  generated %d  TTFT %s  decode %s  ITL p50/p99 %s/%s  %s\n",
                        static_cast<long long>(r.id), when(r.started_unix_ms).c_str(), r.n_tokens_prompt, r.n_tokens_generated,
                        opt(r.ttft_ms, "%.1f ms").c_str(), opt(r.decode_tok_s, "%.1f tok/s").c_str(), opt(r.itl_ms_p50, "%.1f").c_str(),
                        opt(r.itl_ms_p99, "%.1f ms").c_str(), r.stop_reason.c_str());
    }
    if (json) {
        j.end_array();
        std::cout << j.str() << "\n";
    } else if (sessions->empty()) {
        std::cerr << "no sessions" << (filter.search_text.empty() ? "" : " match '" + filter.search_text + "'") << " in " << options.path << "\n";
    }
    return 0;
}

}  // namespace wbcli
