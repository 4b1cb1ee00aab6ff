// `quantize`: a copy of a model with its weight matrices in another type, so other tools (and
// llama-bench) can run the very same weights we benchmark.
#include <cstdio>
#include <iostream>

#include <unistd.h>

#include "commands.h"
#include "workbench/model_file.h"

namespace wbcli {

int cmd_quantize(int argc, char** argv) {
    // The llama-quantize form `quantize IN OUT TYPE` is the same as `-m IN -o OUT --type TYPE`.
    std::vector<std::string> rewritten;
    if (argc == 5 && argv[2][0] != '-' && argv[3][0] != '-' && argv[4][0] != '-')
        rewritten = {argv[0], argv[1], "-m", argv[2], "-o", argv[3], "--type", argv[4]};
    std::vector<char*> args;
    for (auto& a : rewritten) args.push_back(a.data());
    if (!rewritten.empty()) {
        argc = static_cast<int>(args.size());
        argv = args.data();
    }
    std::vector<FlagSpec> flags = {
        {"--output", "-o", true, "PATH  the GGUF to write (required)"},
        {"--type", "", true, "TYPE  f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k or q6_k (required)"},
    };
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "quantize", "IN.gguf OUT.gguf TYPE  |  -o OUT.gguf --type TYPE [-m IN.gguf]", flags, ctx, false); rc >= 0) return rc;
    if (!ctx.args.has("--output") || !ctx.args.has("--type")) return usage_error("quantize: -o/--output PATH and --type TYPE are required");
    int rc;
    const std::string in = resolve_model_path(ctx.args, rc);
    if (rc >= 0) return rc;
    // The bar redraws in place on a terminal; a log (stderr redirected) gets one line at the end.
    const bool tty = isatty(STDERR_FILENO);
    int shown = -1, last_total = 0;
    auto status = workbench::write_requantized_model(in, ctx.args.get("--output"), ctx.args.get("--type"), [&](int done, int total) {
        last_total = total;
        const int pct = 100 * done / total;
        if (!tty || pct == shown) return;
        shown = pct;
        std::string bar(static_cast<size_t>(pct / 5), '#');
        bar.resize(20, '.');
        std::fprintf(stderr, "\rconverting [%s] %3d%% (%d/%d tensors)", bar.c_str(), pct, done, total);
    });
    if (tty) std::fprintf(stderr, "\n");
    else if (status.ok()) std::fprintf(stderr, "converted %d tensors\n", last_total);
    if (!status.ok()) return runtime_error(status.message());
    std::cerr << "wrote " << ctx.args.get("--output") << "\n";
    return 0;
}

}  // namespace wbcli
