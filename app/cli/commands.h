// The subcommands of workbench-cli. Each returns the process exit code: 0 success, 1 a runtime
// failure (bad model file, context full), 2 a usage error. Errors go to stderr in one line.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cli_flags.h"
#include "workbench/engine.h"
#include "workbench/json.h"
#include "workbench/retrieval.h"

namespace wbcli {

int cmd_run(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_logits(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_eval(int argc, char** argv);
// eval --retrieval (cmd_eval_retrieval.cpp).
int eval_retrieval(int argc, char** argv);
int cmd_batch(int argc, char** argv);
int cmd_history(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_template(int argc, char** argv);

// Shared by the commands: parse the common and own flags, print help, load the model.
struct CommandContext {
    Args args;
    workbench::EngineConfig config;   // what the engine was loaded with
    std::unique_ptr<workbench::Engine> engine;
};
// Returns -1 to continue, or an exit code to return now (help printed, bad flag, load failure).
// `adjust` may change the engine configuration (context, weight type) before the load.
int prepare_command(int argc, char** argv, const std::string& name, const std::string& synopsis,
                    std::vector<FlagSpec> own_flags, CommandContext& ctx, bool load_model = true,
                    const std::function<void(workbench::EngineConfig&)>& adjust = {});

// The model the user means: -m, else $WORKBENCH_MODEL, else the repo default. Empty (and an
// error message printed, exit code in `rc`) when there is none.
std::string resolve_model_path(const Args& args, int& rc);

// bench --remote URL: a remote server measured as `vllm bench serve` measures (cmd_bench_remote.cpp).
int bench_remote(int argc, char** argv);

// bench -b: one throughput row per batch size (cmd_bench_batch.cpp).
class HistoryRecorder;
int bench_batch_sweep(workbench::Engine& engine, const std::vector<int>& batches, int n_prompt, int n_gen, int reps, bool json,
                      const std::string& model_type, HistoryRecorder* recorder);

int usage_error(const std::string& message);
int runtime_error(const std::string& message);
// A whole file's text. not_found naming the path when it cannot be opened.
workbench::Result<std::string> read_text_file(const std::string& path);
std::string format_bytes(uint64_t bytes);
// `value` as one line of compact JSON on stdout (--json output).
void print_json_line(const workbench::Json& value);
// A batch's aggregates as batch --json and bench --remote --json print them (latencies in ms:
// mean, p50, p90, p99, n).
workbench::Json batch_metrics_json(const workbench::BatchMetrics& m, int n_failed);

}  // namespace wbcli

namespace wbcli {

// Sampling flags shared by run and chat, and reading them into a request.
std::vector<FlagSpec> sampling_flags();
workbench::SamplingParams read_sampling(const Args& args, std::string& err);
// Speculative decoding's flags (run, chat, batch, serve) and reading them.
std::vector<FlagSpec> speculation_flags();
workbench::SpeculationParams read_speculation(const Args& args, std::string& err);

}  // namespace wbcli
