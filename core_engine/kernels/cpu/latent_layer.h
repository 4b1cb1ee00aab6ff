// One layer's factors for the `latent:rank=R` variant as the CPU backend's latent operation reads
// them (attention/latent_kv.h builds them at load; the model owns them).
#pragma once

#include <vector>

#include "kernels/cpu/packed_matrix.h"

namespace workbench {

struct LatentLayer {
    std::vector<float> down, up_k, up_v;   // [R, n_embd], [n_kv, R], [n_kv, R] f32
    PackedMatrix down_m, up_k_m, up_v_m;    // the same, as matmul operands (in place)
    double output_error = 0;                // relative ||(W − U A) Xᵀ|| on the calibration inputs
};

}  // namespace workbench
