#include "kv_blocks/attend_plan.h"

namespace workbench {

KvStreamView flat_f32_stream(const float* k, const float* v, int32_t n_rows, int64_t n_kv_heads, int64_t head_dim) {
    static const BlockId kFlatBlock[1] = {0};  // block 0 at offset 0
    KvRowLayout l;
    l.type = KvDType::f32;
    l.row_bytes = head_dim * 4;
    l.token_stride = n_kv_heads * l.row_bytes;
    l.block_stride = l.token_stride * n_rows;
    KvStreamView view;
    view.k_base = reinterpret_cast<const uint8_t*>(k);
    view.v_base = reinterpret_cast<const uint8_t*>(v);
    view.blocks = kFlatBlock;
    view.block_tokens = n_rows;
    view.k = view.v = l;
    return view;
}

}  // namespace workbench
