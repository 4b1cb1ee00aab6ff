// EngineConfig ⇄ JSON: the configuration schema shared by --config files, the GUI and the
// session database. Reading is strict: an unknown or mistyped field is an error naming it, so a
// typo never silently falls back to a default.
#include <cmath>
#include <limits>

#include "workbench/config.h"
#include "workbench/json.h"

namespace workbench {

std::string engine_config_json(const EngineConfig& config) {
    Json object;
    object["model_path"] = config.model_path;
    object["n_threads"] = config.n_threads;
    object["n_ctx"] = config.n_ctx;
    object["weight_type"] = config.weight_type;
    object["attention"] = config.attention;
    object["kv_types"] = config.kv_types;
    object["kv_budget_bytes"] = config.kv_budget_bytes;
    object["n_seq_max"] = config.n_seq_max;
    object["calibration_text"] = config.calibration_text;
    // Only when set, so configurations saved before calibration and speculation keep their exact text.
    if (!config.calibrated_by.empty()) object["calibrated_by"] = config.calibrated_by;
    if (!config.draft_model_path.empty()) object["draft_model_path"] = config.draft_model_path;
    if (config.backend != "cpu") object["backend"] = config.backend;
    if (config.mla_cache != "latent") object["mla_cache"] = config.mla_cache;
    return dump_json(object);
}

Result<EngineConfig> engine_config_from_json(std::string_view json) {
    auto parsed = parse_json(json);
    if (!parsed.ok()) return error(StatusCode::invalid_argument, "configuration JSON: " + parsed.status().message());
    const Json& v = *parsed;
    if (!v.is_object()) return error(StatusCode::invalid_argument, "configuration JSON: expected an object of EngineConfig fields");
    EngineConfig c;
    auto bad = [](const std::string& key, const std::string& what) {
        return error(StatusCode::invalid_argument, "configuration JSON: '" + key + "' " + what);
    };
    for (const auto& [key, value] : v.items()) {
        std::string* text = key == "model_path"         ? &c.model_path
                            : key == "weight_type"      ? &c.weight_type
                            : key == "attention"        ? &c.attention
                            : key == "kv_types"         ? &c.kv_types
                            : key == "calibration_text" ? &c.calibration_text
                            : key == "calibrated_by"    ? &c.calibrated_by
                            : key == "draft_model_path" ? &c.draft_model_path
                            : key == "backend"          ? &c.backend
                            : key == "mla_cache"        ? &c.mla_cache
                                                        : nullptr;
        if (text) {
            if (!value.is_string()) return bad(key, "must be a string");
            *text = value.get<std::string>();
            continue;
        }
        const bool integer_field = key == "n_threads" || key == "n_ctx" || key == "kv_budget_bytes" || key == "n_seq_max";
        if (!integer_field) return bad(key, "is not an EngineConfig field (model_path, n_threads, n_ctx, weight_type, attention, kv_types, "
                                            "kv_budget_bytes, n_seq_max, calibration_text, calibrated_by, draft_model_path, backend, mla_cache)");
        const double n = value.is_number() ? value.get<double>() : -1.0;
        if (n < 0 || n != std::floor(n) || n > 9.0e15) return bad(key, "must be a non-negative whole number");
        if (key == "kv_budget_bytes") {
            c.kv_budget_bytes = static_cast<uint64_t>(n);
            continue;
        }
        if (n > std::numeric_limits<int32_t>::max()) return bad(key, "is too large");
        if (key == "n_threads") c.n_threads = static_cast<int32_t>(n);
        else if (key == "n_ctx") c.n_ctx = static_cast<int32_t>(n);
        else c.n_seq_max = static_cast<int32_t>(n);
    }
    return c;
}

}  // namespace workbench
