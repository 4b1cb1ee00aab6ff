// `chat`: an interactive multi-turn conversation in the terminal. Each turn re-renders the whole
// conversation with the model's template; the engine reuses the cached prefix, so only the new
// turn is prefilled. Ctrl-C stops the reply being generated; Ctrl-C at the prompt or Ctrl-D quits.
#include <csignal>
#include <cstdio>
#include <iostream>

#include "commands.h"

namespace wbcli {
namespace {

std::atomic<bool> g_cancel{false};
std::atomic<bool> g_generating{false};
volatile std::sig_atomic_t g_interrupted_idle = 0;

void on_sigint(int) {
    if (g_generating.load()) g_cancel.store(true);
    else g_interrupted_idle = 1;
}

void install_sigint() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns so we can quit
    sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

int cmd_chat(int argc, char** argv) {
    auto flags = sampling_flags();
    const auto spf = speculation_flags();
    flags.insert(flags.end(), spf.begin(), spf.end());
    flags.push_back({"--n-predict", "-n", true, "N  most tokens per reply (default 1024)"});
    flags.push_back({"--system", "", true, "TEXT  system prompt (default: the template's own, if any)"});
    add_engine_flags(flags);
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "chat", "[options]", flags, ctx, false); rc >= 0) return rc;
    std::string err;
    workbench::GenerationRequest req;
    req.sampling = read_sampling(ctx.args, err);
    req.speculation = read_speculation(ctx.args, err);
    req.max_tokens = ctx.args.get_int("--n-predict", 1024, 1, 1 << 20, err);
    if (!err.empty()) return usage_error("chat: " + err);
    if (int rc = prepare_command(argc, argv, "chat", "[options]", flags, ctx); rc >= 0) return rc;

    workbench::Engine& engine = *ctx.engine;
    const auto& info = engine.model_info();
    std::string system = ctx.args.get("--system");
    std::vector<workbench::ChatMessage> messages;
    auto start_conversation = [&] {
        messages.clear();
        if (!system.empty()) messages.push_back({"system", system});
    };
    start_conversation();
    install_sigint();
    std::cerr << "Chatting with " << (info.name.empty() ? info.path : info.name) << " (" << info.chat_template_family
              << " template, " << info.n_threads << " threads, context " << info.n_ctx << ").\n"
              << "Commands: /reset  /system TEXT  /quit.  Ctrl-C stops a reply.\n";
    for (;;) {
        std::cout << "\n> " << std::flush;
        std::string line;
        if (!std::getline(std::cin, line)) {
            std::cout << "\n";
            return 0;  // Ctrl-D, Ctrl-C at the prompt, or end of piped input
        }
        if (line.empty()) continue;
        if (line == "/quit" || line == "/exit") return 0;
        if (line == "/reset") {
            start_conversation();
            engine.reset();
            std::cerr << "(conversation cleared)\n";
            continue;
        }
        if (line.rfind("/system", 0) == 0) {
            system = line.size() > 8 ? line.substr(8) : "";
            start_conversation();
            engine.reset();
            std::cerr << (system.empty() ? "(system prompt: the template's default)\n" : "(system prompt set; conversation cleared)\n");
            continue;
        }
        messages.push_back({"user", line});
        g_cancel = false;
        g_generating = true;
        auto result = engine.chat(messages, req, [](std::string_view text) { std::cout << text << std::flush; }, &g_cancel);
        g_generating = false;
        if (!result.ok()) {
            messages.pop_back();
            std::cerr << "\nerror: " << result.status().message() << "\n";
            continue;
        }
        messages.push_back({"assistant", result->text});
        const auto& m = result->metrics;
        char drafts[96] = "";
        if (m.acceptance_rate)
            std::snprintf(drafts, sizeof drafts, ", drafts %d/%d accepted (%.0f%%)", m.n_accepted_tokens, m.n_draft_tokens, *m.acceptance_rate * 100.0);
        char stats[320];
        std::snprintf(stats, sizeof stats, "\n[%d tokens, TTFT %.0f ms, %.1f tok/s, %d prompt tokens (%d reused), KV %s%s%s]\n",
                      m.n_generated, m.ttft_ms, m.decode_tok_s.value_or(0.0), m.n_prompt_tokens, m.n_prompt_reused,
                      format_bytes(m.kv_bytes).c_str(), drafts, result->stop_reason == workbench::StopReason::cancelled ? ", stopped" : "");
        std::cout << std::flush;
        std::cerr << stats;
    }
}

}  // namespace wbcli
