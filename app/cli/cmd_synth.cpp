// `synth`: a random-weight GGUF of a named shape and architecture, for tests and benchmarks of
// sizes no downloaded model has (workbench/model_file.h's write_synth_model).
#include <iostream>

#include "commands.h"
#include "workbench/model_file.h"

namespace wbcli {

int cmd_synth(int argc, char** argv) {
    std::string shapes;
    for (const std::string& s : workbench::synth_shape_names()) shapes += (shapes.empty() ? "" : ", ") + s;
    std::string archs;
    for (const std::string& a : workbench::architecture_names()) archs += (archs.empty() ? "" : ", ") + a;
    std::vector<FlagSpec> flags = {
        {"--arch", "", true, "NAME  architecture: " + archs + " (default llama)"},
        {"--shape", "", true, "NAME  " + shapes + " (default tiny)"},
        {"--type", "", true, "TYPE  weight matrices: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k (default f16)"},
        {"--expert-type", "", true, "TYPE  a layer of experts' matrices (e.g. mxfp4, as gpt-oss ships them; default: --type)"},
        {"--vocab-from", "", true, "GGUF  copy this model's tokenizer (n_vocab follows it); default: a placeholder vocab"},
        {"--seed", "", true, "N  weights' seed (default 1)"},
        {"--output", "-o", true, "PATH  the GGUF to write (or as the last argument)"},
        {"out", "", true, "OUT.gguf  the GGUF to write, when -o is not given"},
    };
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "synth", "[--arch A] [--shape S] [--type T] [--expert-type T] [--vocab-from GGUF] (-o OUT.gguf | OUT.gguf)", flags, ctx, false);
        rc >= 0)
        return rc;
    if (!ctx.args.has("--output") && !ctx.args.has("out")) return usage_error("synth: the GGUF to write is required (-o OUT.gguf or OUT.gguf)");
    std::string err;
    const int seed = ctx.args.get_int("--seed", 1, 0, 1 << 30, err);
    if (!err.empty()) return usage_error("synth: " + err);
    const std::string out = ctx.args.get("--output", ctx.args.get("out"));
    const auto status = workbench::write_synth_model(ctx.args.get("--arch", "llama"), ctx.args.get("--shape", "tiny"),
                                                     ctx.args.get("--type", "f16"), ctx.args.get("--vocab-from", ""), out,
                                                     static_cast<uint64_t>(seed), ctx.args.get("--expert-type", ""));
    if (!status.ok()) return runtime_error(status.message());
    std::cerr << "wrote " << out << "\n";
    return 0;
}

}  // namespace wbcli
