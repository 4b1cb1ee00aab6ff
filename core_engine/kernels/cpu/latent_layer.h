// One layer's factors for the `latent:rank=R` variant as the CPU backend's latent operation reads
// them (attention/latent_kv.h builds them at load; the model owns them).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/packed_matrix.h"

namespace workbench {

struct LatentLayer {
    std::vector<float> down, up_k, up_v;   // [R, n_embd], [n_kv, R], [n_kv, R] f32
    PackedMatrix down_m, up_k_m, up_v_m;    // the same, as matmul operands (in place)
    double output_error = 0;                // relative ||(W − U A) Xᵀ|| on the calibration inputs
    // rope=P: the key dimensions cached as they are, after RoPE (whole pairs, ascending, as
    // indices into the layer's n_kv_heads · head_dim key row); U_k's rows there are zero.
    std::vector<int32_t> rope_dims;
    // Values a token stores in each of the K and V arenas: (rank + rope_dims.size()) / 2. The
    // stored row is [rope_dims' values, c], cut in two halves.
    int64_t stored_half = 0;
};

}  // namespace workbench
