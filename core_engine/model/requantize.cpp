// Row-by-row requantization through f32.
#include "model/requantize.h"

#include <new>
#include <string>

#include "tensor/dequantize.h"

namespace workbench {

namespace {
constexpr DType kRequantizable[] = {DType::f32,  DType::f16,  DType::bf16, DType::q8_0, DType::q4_0, DType::q4_1,
                                    DType::q5_0, DType::q5_1, DType::q4_k, DType::q5_k, DType::q6_k};
}  // namespace

bool can_requantize_to(DType type) {
    for (DType t : kRequantizable)
        if (t == type) return true;
    return false;
}

std::string requantize_type_names() {
    std::string names;
    for (DType t : kRequantizable) names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
    return names;
}

DType effective_weight_type(DType type, int64_t n_in) {
    if (n_in % dtype_traits(type).block_elements == 0) return type;
    DType fallback = DType::f16;
    if (type == DType::q4_k) fallback = DType::q5_0;
    else if (type == DType::q5_k) fallback = DType::q5_1;
    else if (type == DType::q6_k) fallback = DType::q8_0;
    return n_in % dtype_traits(fallback).block_elements == 0 ? fallback : DType::f16;
}

Status requantize_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows, int64_t n_in) {
    const DTypeTraits& st = dtype_traits(src_type);
    const DTypeTraits& dt = dtype_traits(dst_type);
    if (n_in % dt.block_elements != 0)
        return error(StatusCode::unsupported, "rows of " + std::to_string(n_in) + " elements cannot be stored as " +
                                                  std::string(dt.name) + " (blocks of " + std::to_string(dt.block_elements) + ")");
    std::vector<float> row(static_cast<size_t>(n_in));
    const uint64_t src_row = dtype_row_bytes(st, static_cast<uint64_t>(n_in));
    const uint64_t dst_row = dtype_row_bytes(dt, static_cast<uint64_t>(n_in));
    for (int64_t r = 0; r < n_rows; ++r) {
        if (!dequantize_row(src_type, src + r * src_row, row.data(), n_in))
            return error(StatusCode::unsupported, "cannot read " + std::string(st.name) + " weights");
        if (!quantize_row(dst_type, row.data(), dst + r * dst_row, n_in))
            return error(StatusCode::unsupported, "cannot write " + std::string(dt.name) + " weights");
    }
    return Status::ok_status();
}

Status requantize_weights(ModelWeights& w, DType type, std::vector<std::unique_ptr<uint8_t[]>>& storage,
                          const std::function<void(int, int)>& progress) {
    if (!can_requantize_to(type))
        return error(StatusCode::unsupported, "weights cannot be converted to " + std::string(dtype_name(type)) +
                                                  " (supported: " + requantize_type_names() + ")");
    auto convert = [&](WeightTensor& t) -> Status {
        const DType target = effective_weight_type(type, t.n_in);
        if (!t.present() || t.type == target) return {};
        const int64_t rows = t.n_out * t.n_mat;
        const uint64_t bytes = dtype_row_bytes(dtype_traits(target), static_cast<uint64_t>(t.n_in)) * static_cast<uint64_t>(rows);
        std::unique_ptr<uint8_t[]> buf(new (std::nothrow) uint8_t[bytes]);
        if (!buf) return error(StatusCode::resource_exhausted, "out of memory converting weights to " + std::string(dtype_name(target)));
        // A merged stack's matrices lie between another tensor's: one matrix at a time.
        const uint64_t mat_bytes = bytes / static_cast<uint64_t>(t.n_mat);
        for (int64_t e = 0; e < (t.mat_stride ? t.n_mat : 1); ++e)
            WB_RETURN_IF_ERROR(requantize_rows(t.type, t.mat_stride ? t.mat(e).data : t.data, target, buf.get() + static_cast<uint64_t>(e) * mat_bytes,
                                               t.mat_stride ? t.n_out : rows, t.n_in));
        t = WeightTensor{target, buf.get(), t.n_in, t.n_out, bytes, t.n_mat};
        storage.push_back(std::move(buf));
        return {};
    };
    const bool tied = w.tied_output;
    WB_RETURN_IF_ERROR(convert(w.token_embd));
    if (tied) w.output = w.token_embd;
    else WB_RETURN_IF_ERROR(convert(w.output));
    const int n_layers = static_cast<int>(w.layers.size());
    for (int il = 0; il < n_layers; ++il) {
        LayerWeights& l = w.layers[static_cast<size_t>(il)];
        // The router stays as the file has it (llama-quantize keeps it f32 too): its logits choose.
        for (WeightTensor* t : layer_matrices(l))
            if (t != &l.ffn_gate_inp) WB_RETURN_IF_ERROR(convert(*t));
        for (WeightTensor* t : layer_expert_matrices(l)) WB_RETURN_IF_ERROR(convert(*t));
        for (WeightTensor* t : layer_head_matrices(l)) WB_RETURN_IF_ERROR(convert(*t));
        if (progress) progress(il + 1, n_layers);
    }
    uint64_t total = 0;
    for (const auto& l : w.layers)
        for (const WeightTensor* t : layer_tensors(l)) total += t->present() ? t->n_bytes : 0;
    total += w.token_embd.n_bytes + w.output_norm.n_bytes + (tied ? 0 : w.output.n_bytes) + (w.rope_freqs.present() ? w.rope_freqs.n_bytes : 0);
    w.n_bytes = total;
    return Status::ok_status();
}

}  // namespace workbench
