// The KV element-type table and the --kv-type spec parser. Errors quote the whole spec and the
// part that failed, so a CLI user sees what to change without reading code.
#include "kv_blocks/kv_dtype.h"

#include <array>
#include <cctype>
#include <optional>

#include "workbench/attention.h"

namespace workbench {
namespace {

constexpr std::array<KvDTypeLayout, 7> kLayouts = {{
    {KvDType::f32, "f32", 1, 4},
    {KvDType::f16, "f16", 1, 2},
    {KvDType::bf16, "bf16", 1, 2},
    {KvDType::q8_0, "q8_0", 32, 34},
    {KvDType::q4_0, "q4_0", 32, 18},
    {KvDType::fp8, "fp8", 32, 34},
    {KvDType::q2_0, "q2_0", 32, 10},
}};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<KvDType> kv_dtype_from_name(std::string_view name) {
    const std::string key = lower(trim(name));
    for (const auto& layout : kLayouts)
        if (layout.name == key) return layout.type;
    return std::nullopt;
}

std::string accepted_names() {
    std::string names;
    for (const auto& layout : kLayouts) {
        if (!names.empty()) names += ", ";
        names += layout.name;
    }
    return names;
}

Status spec_error(std::string_view spec, const std::string& what) {
    return error(StatusCode::invalid_argument,
                 "--kv-type '" + std::string(spec) + "': " + what +
                     " (expected a type for both, e.g. 'f16', or 'k=TYPE,v=TYPE', either with an optional ',recent=N'; types: " + accepted_names() + ")");
}

}  // namespace

const KvDTypeLayout& kv_dtype_layout(KvDType type) {
    for (const auto& layout : kLayouts)
        if (layout.type == type) return layout;
    return kLayouts[1];  // unreachable for valid enum values
}

std::string_view kv_dtype_name(KvDType type) { return kv_dtype_layout(type).name; }

uint64_t kv_bytes(KvDType type, uint64_t n_values) {
    const KvDTypeLayout& layout = kv_dtype_layout(type);
    const uint64_t n_blocks = n_values / layout.block_values + (n_values % layout.block_values != 0 ? 1 : 0);
    return n_blocks * layout.block_bytes;
}

Result<KvTypes> parse_kv_types(std::string_view spec) {
    const std::string_view body = trim(spec);
    if (body.empty()) return spec_error(spec, "empty spec");

    std::optional<KvDType> both, k, v;
    std::optional<int32_t> recent;
    std::string_view rest = body;
    while (true) {
        const size_t comma = rest.find(',');
        const std::string_view part = trim(rest.substr(0, comma));
        const size_t eq = part.find('=');
        if (eq == std::string_view::npos) {
            // A bare type, first, names K and V at once ("q4_0", "q4_0,recent=128").
            if (rest.data() != body.data()) return spec_error(spec, "part '" + std::string(part) + "' is not KEY=VALUE");
            both = kv_dtype_from_name(part);
            if (!both) return spec_error(spec, "unknown type '" + std::string(part) + "'");
        } else {
            const std::string key = lower(trim(part.substr(0, eq)));
            const std::string_view value = trim(part.substr(eq + 1));
            if (key == "recent") {
                if (recent) return spec_error(spec, "'recent' is given twice");
                int32_t n = 0;
                bool digits = !value.empty() && value.size() <= 6;
                for (char c : value) digits = digits && std::isdigit(static_cast<unsigned char>(c));
                if (digits) for (char c : value) n = n * 10 + (c - '0');
                if (!digits || n > kMaxRecentKvTokens)
                    return spec_error(spec, "recent=" + std::string(value) + " is not a token count from 0 to " +
                                                std::to_string(kMaxRecentKvTokens));
                recent = n;
            } else {
                std::optional<KvDType>* slot = key == "k" ? &k : key == "v" ? &v : nullptr;
                if (slot == nullptr)
                    return spec_error(spec, "part '" + std::string(part) + "' names '" + key + "', expected 'k', 'v' or 'recent'");
                if (both) return spec_error(spec, "part '" + std::string(part) + "' sets '" + key + "' after a type for both");
                if (slot->has_value()) return spec_error(spec, "'" + key + "' is given twice");
                *slot = kv_dtype_from_name(value);
                if (!slot->has_value())
                    return spec_error(spec, "unknown type '" + std::string(value) + "' in part '" + std::string(part) + "'");
            }
        }
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    KvTypes types;
    if (both) {
        types.k = types.v = *both;
    } else {
        if (!k) return spec_error(spec, "missing 'k=TYPE'");
        if (!v) return spec_error(spec, "missing 'v=TYPE'");
        types.k = *k;
        types.v = *v;
    }
    types.recent = recent.value_or(0);
    const auto quantized = [](KvDType t) { return kv_dtype_layout(t).block_values > 1; };
    if (types.recent > 0 && !quantized(types.k) && !quantized(types.v))
        return spec_error(spec, "recent=N keeps the last N tokens in f16 beside a quantized cache (q8_0, q4_0, fp8, q2_0); "
                                "with " + std::string(kv_dtype_name(types.k)) + " keys and values it changes nothing");
    return types;
}

std::string kv_types_name(const KvTypes& types) {
    std::string name = types.k == types.v ? std::string(kv_dtype_name(types.k))
                                          : "k=" + std::string(kv_dtype_name(types.k)) + ",v=" + std::string(kv_dtype_name(types.v));
    if (types.recent > 0) name += ",recent=" + std::to_string(types.recent);
    return name;
}

}  // namespace workbench
