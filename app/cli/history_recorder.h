// `--db PATH`: what run, bench, eval and batch record into the session database. The CLI records
// nothing without the flag. A database that cannot be opened or written is a warning on stderr:
// the command's own output is never lost to a history failure.
#pragma once

#include <memory>
#include <string>

#include "cli_flags.h"
#include "workbench/engine.h"
#include "workbench/store.h"

namespace wbcli {

FlagSpec db_flag();

class HistoryRecorder {
public:
    // nullptr when --db was not given, or (after a warning) when the store cannot be opened.
    static std::unique_ptr<HistoryRecorder> open_if_asked(const Args& args, const workbench::Engine& engine,
                                                          const workbench::EngineConfig& config);

    workbench::Store& store() { return *store_; }
    workbench::RowId configuration_id() const { return configuration_id_; }
    // A bench row: its configuration is this command's; a failure is a warning.
    void save_benchmark(const std::string& test, int n_prompt, int n_gen, int n_batch, int n_threads, double avg_ts,
                        double stddev_ts, const std::string& json);
    // A remote server (bench --remote): its configuration row has backend "remote", the server's
    // kind as the variant, and {"base_url", "model", "server"} as its JSON; runs say backend
    // "remote" with this machine's and build's provenance.
    static std::unique_ptr<HistoryRecorder> open_for_remote(const Args& args, const std::string& base_url, const std::string& model,
                                                            const std::string& server);
    // One session titled `title`, a run per successful completion with its serving metrics.
    void record_batch(const std::string& title, const workbench::BatchResult& result);
    // A run record with this machine's, build's and model file's provenance filled in.
    workbench::RunRecord new_run(workbench::RowId session_id) const;
    // Flushes; a failure becomes a warning. Returns whether everything was committed.
    bool finish();
    void warn(const workbench::Status& s) const;

private:
    static std::unique_ptr<HistoryRecorder> open_store(const Args& args, const workbench::ConfigurationRecord& configuration);
    std::unique_ptr<workbench::Store> store_;
    workbench::RowId configuration_id_ = 0;
    workbench::RunProvenance provenance_;
};

}  // namespace wbcli
