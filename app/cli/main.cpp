// workbench-cli entry point: dispatches to a subcommand. No engine work happens here.
#include <cstring>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

void print_help() {
    std::cout << "workbench-cli " << workbench::engine_version() << " — Inference Workbench on the command line\n\n"
                 "usage: workbench-cli <command> [options]\n\n"
                 "commands:\n"
                 "  run       generate text from a prompt (-p TEXT), streaming; --json for one JSON object\n"
                 "  chat      interactive multi-turn chat with the model's template\n"
                 "  logits    top-K logits at every prompt position, as JSON (reference checks)\n"
                 "  inspect   architecture, hyperparameters, tokenizer and tensors of a GGUF model\n"
                 "  bench     prompt-processing and generation speed, llama-bench style (pp512, tg128)\n"
                 "  quantize  write a copy of a model with its weight matrices in another type\n"
                 "  eval      perplexity, KL and top-1 agreement of a configuration against full attention (--retrieval: passkey)\n"
                 "  calibrate which neighbouring layers share one KV (cross_layer), chosen on a calibration text\n"
                 "  sweep     the variants map: many configurations' memory, speed and quality, one JSON line each (--plot SVG)\n"
                 "  batch     run a prompt file as concurrent requests (continuous batching), with serving metrics\n"
                 "  history   sessions and runs in the session database (--db PATH; run/bench/eval/batch record with --db)\n"
                 "  serve     an OpenAI-compatible HTTP server (/v1/chat/completions, /v1/completions, /metrics) on the model\n"
                 "  synth     write a random-weight model of a named shape and architecture (tests, benchmarks)\n"
                 "  template  the prompt the model's own chat template makes of a conversation (and tools), as Hugging Face renders it\n\n"
                 "Every command takes -m/--model PATH and -t/--threads N; 'workbench-cli <command> --help' for more.\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        print_help();
        return 2;
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        print_help();
        return 0;
    }
    if (command == "--version" || command == "-V") {
        std::cout << "workbench-cli " << workbench::engine_version() << "\n";
        return 0;
    }
    if (command == "run") return wbcli::cmd_run(argc, argv);
    if (command == "chat") return wbcli::cmd_chat(argc, argv);
    if (command == "logits") return wbcli::cmd_logits(argc, argv);
    if (command == "inspect") return wbcli::cmd_inspect(argc, argv);
    if (command == "bench") return wbcli::cmd_bench(argc, argv);
    if (command == "quantize") return wbcli::cmd_quantize(argc, argv);
    if (command == "eval") return wbcli::cmd_eval(argc, argv);
    if (command == "batch") return wbcli::cmd_batch(argc, argv);
    if (command == "history") return wbcli::cmd_history(argc, argv);
    if (command == "serve") return wbcli::cmd_serve(argc, argv);
    if (command == "synth") return wbcli::cmd_synth(argc, argv);
    if (command == "template") return wbcli::cmd_template(argc, argv);
    if (command == "sweep") return wbcli::cmd_sweep(argc, argv);
    if (command == "calibrate") return wbcli::cmd_calibrate(argc, argv);
    return wbcli::usage_error("unknown command '" + command + "' (commands: run, chat, logits, inspect, bench, quantize, eval, calibrate, sweep, batch, history, serve, synth, template; see --help)");
}
