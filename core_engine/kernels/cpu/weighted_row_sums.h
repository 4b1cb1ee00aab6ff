// z_i = Σ_{j < n_keys[i]} p_i[j] · c_j for a few rows i at once: the latent attention's sum of
// cached latents weighted by a head's softmax. Each z_i[r] is built by fused multiply-adds in j
// order, whatever the number of rows taken together, so a row's result is the same in a prompt
// chunk and in a decode step.
#pragma once

#include <cstdint>

namespace workbench {

// p: n_rows rows of weights, p_stride apart; n_keys: per row, keys it sums (≤ the rows of c);
// c: [keys × dim], dim apart; z: [n_rows × dim], overwritten.
void weighted_row_sums(const float* p, int64_t p_stride, const int32_t* n_keys, int64_t n_rows, const float* c,
                       int64_t dim, float* z);

}  // namespace workbench
