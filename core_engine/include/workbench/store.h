// The session database: chat sessions, their messages, every generation run with its metrics,
// provenance and per-token samples, evaluations, benchmarks, comparisons, sweeps and named configuration
// presets, in one SQLite file
// (WAL, foreign keys, versioned schema). The UI and CLI reach history only through this header:
// plain structs in, plain structs out.
//
// Threads: a Store may be called from any thread. Writes go to the store's own writer thread and
// connection, batched (one transaction per batch, every ~100 ms or N items), so generation never
// waits on disk; calls marked "async" only queue. Calls that return an id wait for their batch to
// commit. Reads run on the calling thread over a separate read-only connection and see what has
// been committed: call flush() first to read your own queued writes.
//
// Failures: nothing throws and nothing aborts. open() returns an error Status naming the file and
// the cause (locked, read-only, not a database, newer schema). A batch that fails (disk full,
// locked too long) is dropped whole; its error is kept in last_error() and returned by the next
// flush(), and the store stays usable for reads and later writes. A write that fails alone (a
// message for a deleted session) is undone alone; the rest of its batch commits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/config.h"
#include "workbench/metrics.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

using RowId = int64_t;   // 0: none

// Where the GUI and `workbench-cli history` keep the session database: $WORKBENCH_HISTORY_DB,
// else $XDG_DATA_HOME/inference-workbench/history.db, else ~/.local/share/inference-workbench/
// history.db (relative to the working folder when HOME is unset too).
std::string default_history_path();

struct StoreOptions {
    std::string path;                 // the database file, created when absent
    bool read_only = false;           // browse only: no writer thread, writes return an error
    int32_t busy_timeout_ms = 2000;   // how long a statement waits for another process's lock
    int32_t flush_interval_ms = 100;  // the writer commits queued items at least this often
    int32_t flush_max_items = 512;    // ... or as soon as this many are queued
    int64_t max_page_count = 0;       // cap on the file's pages (tests simulate a full disk); 0: none
};

// One loaded-model configuration, deduplicated by its JSON. The columns are what lists filter on.
struct ConfigurationRecord {
    RowId id = 0;
    std::string model;        // model file name: "SmolLM2-135M-Instruct.Q4_1.gguf"
    std::string backend;      // "cpu", "cuda"
    std::string variant;      // attention spec: "full", "sliding:window=1020,sinks=4"
    std::string kv_dtype;     // "f16", "k=q8_0,v=q4_0"
    std::string weight_type;  // "" when the weights run as stored
    std::string config_json;  // the full EngineConfig (engine_config_json)
};

struct SessionRecord {
    RowId id = 0;
    RowId configuration_id = 0;   // the configuration the session started with
    std::string title;            // empty: lists show the first user message
    int64_t created_unix_ms = 0;  // 0 on save: now
    int64_t updated_unix_ms = 0;  // last message or run
};

struct MessageRecord {
    RowId id = 0;
    RowId session_id = 0;
    RowId run_id = 0;             // the run that generated an assistant message; 0: none
    int32_t seq = 0;              // order in the session, assigned by the store
    std::string role;             // "system", "user", "assistant", "tool"
    std::string text;
    int64_t created_unix_ms = 0;  // 0 on save: now
    std::string reasoning;               // assistant: its thinking (empty: none)
    std::vector<ToolCall> tool_calls;    // assistant: the calls it made
    std::string tool_call_id;            // tool: the call it answers
};

// Where a run's numbers came from, so a figure can be traced to a build, a file and a machine.
struct RunProvenance {
    std::string model_sha256;
    std::string app_version, app_commit;   // app_provenance() fills these and cpu_model
    std::string cpu_model, cpu_features;   // "AMD EPYC 7B13", "AVX2 FMA F16C"
    std::string backend;                   // "cpu", "cuda"
    int32_t n_threads = 0;
};

// One generation. begin_run stores the start; finish_run the outcome and metrics.
struct RunRecord {
    RowId id = 0;
    RowId session_id = 0;          // 0: a run outside any session (CLI run, eval)
    RowId configuration_id = 0;
    int64_t started_unix_ms = 0;   // 0 on save: now
    int64_t finished_unix_ms = 0;  // 0: not finished (still running, or the process died)
    int32_t n_tokens_prompt = 0, n_tokens_generated = 0;
    std::optional<double> ttft_ms, prefill_tok_s, decode_tok_s;
    std::optional<double> itl_ms_p50, itl_ms_p90, itl_ms_p99;
    uint64_t kv_bytes = 0, kv_bytes_peak = 0, kv_bytes_full = 0, kv_bytes_read_per_token = 0;
    std::string stop_reason;       // stop_reason_name(): "max_tokens", ...
    RunProvenance provenance;
    std::optional<int64_t> seed;   // the sampling seed; none for runs recorded before schema 5
    // Speculative decoding: tokens drafted and verified, and accepted (none: it did not speculate).
    std::optional<int32_t> n_draft_tokens, n_accepted_tokens;
    std::optional<double> first_answer_ms;   // time to the first answer token (after any thinking)
    std::optional<double> acceptance_rate() const {
        if (!n_draft_tokens || *n_draft_tokens <= 0 || !n_accepted_tokens) return std::nullopt;
        return static_cast<double>(*n_accepted_tokens) / *n_draft_tokens;
    }
};

// One point of a run's time series (the charts): one per generated token, or coarser.
struct MetricSample {
    int32_t token_index = 0;
    double t_ms = 0;                  // since the run started
    uint64_t kv_bytes = 0, kv_bytes_full = 0;
    std::optional<double> itl_ms;     // gap to the previous token
    std::optional<double> tok_s;      // decode speed so far
};

struct EvaluationRecord {
    RowId id = 0;
    RowId configuration_id = 0;
    RowId reference_configuration_id = 0;  // what KL and top-1 compare against; 0: none
    std::string text_name;                 // "alice_wonderland.txt"
    std::string text_sha256;
    int32_t n_tokens = 0;
    std::optional<double> perplexity, kl_mean, top1_agreement;
    std::optional<double> retrieval_accuracy;   // passkey + multi-key retrieval (workbench/retrieval.h), 0–1
    std::string json;                      // the full eval output
    int64_t created_unix_ms = 0;
};

struct BenchmarkRecord {
    RowId id = 0;
    RowId configuration_id = 0;
    std::string test_name;                 // "pp512", "tg128"
    int32_t n_prompt = 0, n_gen = 0, n_batch = 0, n_threads = 0;
    double avg_ts = 0, stddev_ts = 0;      // tokens/s over the repetitions
    std::string json;                      // the bench row as the CLI prints it
    int64_t created_unix_ms = 0;
};

// A named side-by-side: one prompt under several configurations, and the runs it produced.
struct ComparisonRecord {
    RowId id = 0;
    std::string name, prompt;
    std::vector<RowId> configuration_ids;  // in display order
    std::vector<std::string> errors;       // per configuration: why it did not run ("" or absent: it ran)
    std::vector<RowId> run_ids;            // filled by load_comparison
    int64_t created_unix_ms = 0;
};

// A configuration saved under a name (the Compare page's "Save as preset").
struct PresetRecord {
    RowId id = 0;
    std::string name;                   // unique: saving a name again points it at the new configuration
    RowId configuration_id = 0;
    ConfigurationRecord configuration;  // filled by list_presets
    int64_t created_unix_ms = 0;        // 0 on save: now
};

// A sweep (workbench/sweep.h) kept as a unit; History reopens it on the Variants map.
struct SweepRecord {
    RowId id = 0;
    std::string name;            // "standard", the configuration list's file name, ...
    std::string model;           // the model file's name
    std::string source;          // the CLI's -o file (a rerun continues this record); "" from the GUI
    std::string settings;        // JSON: ctx, windows, retrieval, trials, configurations
    int32_t n_rows = 0;          // rows kept, failed ones included (filled by list_sweeps, load_sweep)
    int32_t n_failed = 0;
    std::vector<std::string> rows;   // each row's JSON as `sweep -o` writes it (filled by load_sweep)
    int64_t created_unix_ms = 0;     // 0 on create: now
};

// A row of the History page and `history` CLI list.
struct SessionSummary {
    RowId id = 0;
    std::string title;                     // the session title, else its first user message's first line (≤ 120 bytes)
    std::string model, variant;
    std::string config_summary;            // "full · KV f16 · weights as stored · cpu"; "mixed: …" (n_configurations > 1)
    int32_t n_configurations = 0;          // distinct configurations its runs ran under
    int32_t n_turns = 0;                   // user messages
    int64_t n_tokens_prompt = 0, n_tokens_generated = 0;
    std::optional<double> mean_decode_tok_s;
    int64_t created_unix_ms = 0, updated_unix_ms = 0;
};

struct SessionFilter {
    std::string model;                     // exact configuration model; empty: any
    std::string variant;                   // exact attention spec; empty: any
    int64_t created_from_unix_ms = 0;      // inclusive; 0: open
    int64_t created_to_unix_ms = 0;        // exclusive; 0: open
    std::string search_text;               // words that must all appear in one of its messages
    bool include_comparisons = true;       // false: leave out the sessions that hold a Compare run
    int32_t limit = 0, offset = 0;         // 0: no limit
};

class Store {
public:
    // Opens or creates the file, upgrades its schema, starts the writer. Errors name the file and
    // the cause; the caller runs without history.
    static Result<std::unique_ptr<Store>> open(const StoreOptions& options);
    ~Store();  // flushes what is queued, then stops the writer
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    const std::string& path() const;
    static int32_t schema_version();

    // --- writes that return an id (wait for their batch) ---
    Result<RowId> save_configuration(const ConfigurationRecord& config);  // an equal one's id if stored
    Result<RowId> create_session(const SessionRecord& session);
    Result<RowId> begin_run(const RunRecord& run);
    Result<RowId> save_evaluation(const EvaluationRecord& evaluation);
    Result<RowId> save_benchmark(const BenchmarkRecord& benchmark);
    Result<RowId> save_comparison(const ComparisonRecord& comparison);
    Status delete_session(RowId session_id);  // its messages, runs and samples go with it
    // Keeps the session's first `keep_messages` messages (in order) and deletes the rest with the
    // runs that generated them (a regenerated or edited turn replaces what followed it).
    // Errors: not_found (no such session), invalid_argument (keep_messages < 0).
    Status truncate_session(RowId session_id, int32_t keep_messages);
    // Errors: invalid_argument (an empty name); a configuration that is not stored fails its batch.
    Result<RowId> save_preset(const PresetRecord& preset);  // by name: an existing one keeps its id
    Status delete_preset(RowId preset_id);                  // not_found when absent
    Result<RowId> create_sweep(const SweepRecord& sweep);   // without rows
    Status delete_sweep(RowId sweep_id);                    // its rows go with it (not their evaluations); not_found when absent

    // --- async writes: ok means queued ---
    Status add_message(const MessageRecord& message);
    Status finish_run(const RunRecord& run);  // by run.id: outcome, metrics, finished time
    Status append_samples(RowId run_id, std::vector<MetricSample> samples);
    Status set_session_title(RowId session_id, std::string title);
    Status add_comparison_run(RowId comparison_id, RowId run_id);
    // The sweep's next row (after those kept); evaluation_id 0: none (a failed row).
    Status add_sweep_row(RowId sweep_id, RowId evaluation_id, std::string json);

    // Waits until everything queued before the call is committed or dropped; returns the first
    // write failure since the previous flush() (each failure is returned once).
    Status flush();
    // The latest batch failure since open or clear_error(); ok when none.
    Status last_error() const;
    void clear_error();

    // --- reads ---
    Result<std::vector<SessionSummary>> list_sessions(const SessionFilter& filter = {}) const;
    Result<SessionRecord> load_session(RowId session_id) const;
    Result<std::vector<MessageRecord>> load_messages(RowId session_id) const;
    Result<std::vector<RunRecord>> load_runs(RowId session_id) const;
    Result<RunRecord> load_run(RowId run_id) const;
    Result<std::vector<MetricSample>> load_samples(RowId run_id) const;
    Result<ConfigurationRecord> load_configuration(RowId configuration_id) const;
    // The configurations a session's runs ran under, in the order of first use.
    Result<std::vector<ConfigurationRecord>> load_run_configurations(RowId session_id) const;
    Result<std::vector<ConfigurationRecord>> list_configurations() const;  // filter choices: models, variants
    Result<std::vector<EvaluationRecord>> list_evaluations(RowId configuration_id = 0) const;  // 0: all
    Result<std::vector<BenchmarkRecord>> list_benchmarks(RowId configuration_id = 0) const;    // 0: all
    Result<std::vector<ComparisonRecord>> list_comparisons() const;  // without run_ids
    Result<ComparisonRecord> load_comparison(RowId comparison_id) const;
    Result<std::vector<PresetRecord>> list_presets() const;  // by name, each with its configuration
    Result<std::vector<SweepRecord>> list_sweeps() const;    // newest first, without rows
    Result<SweepRecord> load_sweep(RowId sweep_id) const;    // with its rows in order; not_found when absent

    // --- exports (whole documents as text) ---
    Result<std::string> export_session_json(RowId session_id) const;  // session, config, messages, runs with samples
    Result<std::string> export_runs_csv(RowId session_id) const;      // one row per run
    Result<std::string> export_samples_csv(RowId session_id) const;   // one row per sample, run id first
    Result<std::string> export_session_markdown(RowId session_id) const;  // the transcript with run stats

    struct Impl;

private:
    explicit Store(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The configuration row for an engine loaded with `config` (on config.backend).
ConfigurationRecord make_configuration(const EngineConfig& config);
// "full · KV f16 · weights as stored · cpu": what lists, transcripts and exports show of a configuration.
std::string configuration_summary(const ConfigurationRecord& config);
// "model.gguf · full · KV f16 · …": a run's configuration where turns may differ.
std::string configuration_label(const ConfigurationRecord& config);
// Copies the engine's run metrics into `run`.
void apply_metrics(RunRecord& run, const GenerationMetrics& metrics);
// This build's version and commit, and the CPU's model name.
RunProvenance app_provenance();
// A chat turn as a message row (no session, run or seq yet), and a stored message as a chat turn.
MessageRecord message_record(const ChatMessage& message);
ChatMessage chat_message(const MessageRecord& record);

}  // namespace workbench
