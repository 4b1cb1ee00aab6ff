// summarize_model_file: the GGUF reader's view, copied into plain public structs.
#include "gguf/gguf_file.h"
#include "workbench/model_file.h"

namespace workbench {

Result<ModelFileSummary> summarize_model_file(const std::string& path) {
    WB_ASSIGN_OR_RETURN(auto file, GgufFile::open(path));
    ModelFileSummary s;
    s.path = path;
    s.gguf_version = file->version();
    s.file_bytes = file->file_size();
    for (const auto& [key, value] : file->metadata()) s.metadata.emplace_back(key, GgufFile::value_to_string(value));
    for (const auto& t : file->tensors()) {
        s.tensors.push_back({t.name, std::string(dtype_name(t.type)), t.shape, t.n_bytes});
        s.n_params += t.n_elements;
    }
    return s;
}

}  // namespace workbench
