// FlagSpec tables → a CLI11 App per parse; CLI11's errors become our one-line messages.
#include "cli_flags.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <sstream>

#include "workbench/attention.h"

namespace wbcli {

namespace {

// "-t,--threads" from the spec's names.
std::string cli11_names(const FlagSpec& spec) {
    return spec.short_name.empty() ? spec.long_name : spec.short_name + "," + spec.long_name;
}

// The value's name in errors: the first word of the help ("N  threads ..." → "N").
std::string value_name(const FlagSpec& spec) {
    const std::string word = spec.help.substr(0, spec.help.find(' '));
    return word.empty() ? std::string("VALUE") : word;
}

}  // namespace

std::string Args::parse(int argc, char** argv, int first, const std::vector<FlagSpec>& specs) {
    CLI::App app;
    app.set_help_flag();  // --help is a FlagSpec like any other: the command prints usage_text()
    std::vector<std::pair<const FlagSpec*, CLI::Option*>> options;
    for (const FlagSpec& spec : specs) {
        CLI::Option* option = spec.takes_value
                                  ? app.add_option(cli11_names(spec), spec.help)
                                        ->type_size(1)
                                        ->type_name(value_name(spec))
                                        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
                                  : app.add_flag(cli11_names(spec), spec.help)->disable_flag_override();
        options.emplace_back(&spec, option);
    }
    // CLI11 takes arguments last-first from a vector, as its own parse(argc, argv) does.
    std::vector<std::string> args;
    for (int i = argc - 1; i >= first; --i) args.emplace_back(argv[i]);
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        // "The following argument was not expected: --bogus", "--threads: 1 required TEXT missing"
        return std::string(e.what()) + " (see --help)";
    }
    for (const auto& [spec, option] : options) {
        if (option->count() == 0) continue;
        values_[spec->long_name] = spec->takes_value ? option->as<std::string>() : std::string();
    }
    return {};
}

std::string Args::get(const std::string& long_name, const std::string& fallback) const {
    auto it = values_.find(long_name);
    return it == values_.end() ? fallback : it->second;
}

int Args::get_int(const std::string& long_name, int fallback, int min, int max, std::string& err) const {
    if (!has(long_name)) return fallback;
    const std::string text = get(long_name);
    long long v = 0;
    if (!CLI::detail::lexical_cast(text, v) || v < min || v > max) {
        if (err.empty()) err = long_name + ": '" + text + "' is not an integer from " + std::to_string(min) + " to " + std::to_string(max);
        return fallback;
    }
    return static_cast<int>(v);
}

double Args::get_double(const std::string& long_name, double fallback, double min, double max, std::string& err) const {
    if (!has(long_name)) return fallback;
    const std::string text = get(long_name);
    double v = 0;
    if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < min || v > max) {
        if (err.empty()) {
            std::ostringstream s;
            s << long_name << ": '" << text << "' is not a number from " << min << " to " << max;
            err = s.str();
        }
        return fallback;
    }
    return v;
}

unsigned long long Args::get_u64(const std::string& long_name, unsigned long long fallback, std::string& err) const {
    if (!has(long_name)) return fallback;
    const std::string text = get(long_name);
    unsigned long long v = 0;
    if (text.empty() || text[0] == '-' || !CLI::detail::lexical_cast(text, v)) {
        if (err.empty()) err = long_name + ": '" + text + "' is not a non-negative integer";
        return fallback;
    }
    return v;
}
std::string usage_text(const std::string& command, const std::string& synopsis, const std::vector<FlagSpec>& specs) {
    std::ostringstream s;
    s << "usage: workbench-cli " << command << " " << synopsis << "\n\noptions:\n";
    for (const auto& f : specs) {
        std::string names = (f.short_name.empty() ? "    " : f.short_name + ", ") + f.long_name;
        s << "  " << names;
        for (size_t pad = names.size(); pad < 22; ++pad) s << ' ';
        s << " " << f.help << "\n";
    }
    return s.str();
}

std::vector<FlagSpec> common_flags() {
    return {
        {"--model", "-m", true, "PATH  GGUF model (default: $WORKBENCH_MODEL, else models/SmolLM2-135M-Instruct.Q4_1.gguf)"},
        {"--threads", "-t", true, "N  threads (default: one per core)"},
        {"--ctx", "-c", true, "N  context length (default: the model's, at most 8192)"},
        {"--help", "-h", false, "show this help"},
    };
}

// Every variant with its parameters and defaults, as the engine registers them.
std::string attention_help() {
    std::string out = "SPEC  attention variant (default full):";
    for (const workbench::AttentionVariant& v : workbench::attention_variants()) {
        out += " " + v.name;
        std::string params;
        for (const workbench::AttentionParameter& p : v.parameters) {
            params += params.empty() ? ":" : ",";
            if (p.type == workbench::AttentionParameter::Type::integer) params += p.key + "=" + std::to_string(p.default_value);
            else if (p.type == workbench::AttentionParameter::Type::layer_range) params += "[" + p.key + "=A-B]";
            else if (p.type == workbench::AttentionParameter::Type::fraction) params += p.key + "=" + workbench::fraction_text(p.fraction_default);
            else params += p.key + "=" + p.choices[static_cast<size_t>(p.default_value)];
        }
        out += params + ",";
    }
    out.back() = ';';
    return out + " per layer: terms joined by ';', each with layers=A-B+C (one term may leave them out and take the "
                 "rest; unnamed layers run full), e.g. \"sliding:window=512,layers=0-9;topk:k=256\"";
}

std::vector<FlagSpec> engine_flags() {
    return {
        {"--weights", "", true, "TYPE  convert the weights at load: as-is (default), f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k (rows that k-quants cannot hold fall back to q5_0 / q5_1 / q8_0)"},
        {"--attention", "", true, attention_help()},
        {"--kv-type", "", true, "T  KV cache element types: f16 (default), f32, bf16, q8_0, q4_0, fp8, q2_0, or k=T,v=T; add ,recent=N to read each query's last N tokens in f16 beside a quantized cache (e.g. q4_0,recent=128)"},
        {"--backend", "", true, "NAME  where the model runs: cpu (default) or cuda (exits with the reason when it cannot run here)"},
        {"--mla-cache", "", true, "FORM  latent-attention models (DeepSeek): latent (default: one row of latent + RoPE key per token and layer) or expanded (each head's K and V)"},
        {"--kv-budget", "", true, "MiB  KV cache pool size (default: what the context needs)"},
        {"--config", "", true, "FILE  an EngineConfig JSON (as the GUI and history save it); flags given override it"},
    };
}

void add_engine_flags(std::vector<FlagSpec>& flags) {
    const auto ef = engine_flags();
    flags.insert(flags.end(), ef.begin(), ef.end());
}

}  // namespace wbcli
