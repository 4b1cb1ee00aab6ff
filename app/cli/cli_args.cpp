// Flag parsing: "--name value", "--name=value", "-n value"; boolean flags take no value.
#include "cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace wbcli {

std::string Args::parse(int argc, char** argv, int first, const std::vector<FlagSpec>& specs) {
    for (int i = first; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool inline_value = false;
        if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        const FlagSpec* spec = nullptr;
        for (const auto& s : specs)
            if (arg == s.long_name || (!s.short_name.empty() && arg == s.short_name)) spec = &s;
        if (!spec) {
            if (arg.rfind("-", 0) == 0) return "unknown option '" + arg + "' (see --help)";
            return "unexpected argument '" + arg + "' (see --help)";
        }
        if (spec->takes_value) {
            if (!inline_value) {
                if (i + 1 >= argc) return "option " + spec->long_name + " needs a value";
                value = argv[++i];
            }
        } else if (inline_value) {
            return "option " + spec->long_name + " takes no value";
        }
        values_[spec->long_name] = value;
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
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max) {
        if (err.empty()) err = long_name + ": '" + text + "' is not an integer from " + std::to_string(min) + " to " + std::to_string(max);
        return fallback;
    }
    return static_cast<int>(v);
}

double Args::get_double(const std::string& long_name, double fallback, double min, double max, std::string& err) const {
    if (!has(long_name)) return fallback;
    const std::string text = get(long_name);
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
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
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE) {
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

std::vector<FlagSpec> engine_flags() {
    return {
        {"--weights", "", true, "TYPE  convert the weights at load: as-is (default), f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q6_k (rows that k-quants cannot hold fall back to q5_0 / q8_0)"},
        {"--attention", "", true, "SPEC  attention variant: full (default), sliding:window=W,sinks=S, cross_layer:group=G[,layers=A-B][,merge=none|mean|slerp], topk:k=K, compressed:block=M,recent=R, heavy:block=M,k=K,recent=R, latent:rank=R"},
        {"--kv-type", "", true, "T  KV cache element types: f16 (default), f32, bf16, q8_0, q4_0, fp8, or k=T,v=T"},
        {"--kv-budget", "", true, "MiB  KV cache pool size (default: what the context needs)"},
        {"--config", "", true, "FILE  an EngineConfig JSON (as the GUI and history save it); flags given override it"},
    };
}

void add_engine_flags(std::vector<FlagSpec>& flags) {
    const auto ef = engine_flags();
    flags.insert(flags.end(), ef.begin(), ef.end());
}

}  // namespace wbcli
