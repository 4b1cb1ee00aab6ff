// check_engine_config: the parts of an EngineConfig that parse on their own, checked before a
// caller frees a working model or starts a row of runs on a configuration that cannot load.
#include "workbench/attention.h"
#include "kv_blocks/kv_dtype.h"
#include "tensor/dtype.h"
#include "workbench/backends.h"
#include "workbench/config.h"

namespace workbench {

Status check_engine_config(const EngineConfig& config) {
    // Their messages already name the field and the text ("--attention 'x': ...").
    if (auto spec = parse_attention_layout(config.attention.empty() ? "full" : config.attention); !spec.ok()) return spec.status();
    if (auto types = parse_kv_types(config.kv_types.empty() ? "f16" : config.kv_types); !types.ok()) return types.status();
    if (!config.weight_type.empty() && !dtype_from_name(config.weight_type))
        return error(StatusCode::invalid_argument, "unknown weight type '" + config.weight_type + "'");
    WB_RETURN_IF_ERROR(check_backend_name(config.backend));
    if (config.mla_cache != "latent" && config.mla_cache != "expanded")
        return error(StatusCode::invalid_argument, "--mla-cache '" + config.mla_cache + "': expected latent or expanded");
    return Status::ok_status();
}

}  // namespace workbench
