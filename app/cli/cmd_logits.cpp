// `logits`: the top-K logits at every position of a prompt, as JSON, for reference checks:
// {"tokens": [ids], "positions": [{"pos": i, "top": [[id, logit], ...]}, ...]}.
#include <algorithm>
#include <iostream>
#include <numeric>

#include "commands.h"

namespace wbcli {

int cmd_logits(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--prompt", "-p", true, "TEXT  the prompt (required; special tokens are parsed)"},
        {"--top", "", true, "K  logits per position (default 20)"},
        {"--no-bos", "", false, "do not add BOS even if the model asks for it"},
        {"--json", "", false, "JSON output (the only format; accepted for clarity)"},
    };
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "logits", "-p TEXT [--top K] --json", flags, ctx, false); rc >= 0) return rc;
    if (!ctx.args.has("--prompt")) return usage_error("logits: -p/--prompt TEXT is required");
    std::string err;
    const int top = ctx.args.get_int("--top", 20, 1, 1000, err);
    if (!err.empty()) return usage_error("logits: " + err);
    if (int rc = prepare_command(argc, argv, "logits", "-p TEXT [--top K] --json", flags, ctx); rc >= 0) return rc;

    auto tokens = ctx.engine->tokenize(ctx.args.get("--prompt"), !ctx.args.has("--no-bos"), true);
    if (tokens.empty()) return runtime_error("the prompt produced no tokens");
    auto logits = ctx.engine->logits_all(tokens);
    if (!logits.ok()) return runtime_error(logits.status().message());
    const int64_t n_vocab = ctx.engine->model_info().n_vocab;
    const int k = static_cast<int>(std::min<int64_t>(top, n_vocab));

    using workbench::Json;
    Json positions = Json::array();
    std::vector<int32_t> order(static_cast<size_t>(n_vocab));
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
        const float* row = logits->data() + pos * n_vocab;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
            return row[a] != row[b] ? row[a] > row[b] : a < b;
        });
        Json top = Json::array();
        for (int i = 0; i < k; ++i) top.push_back(Json::array({order[i], workbench::json_rounded(row[order[i]])}));
        positions.push_back({{"pos", pos}, {"top", std::move(top)}});
    }
    print_json_line({{"tokens", tokens}, {"positions", std::move(positions)}});
    return 0;
}

}  // namespace wbcli
