// Opening the CLI's history database and the provenance every recorded figure carries.
#include "history_recorder.h"

#include "remote/openai_client.h"
#include "workbench/digest.h"
#include "workbench/json.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace wbcli {

FlagSpec db_flag() { return {"--db", "", true, "PATH  record this command's results in a session database (see `history`)"}; }

void HistoryRecorder::warn(const workbench::Status& s) const {
    std::cerr << "workbench-cli: warning: history not recorded: " << s.message() << "\n";
}

std::unique_ptr<HistoryRecorder> HistoryRecorder::open_store(const Args& args, const workbench::ConfigurationRecord& configuration) {
    if (!args.has("--db")) return nullptr;
    auto rec = std::unique_ptr<HistoryRecorder>(new HistoryRecorder());
    workbench::StoreOptions options;
    options.path = args.get("--db");
    options.flush_interval_ms = 2;   // the CLI waits on ids (begin_run) after the work is done: commit promptly
    std::error_code ec;
    if (const auto dir = std::filesystem::path(options.path).parent_path(); !dir.empty()) std::filesystem::create_directories(dir, ec);
    auto store = workbench::Store::open(options);
    if (!store.ok()) {
        rec->warn(store.status());
        return nullptr;
    }
    rec->store_ = std::move(store).value();
    auto config_id = rec->store_->save_configuration(configuration);
    if (!config_id.ok()) {
        rec->warn(config_id.status());
        return nullptr;
    }
    rec->configuration_id_ = *config_id;
    rec->provenance_ = workbench::app_provenance();
    return rec;
}

std::unique_ptr<HistoryRecorder> HistoryRecorder::open_if_asked(const Args& args, const workbench::Engine& engine,
                                                                const workbench::EngineConfig& config) {
    auto rec = open_store(args, workbench::make_configuration(config));
    if (!rec) return nullptr;
    const auto& info = engine.model_info();
    rec->provenance_.cpu_features = info.cpu_features;
    rec->provenance_.backend = info.backend;
    rec->provenance_.n_threads = info.n_threads;
    if (auto sha = workbench::file_sha256(info.path); sha.ok()) rec->provenance_.model_sha256 = *sha;
    return rec;
}

std::unique_ptr<HistoryRecorder> HistoryRecorder::open_for_remote(const Args& args, const std::string& base_url, const std::string& model,
                                                                  const std::string& server) {
    auto rec = open_store(args, wbremote::remote_configuration(base_url, model, server));
    if (rec) rec->provenance_.backend = "remote";
    return rec;
}

void HistoryRecorder::record_batch(const std::string& title, const workbench::BatchResult& result) {
    workbench::SessionRecord session;
    session.configuration_id = configuration_id_;
    session.title = title + " (" + std::to_string(result.completions.size()) + " completions)";
    auto session_id = store_->create_session(session);
    if (!session_id.ok()) return warn(session_id.status());
    for (const auto& c : result.completions) {
        if (!c.ok) continue;
        workbench::RunRecord run = new_run(*session_id);
        auto id = store_->begin_run(run);
        if (!id.ok()) return warn(id.status());
        run.id = *id;
        const workbench::RequestMetrics& m = c.metrics;
        run.n_tokens_prompt = m.n_prompt_tokens;
        run.n_tokens_generated = m.n_output_tokens;
        if (m.n_output_tokens > 0) run.ttft_ms = m.ttft_ms;
        if (m.tpot_ms && *m.tpot_ms > 0) run.decode_tok_s = 1000.0 / *m.tpot_ms;
        if (m.itl.n > 0) run.itl_ms_p50 = m.itl.p50, run.itl_ms_p90 = m.itl.p90, run.itl_ms_p99 = m.itl.p99;
        run.stop_reason = workbench::stop_reason_name(c.stop_reason);
        (void)store_->finish_run(run);
    }
    finish();
}

workbench::RunRecord HistoryRecorder::new_run(workbench::RowId session_id) const {
    workbench::RunRecord run;
    run.session_id = session_id;
    run.configuration_id = configuration_id_;
    run.provenance = provenance_;
    return run;
}

void HistoryRecorder::save_benchmark(const std::string& test, int n_prompt, int n_gen, int n_batch, int n_threads, double avg_ts,
                                     double stddev_ts, const std::string& json) {
    workbench::BenchmarkRecord row;
    row.configuration_id = configuration_id_;
    row.test_name = test;
    row.n_prompt = n_prompt;
    row.n_gen = n_gen;
    row.n_batch = n_batch;
    row.n_threads = n_threads;
    row.avg_ts = avg_ts;
    row.stddev_ts = stddev_ts;
    row.json = json;
    if (auto id = store_->save_benchmark(row); !id.ok()) warn(id.status());
}

bool HistoryRecorder::finish() {
    if (auto s = store_->flush(); !s.ok()) {
        warn(s);
        return false;
    }
    return true;
}

}  // namespace wbcli
