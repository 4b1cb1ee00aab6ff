#include "kv_blocks/attend_plan.h"

namespace workbench {

namespace {

KvStreamView flat_stream(KvDType type, int64_t value_bytes, const void* k, const void* v, int32_t n_rows, int64_t n_kv_heads,
                         int64_t head_dim) {
    static const BlockId kFlatBlock[1] = {0};  // block 0 at offset 0
    KvRowLayout l;
    l.type = type;
    l.row_bytes = head_dim * value_bytes;
    l.token_stride = n_kv_heads * l.row_bytes;
    l.head_stride = l.row_bytes;
    l.block_stride = l.token_stride * n_rows;
    KvStreamView view;
    view.k_base = static_cast<const uint8_t*>(k);
    view.v_base = static_cast<const uint8_t*>(v);
    view.blocks = kFlatBlock;
    view.block_tokens = n_rows;
    view.k = view.v = l;
    return view;
}

}  // namespace

KvStreamView flat_f32_stream(const float* k, const float* v, int32_t n_rows, int64_t n_kv_heads, int64_t head_dim) {
    return flat_stream(KvDType::f32, 4, k, v, n_rows, n_kv_heads, head_dim);
}

KvStreamView flat_f16_stream(const uint16_t* k, const uint16_t* v, int32_t n_rows, int64_t n_kv_heads, int64_t head_dim) {
    return flat_stream(KvDType::f16, 2, k, v, n_rows, n_kv_heads, head_dim);
}

}  // namespace workbench
