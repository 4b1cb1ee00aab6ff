// The --attention grammar: "kind" or "kind:key=value,key=value", keys and defaults from each
// variant's registration. Errors quote the spec and the part at fault.
#include <cctype>
#include <charconv>
#include <cmath>

#include "attention/attention_policy.h"

namespace workbench {
namespace {

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

bool parse_fraction(std::string_view text, double& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

double* fraction_field(AttentionSpec& spec, std::string_view key) { return key == "keep" ? &spec.keep : nullptr; }

int32_t* integer_field(AttentionSpec& spec, std::string_view key) {
    if (key == "window") return &spec.window;
    if (key == "sinks") return &spec.sinks;
    if (key == "group") return &spec.group;
    if (key == "k") return &spec.k;
    if (key == "block") return &spec.block;
    if (key == "recent") return &spec.recent;
    if (key == "rank") return &spec.rank;
    if (key == "rope") return &spec.rope_pairs;
    if (key == "around") return &spec.around;
    if (key == "min_prompt") return &spec.min_prompt;
    return nullptr;
}

void set_choice(AttentionSpec& spec, std::string_view key, int32_t index) {
    if (key == "merge") spec.merge = static_cast<LayerMerge>(index);
    if (key == "select") spec.select = static_cast<TopkSelect>(index);
    if (key == "pool") spec.pool = static_cast<PoolMode>(index);
    if (key == "read") spec.read = static_cast<PooledRead>(index);
    if (key == "balance") spec.balance = static_cast<LatentBalance>(index);
    if (key == "ranks") spec.ranks = static_cast<LatentRanks>(index);
    if (key == "form") spec.form = static_cast<LatentForm>(index);
    if (key == "pick") spec.pick = static_cast<LatentPick>(index);
    if (key == "heads") spec.heads = static_cast<LatentHeads>(index);
    if (key == "decoding") spec.decoding = static_cast<PressDecoding>(index);
}

}  // namespace

const AttentionVariant& attention_variant(AttentionKind kind) { return attention_variants()[static_cast<size_t>(kind)]; }

const char* attention_kind_name(AttentionKind kind) {
    const auto& all = attention_variants();
    return static_cast<size_t>(kind) < all.size() ? all[static_cast<size_t>(kind)].name.c_str() : "?";
}

AttentionSpec default_attention_spec(AttentionKind kind) {
    AttentionSpec spec;
    spec.kind = kind;
    // Parameters other variants use keep the struct's values; a variant's own take its defaults.
    for (const AttentionParameter& p : attention_variant(kind).parameters) {
        if (p.type == AttentionParameter::Type::integer) *integer_field(spec, p.key) = p.default_value;
        if (p.type == AttentionParameter::Type::choice) set_choice(spec, p.key, p.default_value);
        if (p.type == AttentionParameter::Type::fraction) *fraction_field(spec, p.key) = p.fraction_default;
    }
    return spec;
}

Result<AttentionSpec> parse_attention_spec(std::string_view raw) {
    const std::string s = trimmed_lower(raw);
    const size_t colon = s.find(':');
    const std::string kind_name = s.substr(0, colon);
    const AttentionVariant* variant = nullptr;
    std::string names;
    for (const AttentionVariant& v : attention_variants()) {
        if (!names.empty()) names += ", ";
        names += v.name;
        if (kind_name == v.name) variant = &v;
    }
    if (!variant) return bad(raw, "unknown variant '" + kind_name + "'; expected one of " + names);
    AttentionSpec spec = default_attention_spec(variant->kind);
    if (colon == std::string::npos) return spec;

    std::string_view rest = std::string_view(s).substr(colon + 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const size_t eq = part.find('=');
        if (eq == std::string_view::npos) return bad(raw, std::string("'").append(part).append("' is not key=value"));
        const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
        const AttentionParameter* param = nullptr;
        std::string accepted;
        for (const AttentionParameter& p : variant->parameters) {
            if (!accepted.empty()) accepted += ", ";
            accepted += p.key;
            if (p.key == key) param = &p;
        }
        if (!param)
            return bad(raw, std::string("'").append(key).append("' is not a parameter of ").append(kind_name).append(
                                accepted.empty() ? " (it takes none)" : "; expected " + accepted));
        if (param->type == AttentionParameter::Type::choice) {
            std::string options;
            int32_t index = -1;
            for (size_t i = 0; i < param->choices.size(); ++i) {
                options += (i == 0 ? "" : i + 1 == param->choices.size() ? " or " : ", ") + param->choices[i];
                if (param->choices[i] == value) index = static_cast<int32_t>(i);
            }
            if (index < 0) return bad(raw, param->key + " '" + std::string(value) + "': expected " + options);
            set_choice(spec, param->key, index);
            continue;
        }
        if (param->type == AttentionParameter::Type::layer_range) {
            const size_t dash = value.find('-');
            if (dash == std::string_view::npos || !parse_int(value.substr(0, dash), spec.first_layer) ||
                !parse_int(value.substr(dash + 1), spec.last_layer) || spec.first_layer < 0 ||
                spec.last_layer < spec.first_layer)
                return bad(raw, param->key + " '" + std::string(value) + "': expected A-B with 0 <= A <= B");
            continue;
        }
        if (param->type == AttentionParameter::Type::fraction) {
            double f = 0;
            if (!parse_fraction(value, f)) return bad(raw, std::string(key) + " '" + std::string(value) + "' is not a number");
            if (f < param->fraction_min || f > param->fraction_max)
                return bad(raw, std::string(key) + " must be in [" + fraction_text(param->fraction_min) + ", " +
                                    fraction_text(param->fraction_max) + "], got " + std::string(value));
            *fraction_field(spec, key) = f;
            continue;
        }
        int32_t v = 0;
        if (!parse_int(value, v)) return bad(raw, std::string(key) + " '" + std::string(value) + "' is not an integer");
        if (v < param->min_value)
            return bad(raw, std::string(key) + " must be at least " + std::to_string(param->min_value) + ", got " + std::to_string(v));
        *integer_field(spec, key) = v;
    }
    return spec;
}

bool is_eviction_press(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::snapkv:
    case AttentionKind::pyramidkv:
    case AttentionKind::adakv:
    case AttentionKind::tova:
    case AttentionKind::knorm:
    case AttentionKind::h2o: return true;
    default: return false;
    }
}

std::string fraction_text(double value) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

std::string attention_spec_name(const AttentionSpec& spec) {
    return attention_kind_name(spec.kind) + policy_registration(spec.kind).spec_parameters(spec);
}

}  // namespace workbench
