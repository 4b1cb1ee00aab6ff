// Register-blocked: up to kRows rows × 16 columns of z stay in registers while j runs, so each c_j
// slice is loaded once for all rows (the plain loop reloaded and stored z for every key).
#include "kernels/cpu/weighted_row_sums.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace workbench {
namespace {

constexpr int64_t kRows = 6;   // 12 accumulators + 2 loads + a broadcast fit AVX2's 16 registers

// Rows [0, rows) of the block, columns [col, col + 16), keys [0, n_common); every row reads them.
template <int kN>
void block_16(const float* const* p, const float* c, int64_t dim, int64_t col, int32_t n_common, float* const* z) {
    __m256 acc[kN][2];
    for (int i = 0; i < kN; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int32_t j = 0; j < n_common; ++j) {
        const float* cj = c + j * dim + col;
        const __m256 c0 = _mm256_loadu_ps(cj), c1 = _mm256_loadu_ps(cj + 8);
        for (int i = 0; i < kN; ++i) {
            const __m256 pj = _mm256_broadcast_ss(p[i] + j);
            acc[i][0] = _mm256_fmadd_ps(pj, c0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(pj, c1, acc[i][1]);
        }
    }
    for (int i = 0; i < kN; ++i) {
        _mm256_storeu_ps(z[i] + col, acc[i][0]);
        _mm256_storeu_ps(z[i] + col + 8, acc[i][1]);
    }
}

template <int kN>
void rows_block(const float* const* p, const float* c, int64_t dim, int32_t n_common, float* const* z) {
    int64_t col = 0;
    for (; col + 16 <= dim; col += 16) block_16<kN>(p, c, dim, col, n_common, z);
    for (int i = 0; i < kN; ++i)
        for (int64_t r = col; r < dim; ++r) {
            float acc = 0;
            for (int32_t j = 0; j < n_common; ++j) acc = std::fma(p[i][j], c[j * dim + r], acc);
            z[i][r] = acc;
        }
}

}  // namespace

void weighted_row_sums(const float* p, int64_t p_stride, const int32_t* n_keys, int64_t n_rows, const float* c,
                       int64_t dim, float* z) {
    for (int64_t b = 0; b < n_rows; b += kRows) {
        const int64_t rows = std::min(kRows, n_rows - b);
        const float* pr[kRows];
        float* zr[kRows];
        int32_t n_common = n_keys[b];
        for (int64_t i = 0; i < rows; ++i) {
            pr[i] = p + (b + i) * p_stride;
            zr[i] = z + (b + i) * dim;
            n_common = std::min(n_common, n_keys[b + i]);
        }
        switch (rows) {
            case 1: rows_block<1>(pr, c, dim, n_common, zr); break;
            case 2: rows_block<2>(pr, c, dim, n_common, zr); break;
            case 3: rows_block<3>(pr, c, dim, n_common, zr); break;
            case 4: rows_block<4>(pr, c, dim, n_common, zr); break;
            case 5: rows_block<5>(pr, c, dim, n_common, zr); break;
            default: rows_block<6>(pr, c, dim, n_common, zr); break;
        }
        // Each row's own keys past the common ones, continuing the same j order.
        for (int64_t i = 0; i < rows; ++i)
            for (int32_t j = n_common; j < n_keys[b + i]; ++j) {
                const float pj = pr[i][j];
                const float* cj = c + j * dim;
                int64_t r = 0;
                for (; r + 8 <= dim; r += 8)
                    _mm256_storeu_ps(zr[i] + r, _mm256_fmadd_ps(_mm256_set1_ps(pj), _mm256_loadu_ps(cj + r), _mm256_loadu_ps(zr[i] + r)));
                for (; r < dim; ++r) zr[i][r] = std::fma(pj, cj[r], zr[i][r]);
            }
    }
}

}  // namespace workbench
