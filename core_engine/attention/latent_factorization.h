// Load-time numerics of the `latent:rank=R` variant: factor a layer's stacked K/V projection
// W = [W_k; W_v] into U · A of rank R, so the cache stores the latent c = A x per token and K, V
// are rebuilt as U c. Pure math on float buffers (double inside, LAPACK underneath); it knows
// nothing of models, caches or kernels, and it never allocates per token.
//
// Thread affinity: none. Calls are independent and reentrant (reference LAPACK keeps no state).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workbench/status.h"

namespace workbench {

// Ridge added to the calibration covariance, relative to its mean diagonal (trace / n_in):
// C = XᵀX / n_samples + damping · (trace / n_in) · I. Small enough that the weighting follows the
// activations (1e-4 of the average channel energy), large enough that C stays positive definite
// when n_samples < n_in or channels are dead, and that directions the calibration text never
// visited still count a little instead of being dropped outright.
inline constexpr double kDefaultLatentDamping = 1e-4;

// W ≈ up · down. Row-major, y = W x.
struct LatentFactors {
    int32_t rank = 0;
    int32_t n_out = 0;                    // 2·n_kv for a stacked [W_k; W_v]: top rows K, bottom V
    int32_t n_in = 0;                     // n_embd
    std::vector<float> up;                // [n_out, rank]  orthonormal columns
    std::vector<float> down;              // [rank, n_in]   latent c = down · x is what gets cached
    std::vector<double> singular_values;  // [min(n_out, n_in)] of W·L (of W for plain SVD),
                                          // descending; the ones past `rank` are what was dropped
};

// Rank-`rank` factorization of w [n_out, n_in] minimizing the output error ||(W − U A) Xᵀ||_F over
// the calibration activations X = calibration [n_samples, n_in] (activation-aware SVD, as in
// SVD-LLM / ASVD / Palu): C = L Lᵀ (Cholesky of the damped covariance above), W·L = P Σ Qᵀ,
// U = P_R, A = P_Rᵀ W (= Σ_R Q_Rᵀ L⁻¹, without ever forming L⁻¹).
// An empty calibration with n_samples == 0 gives the plain weight SVD (L = I), for comparison.
// At rank == min(n_out, n_in) U·A reproduces W to float rounding; error never grows with rank.
// Fails with invalid_argument (naming the field) on rank outside [1, min(n_out, n_in)], sizes
// that do not match, non-finite values, damping <= 0 or an all-zero calibration; unsupported
// past 16384 in either dimension; internal with the LAPACK routine and info on a failed
// decomposition.
Result<LatentFactors> factorize_low_rank(std::span<const float> w, int32_t n_out, int32_t n_in,
                                         std::span<const float> calibration, int32_t n_samples,
                                         int32_t rank, double damping = kDefaultLatentDamping);

// U · A as a dense [n_out, n_in] row-major matrix (for tests and for reporting).
std::vector<float> latent_reconstruct(const LatentFactors& factors);

// ||(W − U A) Xᵀ||_F / ||W Xᵀ||_F over activations x [n_samples, n_in]: the relative error of
// the rebuilt K/V, for reports. invalid_argument on shape mismatch, non-finite values or
// W Xᵀ == 0 (nothing to be relative to).
Result<double> low_rank_output_error(std::span<const float> w, const LatentFactors& factors,
                                     std::span<const float> x, int32_t n_samples);

}  // namespace workbench
