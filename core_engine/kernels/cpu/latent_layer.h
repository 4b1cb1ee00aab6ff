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
    // Latents per layer: 1 (heads=joint, c shared by every KV head) or n_kv_heads (heads=each:
    // KV head g's rows come from its own rank / n_latents columns of c; U_k and U_v zero elsewhere).
    int64_t n_latents = 1;
    // form=absorbed (head_dim > 0, the model's): the row is, per latent, [its c | the kept
    // rope_dims of its KV heads]; per model KV head g, U_k,gᵀ [R_l × head_dim] takes a query into
    // its latent's space and U_v,g [head_dim × R_l] a latent output back (R_l = rank / n_latents).
    int64_t head_dim = 0;
    std::vector<float> up_k_t, up_v_heads;            // [n_kv_heads, R_l, head_dim], [n_kv_heads, head_dim, R_l]
    std::vector<PackedMatrix> up_k_t_m, up_v_heads_m;  // one per KV head
    int64_t latent_rank() const { return down_m.n_out / n_latents; }
    // One absorbed row's values: a latent and its KV heads' kept dimensions.
    int64_t row_width() const { return (down_m.n_out + static_cast<int64_t>(rope_dims.size())) / n_latents; }
};

}  // namespace workbench
