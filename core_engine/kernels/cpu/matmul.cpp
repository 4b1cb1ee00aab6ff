// Row-parallel matmul: each thread takes a range of weight rows and, for each row, walks every
// token, so a weight row is read from memory once per call and stays in cache across tokens.
#include "kernels/cpu/matmul.h"

#include <algorithm>

#include "kernels/cpu/quant_dot.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

using DotFn = float (*)(const void*, const void*, int64_t);

DotFn integer_dot_for(DType type) {
    switch (type) {
        case DType::q4_0: return dot_q4_0_q8_0;
        case DType::q4_1: return dot_q4_1_q8_1;
        case DType::q8_0: return dot_q8_0_q8_0;
        default: return nullptr;
    }
}

// Chunks small enough to balance the threads, large enough that claiming one (an atomic
// increment) is noise next to the work.
int64_t rows_per_chunk(int64_t n_out, int n_threads) {
    if (n_threads <= 1) return n_out;
    int64_t rows = n_out / (static_cast<int64_t>(n_threads) * 4);
    return std::max<int64_t>(16, (rows + 15) / 16 * 16);
}

}  // namespace

void get_row_f32(const WeightTensor& w, int64_t row, float* out) { dequantize_row(w.type, w.row(row), out, w.n_in); }

void matmul(const WeightTensor& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch) {
    const int64_t n_in = w.n_in, n_out = w.n_out;
    const int64_t kRowsPerChunk = rows_per_chunk(n_out, pool.n_threads());
    const int64_t n_chunks = (n_out + kRowsPerChunk - 1) / kRowsPerChunk;

    if (DotFn dot = integer_dot_for(w.type)) {
        const DTypeTraits& at = dtype_traits(activation_type_for(w.type));
        const uint64_t row_bytes = dtype_row_bytes(at, static_cast<uint64_t>(n_in));
        scratch.activations.resize(row_bytes * static_cast<uint64_t>(n_tokens));
        uint8_t* xq = scratch.activations.data();
        pool.parallel_for(n_tokens, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) quantize_row(at.type, x + t * n_in, xq + t * row_bytes, n_in);
        });
        pool.run(n_chunks, [&](int64_t c) {
            const int64_t r1 = std::min(n_out, (c + 1) * kRowsPerChunk);
            for (int64_t r = c * kRowsPerChunk; r < r1; ++r) {
                const uint8_t* wr = w.row(r);
                for (int64_t t = 0; t < n_tokens; ++t) y[t * n_out + r] = dot(wr, xq + t * row_bytes, n_in);
            }
        });
        return;
    }

    pool.run(n_chunks, [&](int64_t c) {
        thread_local std::vector<float> row;
        row.resize(static_cast<size_t>(n_in));
        const int64_t r1 = std::min(n_out, (c + 1) * kRowsPerChunk);
        for (int64_t r = c * kRowsPerChunk; r < r1; ++r) {
            const float* wr;
            if (w.type == DType::f32) {
                wr = reinterpret_cast<const float*>(w.row(r));
            } else {
                dequantize_row(w.type, w.row(r), row.data(), n_in);
                wr = row.data();
            }
            for (int64_t t = 0; t < n_tokens; ++t) y[t * n_out + r] = dot_f32(wr, x + t * n_in, n_in);
        }
    });
}

}  // namespace workbench
