// `history`: the sessions in a session database (the GUI's, or one the CLI recorded with --db),
// newest first, each with its runs; --search finds sessions by words in their messages.
#include <ctime>
#include <cstdio>
#include <iostream>
#include <map>

#include "commands.h"
#include "history_recorder.h"

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

workbench::Json run_json(const workbench::RunRecord& r, const std::string& config) {
    using workbench::json_rounded;
    return {{"id", r.id},
            {"config", config},
            {"started", when(r.started_unix_ms)},
            {"finished", r.finished_unix_ms ? when(r.finished_unix_ms) : std::string()},
            {"prompt_tokens", r.n_tokens_prompt},
            {"generated_tokens", r.n_tokens_generated},
            {"ttft_ms", json_rounded(r.ttft_ms)},
            {"decode_tok_s", json_rounded(r.decode_tok_s)},
            {"itl_ms_p50", json_rounded(r.itl_ms_p50)},
            {"itl_ms_p90", json_rounded(r.itl_ms_p90)},
            {"itl_ms_p99", json_rounded(r.itl_ms_p99)},
            {"kv_bytes_peak", r.kv_bytes_peak},
            {"stop_reason", r.stop_reason},
            {"model_sha256", r.provenance.model_sha256},
            {"app_commit", r.provenance.app_commit},
            {"threads", r.provenance.n_threads}};
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
    workbench::Json listing = workbench::Json::array();
    for (const auto& s : *sessions) {
        auto runs = (*store)->load_runs(s.id);
        if (!runs.ok()) return runtime_error(runs.status().message());
        auto used = (*store)->load_run_configurations(s.id);
        if (!used.ok()) return runtime_error(used.status().message());
        // Each run under the configuration it ran under (a session's turns may differ).
        std::map<workbench::RowId, std::string> config_of;
        for (const auto& c : *used) config_of[c.id] = workbench::configuration_label(c);
        if (json) {
            workbench::Json session = {{"id", s.id},
                                       {"title", s.title},
                                       {"model", s.model},
                                       {"variant", s.variant},
                                       {"config", s.config_summary},
                                       {"turns", s.n_turns},
                                       {"prompt_tokens", s.n_tokens_prompt},
                                       {"generated_tokens", s.n_tokens_generated},
                                       {"mean_decode_tok_s", workbench::json_rounded(s.mean_decode_tok_s)},
                                       {"created", when(s.created_unix_ms)},
                                       {"updated", when(s.updated_unix_ms)},
                                       {"runs", workbench::Json::array()}};
            for (const auto& r : *runs) session["runs"].push_back(run_json(r, config_of[r.configuration_id]));
            listing.push_back(std::move(session));
            continue;
        }
        std::printf("#%lld  %s  %s\n      %s · %s · %d turns · %lld+%lld tokens · decode %s\n", static_cast<long long>(s.id),
                    when(s.created_unix_ms).c_str(), s.title.c_str(), s.model.c_str(), s.config_summary.c_str(), s.n_turns,
                    static_cast<long long>(s.n_tokens_prompt), static_cast<long long>(s.n_tokens_generated),
                    opt(s.mean_decode_tok_s, "%.1f tok/s").c_str());
        for (const auto& r : *runs)
            std::printf("      run %lld  %s  prompt %d  generated %d  TTFT %s  decode %s  ITL p50/p99 %s/%s  %s\n          %s\n",
                        static_cast<long long>(r.id), when(r.started_unix_ms).c_str(), r.n_tokens_prompt, r.n_tokens_generated,
                        opt(r.ttft_ms, "%.1f ms").c_str(), opt(r.decode_tok_s, "%.1f tok/s").c_str(), opt(r.itl_ms_p50, "%.1f").c_str(),
                        opt(r.itl_ms_p99, "%.1f ms").c_str(), r.stop_reason.c_str(),
                        config_of.count(r.configuration_id) ? config_of.at(r.configuration_id).c_str() : "no configuration recorded");
    }
    if (json) {
        print_json_line(listing);
    } else if (sessions->empty()) {
        std::cerr << "no sessions" << (filter.search_text.empty() ? "" : " match '" + filter.search_text + "'") << " in " << options.path << "\n";
    }
    return 0;
}

}  // namespace wbcli
