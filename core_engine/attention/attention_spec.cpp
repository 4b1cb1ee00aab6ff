// Spec parsing: "kind" or "kind:key=value,key=value". Errors quote the spec and the part at fault.
#include "attention/attention_spec.h"

#include <cctype>
#include <charconv>
#include <vector>

namespace workbench {
namespace {

constexpr std::pair<AttentionKind, const char*> kKinds[] = {
    {AttentionKind::full, "full"},       {AttentionKind::sliding, "sliding"}, {AttentionKind::cross_layer, "cross_layer"},
    {AttentionKind::topk, "topk"},       {AttentionKind::compressed, "compressed"},
    {AttentionKind::heavy, "heavy"},     {AttentionKind::latent, "latent"}};

std::string trimmed_lower(std::string_view s) {
    std::string out;
    for (char c : s)
        if (!std::isspace(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Status bad(std::string_view spec, const std::string& what) {
    return error(StatusCode::invalid_argument, "--attention '" + std::string(spec) + "': " + what);
}

bool parse_int(std::string_view text, int32_t& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

// The keys each kind accepts.
std::vector<std::string_view> keys_of(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::full: return {};
    case AttentionKind::sliding: return {"window", "sinks"};
    case AttentionKind::cross_layer: return {"group", "layers", "merge"};
    case AttentionKind::topk: return {"k", "recent"};
    case AttentionKind::compressed: return {"block", "recent", "sinks"};
    case AttentionKind::heavy: return {"block", "k", "recent", "sinks"};
    case AttentionKind::latent: return {"rank"};
    }
    return {};
}

}  // namespace

const char* attention_kind_name(AttentionKind kind) {
    for (const auto& [k, name] : kKinds)
        if (k == kind) return name;
    return "?";
}

Result<AttentionSpec> parse_attention_spec(std::string_view raw) {
    const std::string s = trimmed_lower(raw);
    const size_t colon = s.find(':');
    const std::string kind_name = s.substr(0, colon);
    AttentionSpec spec;
    bool known = false;
    std::string names;
    for (const auto& [k, name] : kKinds) {
        names += names.empty() ? name : std::string(", ") + name;
        if (kind_name == name) spec.kind = k, known = true;
    }
    if (!known) return bad(raw, "unknown variant '" + kind_name + "'; expected one of " + names);
    // Heavy compression pools coarsely by default; compressed keeps finer blocks.
    if (spec.kind == AttentionKind::heavy) spec.block = 16, spec.k = 32;
    if (spec.kind == AttentionKind::compressed) spec.recent = 256;
    // Pooling keeps no sinks unless asked: "every M old tokens become one", the first included.
    if (spec.kind == AttentionKind::compressed || spec.kind == AttentionKind::heavy) spec.sinks = 0;
    if (colon == std::string::npos) return spec;

    const auto keys = keys_of(spec.kind);
    std::string_view rest = std::string_view(s).substr(colon + 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const size_t eq = part.find('=');
        if (eq == std::string_view::npos) return bad(raw, "'" + std::string(part) + "' is not key=value");
        const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
        bool key_ok = false;
        std::string accepted;
        for (auto k : keys) {
            accepted += accepted.empty() ? std::string(k) : ", " + std::string(k);
            key_ok = key_ok || k == key;
        }
        if (!key_ok)
            return bad(raw, "'" + std::string(key) + "' is not a parameter of " + kind_name +
                                (accepted.empty() ? " (it takes none)" : "; expected " + accepted));
        if (key == "merge") {
            if (value == "none") spec.merge = LayerMerge::none;
            else if (value == "mean") spec.merge = LayerMerge::mean;
            else if (value == "slerp") spec.merge = LayerMerge::slerp;
            else return bad(raw, "merge '" + std::string(value) + "': expected none, mean or slerp");
            continue;
        }
        if (key == "layers") {
            const size_t dash = value.find('-');
            if (dash == std::string_view::npos || !parse_int(value.substr(0, dash), spec.first_layer) ||
                !parse_int(value.substr(dash + 1), spec.last_layer) || spec.first_layer < 0 ||
                spec.last_layer < spec.first_layer)
                return bad(raw, "layers '" + std::string(value) + "': expected A-B with 0 <= A <= B");
            continue;
        }
        int32_t v = 0;
        if (!parse_int(value, v)) return bad(raw, std::string(key) + " '" + std::string(value) + "' is not an integer");
        const bool may_be_zero = key == "sinks" || key == "recent";
        if (v < (may_be_zero ? 0 : 1))
            return bad(raw, std::string(key) + " must be at least " + (may_be_zero ? "0" : "1") + ", got " + std::to_string(v));
        if (key == "window") spec.window = v;
        else if (key == "sinks") spec.sinks = v;
        else if (key == "group") spec.group = v;
        else if (key == "k") spec.k = v;
        else if (key == "block") spec.block = v;
        else if (key == "recent") spec.recent = v;
        else if (key == "rank") spec.rank = v;
    }
    return spec;
}

std::string attention_spec_name(const AttentionSpec& s) {
    const std::string kind = attention_kind_name(s.kind);
    auto n = [](int32_t v) { return std::to_string(v); };
    switch (s.kind) {
    case AttentionKind::full: return kind;
    case AttentionKind::sliding: return kind + ":window=" + n(s.window) + ",sinks=" + n(s.sinks);
    case AttentionKind::cross_layer: {
        std::string out = kind + ":group=" + n(s.group);
        if (s.first_layer != 0 || s.last_layer != -1) out += ",layers=" + n(s.first_layer) + "-" + n(s.last_layer);
        const char* merges[] = {"none", "mean", "slerp"};
        return out + ",merge=" + merges[static_cast<int>(s.merge)];
    }
    case AttentionKind::topk: return kind + ":k=" + n(s.k) + ",recent=" + n(s.recent);
    case AttentionKind::compressed:
        return kind + ":block=" + n(s.block) + ",recent=" + n(s.recent) + (s.sinks ? ",sinks=" + n(s.sinks) : "");
    case AttentionKind::heavy:
        return kind + ":block=" + n(s.block) + ",k=" + n(s.k) + ",recent=" + n(s.recent) + (s.sinks ? ",sinks=" + n(s.sinks) : "");
    case AttentionKind::latent: return kind + ":rank=" + n(s.rank);
    }
    return kind;
}

}  // namespace workbench
