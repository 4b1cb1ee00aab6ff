// write_requantized_model: read a GGUF, convert its matrices, write a new GGUF beside it.
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/requantize.h"
#include "workbench/model_file.h"

namespace workbench {
namespace {

// llama.cpp's general.file_type numbers for whole-model types.
uint32_t llama_file_type(DType t) {
    switch (t) {
        case DType::f32: return 0;
        case DType::f16: return 1;
        case DType::q4_0: return 2;
        case DType::q4_1: return 3;
        case DType::q8_0: return 7;
        case DType::q5_0: return 8;
        case DType::q5_1: return 9;
        case DType::bf16: return 32;
        default: return 0;
    }
}

}  // namespace

Status write_requantized_model(const std::string& in_path, const std::string& out_path, const std::string& type_name,
                               const std::function<void(int, int)>& progress) {
    auto type = dtype_from_name(type_name);
    if (!type || !can_requantize_to(*type))
        return error(StatusCode::invalid_argument, "cannot write weights as '" + type_name + "' (supported: " + requantize_type_names() + ")");
    if (in_path == out_path) return error(StatusCode::invalid_argument, out_path + ": output must differ from the input");
    WB_ASSIGN_OR_RETURN(auto file, GgufFile::open(in_path));
    GgufWriter w(file->alignment());
    for (const auto& [key, value] : file->metadata())
        if (key != "general.alignment") w.set_value(key, value);
    w.set_uint32("general.file_type", llama_file_type(*type));
    const int total = static_cast<int>(file->tensors().size());
    int done = 0;
    for (const auto& t : file->tensors()) {
        const DType target = t.shape.size() == 2 ? effective_weight_type(*type, static_cast<int64_t>(t.shape[0])) : t.type;
        const bool matrix = t.shape.size() == 2 && t.shape[0] % dtype_traits(target).block_elements == 0;
        if (!matrix || t.type == target) {
            WB_RETURN_IF_ERROR(w.add_tensor(t.name, t.shape, t.type, std::span(t.data, t.n_bytes)));
        } else {
            const int64_t n_in = static_cast<int64_t>(t.shape[0]), n_rows = static_cast<int64_t>(t.n_elements / t.shape[0]);
            std::vector<uint8_t> out(dtype_row_bytes(dtype_traits(target), static_cast<uint64_t>(n_in)) * static_cast<uint64_t>(n_rows));
            WB_RETURN_IF_ERROR(requantize_rows(t.type, t.data, target, out.data(), n_rows, n_in).with_context(in_path + ": tensor '" + t.name + "': "));
            WB_RETURN_IF_ERROR(w.add_tensor(t.name, t.shape, target, out));
        }
        if (progress) progress(++done, total);
    }
    return w.write_to(out_path);
}

}  // namespace workbench
