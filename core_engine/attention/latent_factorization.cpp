// Activation-aware low-rank factorization for the latent attention variant. Everything is computed
// in double from the float inputs; LAPACK (Fortran ABI, no LAPACKE) does the Cholesky and the SVD,
// the products around them are plain loops laid out so the inner loop is contiguous.
#include "attention/latent_factorization.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

// Reference LAPACK's Fortran entry points: every argument by pointer, column-major, and one hidden
// trailing length per CHARACTER argument (size_t since gfortran 8; passing them keeps the call
// correct when the callee is built with gfortran, and OpenBLAS ignores them).
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
             const int* lda, double* s, double* u, const int* ldu, double* vt, const int* ldvt,
             double* work, const int* lwork, int* info, size_t jobu_len, size_t jobvt_len);
}

namespace workbench {
namespace {

// Caps the dense n_in × n_in covariance at 2 GiB of doubles; real K/V projections are far smaller.
constexpr int32_t kMaxDim = 16384;

Status invalid(const char* fn, const std::string& what) {
    return error(StatusCode::invalid_argument, std::string(fn) + ": " + what);
}

Status check_finite(const char* fn, const char* name, std::span<const float> values) {
    for (size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) {
            return invalid(fn, std::string(name) + "[" + std::to_string(i) + "] = " +
                                   std::to_string(values[i]) + ", expected a finite value");
        }
    }
    return Status::ok_status();
}

Status check_dims(const char* fn, int32_t n_out, int32_t n_in) {
    if (n_out < 1) return invalid(fn, "n_out = " + std::to_string(n_out) + ", expected >= 1");
    if (n_in < 1) return invalid(fn, "n_in = " + std::to_string(n_in) + ", expected >= 1");
    if (n_out > kMaxDim || n_in > kMaxDim) {
        return error(StatusCode::unsupported,
                     std::string(fn) + ": matrix [" + std::to_string(n_out) + ", " +
                         std::to_string(n_in) + "] exceeds " + std::to_string(kMaxDim) +
                         " in a dimension");
    }
    return Status::ok_status();
}

Status check_size(const char* fn, const char* name, size_t found, int64_t rows, int64_t cols,
                  const char* shape) {
    if (static_cast<int64_t>(found) != rows * cols) {
        return invalid(fn, std::string(name) + " has " + std::to_string(found) + " values, expected " +
                               std::to_string(rows * cols) + " " + shape);
    }
    return Status::ok_status();
}

// Row-major float [rows, cols] to column-major double: LAPACK's layout, and the one whose columns
// make W · v an axpy over contiguous memory.
std::vector<double> to_col_major(std::span<const float> m, int32_t rows, int32_t cols) {
    std::vector<double> out(static_cast<size_t>(rows) * cols);
    for (int32_t r = 0; r < rows; ++r) {
        for (int32_t c = 0; c < cols; ++c) {
            out[r + static_cast<size_t>(c) * rows] = m[static_cast<size_t>(r) * cols + c];
        }
    }
    return out;
}

// XᵀX as a full symmetric [n_in, n_in] (the same in either layout).
std::vector<double> gram(std::span<const float> x, int32_t n_samples, int32_t n_in) {
    const size_t n = static_cast<size_t>(n_in);
    std::vector<double> g(n * n, 0.0);
    std::vector<double> row(n);
    for (int32_t s = 0; s < n_samples; ++s) {
        for (size_t i = 0; i < n; ++i) row[i] = x[static_cast<size_t>(s) * n + i];
        for (size_t i = 0; i < n; ++i) {
            const double xi = row[i];
            if (xi == 0.0) continue;
            double* gi = g.data() + i * n;
            for (size_t j = i; j < n; ++j) gi[j] += xi * row[j];
        }
    }
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < i; ++j) g[i * n + j] = g[j * n + i];
    }
    return g;
}

// Cholesky factor of XᵀX / n + λI, λ = damping · trace / n_in, overwriting the covariance; the
// factor is column-major lower: L(i, j) = c[i + j·n_in] for i >= j.
Result<std::vector<double>> damped_cholesky(std::span<const float> x, int32_t n_samples,
                                            int32_t n_in, double damping) {
    const char* fn = "factorize_low_rank";
    std::vector<double> c = gram(x, n_samples, n_in);
    const size_t n = static_cast<size_t>(n_in);
    double trace = 0.0;
    for (size_t i = 0; i < n; ++i) trace += c[i * n + i];
    if (!(trace > 0.0)) return invalid(fn, "calibration is all zeros, expected some activation");
    const double scale = 1.0 / n_samples;
    const double lambda = damping * trace * scale / n_in;
    for (double& v : c) v *= scale;
    for (size_t i = 0; i < n; ++i) c[i * n + i] += lambda;

    const int dim = n_in;
    int info = 0;
    dpotrf_("L", &dim, c.data(), &dim, &info, 1);
    if (info != 0) {
        return error(StatusCode::internal, std::string(fn) + ": LAPACK dpotrf info = " +
                                               std::to_string(info) +
                                               " on the damped calibration covariance, expected 0");
    }
    return c;
}

// Left singular vectors and singular values of m [rows, cols] (column-major, destroyed).
Status left_svd(std::vector<double>& m, int32_t rows, int32_t cols, std::vector<double>& u,
                std::vector<double>& s) {
    const int mm = rows, nn = cols, k = std::min(rows, cols), one = 1;
    u.assign(static_cast<size_t>(rows) * k, 0.0);
    s.assign(static_cast<size_t>(k), 0.0);
    double vt_unused = 0.0, work_size = 0.0;
    int info = 0, query = -1;
    dgesvd_("S", "N", &mm, &nn, m.data(), &mm, s.data(), u.data(), &mm, &vt_unused, &one,
            &work_size, &query, &info, 1, 1);
    if (info == 0) {
        const int lwork = static_cast<int>(work_size);
        std::vector<double> work(static_cast<size_t>(std::max(lwork, 1)));
        dgesvd_("S", "N", &mm, &nn, m.data(), &mm, s.data(), u.data(), &mm, &vt_unused, &one,
                work.data(), &lwork, &info, 1, 1);
    }
    if (info != 0) {
        return error(StatusCode::internal, "factorize_low_rank: LAPACK dgesvd info = " +
                                               std::to_string(info) + " on a [" +
                                               std::to_string(rows) + ", " + std::to_string(cols) +
                                               "] matrix, expected 0");
    }
    return Status::ok_status();
}

}  // namespace

Result<LatentFactors> factorize_low_rank(std::span<const float> w, int32_t n_out, int32_t n_in,
                                         std::span<const float> calibration, int32_t n_samples,
                                         int32_t rank, double damping) {
    const char* fn = "factorize_low_rank";
    WB_RETURN_IF_ERROR(check_dims(fn, n_out, n_in));
    WB_RETURN_IF_ERROR(check_size(fn, "w", w.size(), n_out, n_in, "[n_out, n_in]"));
    const int32_t max_rank = std::min(n_out, n_in);
    if (rank < 1 || rank > max_rank) {
        return invalid(fn, "rank = " + std::to_string(rank) + ", expected 1.." +
                               std::to_string(max_rank) + " (min(n_out, n_in))");
    }
    if (n_samples < 0) {
        return invalid(fn, "n_samples = " + std::to_string(n_samples) + ", expected >= 0");
    }
    WB_RETURN_IF_ERROR(
        check_size(fn, "calibration", calibration.size(), n_samples, n_in, "[n_samples, n_in]"));
    const bool aware = n_samples > 0;
    if (aware && !(damping > 0.0 && std::isfinite(damping))) {
        return invalid(fn, "damping = " + std::to_string(damping) + ", expected a finite value > 0");
    }
    WB_RETURN_IF_ERROR(check_finite(fn, "w", w));
    WB_RETURN_IF_ERROR(check_finite(fn, "calibration", calibration));

    const size_t rows = static_cast<size_t>(n_out), cols = static_cast<size_t>(n_in);
    const std::vector<double> wc = to_col_major(w, n_out, n_in);  // [n_out, n_in] column-major

    // M = W·L (L = I for the plain SVD). L is lower triangular, so column j of M only sums
    // columns k >= j of W.
    std::vector<double> m;
    if (aware) {
        WB_ASSIGN_OR_RETURN(const std::vector<double> l,
                            damped_cholesky(calibration, n_samples, n_in, damping));
        m.assign(rows * cols, 0.0);
        for (size_t j = 0; j < cols; ++j) {
            double* mj = m.data() + j * rows;
            for (size_t k = j; k < cols; ++k) {
                const double ljk = l[k + j * cols];
                const double* wk = wc.data() + k * rows;
                for (size_t r = 0; r < rows; ++r) mj[r] += wk[r] * ljk;
            }
        }
    } else {
        m = wc;
    }

    std::vector<double> p, sigma;
    WB_RETURN_IF_ERROR(left_svd(m, n_out, n_in, p, sigma));

    // U = P_R; A = P_Rᵀ W, which equals Σ_R Q_Rᵀ L⁻¹ but needs no triangular solve, and makes
    // U·A the orthogonal projection of W onto span(P_R): exact once P_R spans W's columns.
    LatentFactors f;
    f.rank = rank;
    f.n_out = n_out;
    f.n_in = n_in;
    f.singular_values = std::move(sigma);
    const size_t R = static_cast<size_t>(rank);
    f.up.resize(rows * R);
    for (size_t i = 0; i < rows; ++i) {
        for (size_t r = 0; r < R; ++r) f.up[i * R + r] = static_cast<float>(p[i + r * rows]);
    }
    f.down.resize(R * cols);
    std::vector<double> acc(cols);
    for (size_t r = 0; r < R; ++r) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t i = 0; i < rows; ++i) {
            const double pir = p[i + r * rows];
            const float* wi = w.data() + i * cols;
            for (size_t j = 0; j < cols; ++j) acc[j] += pir * wi[j];
        }
        for (size_t j = 0; j < cols; ++j) f.down[r * cols + j] = static_cast<float>(acc[j]);
    }
    return f;
}

std::vector<float> latent_reconstruct(const LatentFactors& factors) {
    const size_t rows = static_cast<size_t>(std::max(factors.n_out, 0));
    const size_t cols = static_cast<size_t>(std::max(factors.n_in, 0));
    const size_t R = static_cast<size_t>(std::max(factors.rank, 0));
    std::vector<float> out(rows * cols, 0.0f);
    if (factors.up.size() != rows * R || factors.down.size() != R * cols) return out;
    std::vector<double> acc(cols);
    for (size_t i = 0; i < rows; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t r = 0; r < R; ++r) {
            const double uir = factors.up[i * R + r];
            const float* ar = factors.down.data() + r * cols;
            for (size_t j = 0; j < cols; ++j) acc[j] += uir * ar[j];
        }
        for (size_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<float>(acc[j]);
    }
    return out;
}

Result<double> low_rank_output_error(std::span<const float> w, const LatentFactors& factors,
                                     std::span<const float> x, int32_t n_samples) {
    const char* fn = "low_rank_output_error";
    const int32_t n_out = factors.n_out, n_in = factors.n_in;
    WB_RETURN_IF_ERROR(check_dims(fn, n_out, n_in));
    if (factors.rank < 1 || factors.rank > std::min(n_out, n_in)) {
        return invalid(fn, "factors.rank = " + std::to_string(factors.rank) + ", expected 1.." +
                               std::to_string(std::min(n_out, n_in)));
    }
    WB_RETURN_IF_ERROR(check_size(fn, "w", w.size(), n_out, n_in, "[n_out, n_in]"));
    WB_RETURN_IF_ERROR(
        check_size(fn, "factors.up", factors.up.size(), n_out, factors.rank, "[n_out, rank]"));
    WB_RETURN_IF_ERROR(
        check_size(fn, "factors.down", factors.down.size(), factors.rank, n_in, "[rank, n_in]"));
    if (n_samples < 1) {
        return invalid(fn, "n_samples = " + std::to_string(n_samples) + ", expected >= 1");
    }
    WB_RETURN_IF_ERROR(check_size(fn, "x", x.size(), n_samples, n_in, "[n_samples, n_in]"));
    WB_RETURN_IF_ERROR(check_finite(fn, "w", w));
    WB_RETURN_IF_ERROR(check_finite(fn, "x", x));

    // Column-major W and E = W − U·A, so each sample is an axpy per input channel.
    const size_t rows = static_cast<size_t>(n_out), cols = static_cast<size_t>(n_in);
    const std::vector<double> wc = to_col_major(w, n_out, n_in);
    const std::vector<double> uac = to_col_major(latent_reconstruct(factors), n_out, n_in);
    std::vector<double> ec(rows * cols);
    for (size_t i = 0; i < ec.size(); ++i) ec[i] = wc[i] - uac[i];

    double err2 = 0.0, ref2 = 0.0;
    std::vector<double> ey(rows), wy(rows);
    for (int32_t s = 0; s < n_samples; ++s) {
        std::fill(ey.begin(), ey.end(), 0.0);
        std::fill(wy.begin(), wy.end(), 0.0);
        const float* xs = x.data() + static_cast<size_t>(s) * cols;
        for (size_t j = 0; j < cols; ++j) {
            const double xj = xs[j];
            const double* ej = ec.data() + j * rows;
            const double* wj = wc.data() + j * rows;
            for (size_t r = 0; r < rows; ++r) {
                ey[r] += ej[r] * xj;
                wy[r] += wj[r] * xj;
            }
        }
        for (size_t r = 0; r < rows; ++r) {
            err2 += ey[r] * ey[r];
            ref2 += wy[r] * wy[r];
        }
    }
    if (!(ref2 > 0.0)) return invalid(fn, "W·xᵀ is zero on every sample, expected a nonzero output");
    return std::sqrt(err2 / ref2);
}

}  // namespace workbench
