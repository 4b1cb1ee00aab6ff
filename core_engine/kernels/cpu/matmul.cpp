// Matmul dispatch: quantize the shared input once, cut every matrix's rows into chunks, let the
// pool's threads claim chunks, and run the kernel set chosen for this CPU on each.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/dot_f32.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

// Rows per chunk, in multiples of 16 rows: about four chunks per thread for a decode step (each
// chunk claimed costs an atomic), sixteen for a prompt, where a chunk is long and the last one a
// thread takes decides how long the others wait at the barrier.
// `align` (a multiple the caller's epilogue needs) widens the unit.
int64_t rows_per_chunk(int64_t total_rows, int n_threads, int64_t n_tokens, int64_t align) {
    if (n_threads <= 1) return total_rows;
    const int64_t unit = std::lcm<int64_t>(16, std::max<int64_t>(1, align));
    const int64_t rows = total_rows / (static_cast<int64_t>(n_threads) * (n_tokens >= 16 ? 16 : 4));
    return std::max<int64_t>(unit, (rows + unit - 1) / unit * unit);
}

void run_generic_rows(const PackedMatrix& w, const float* x, int64_t n_tokens, int64_t r0, int64_t r1, float* y, int64_t ldy) {
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(w.n_in));
    for (int64_t r = r0; r < r1; ++r) {
        dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_in);
        for (int64_t t = 0; t < n_tokens; ++t) y[t * ldy + r] = dot_f32(row.data(), x + t * w.n_in, w.n_in);
    }
}

// Rows [r0, r1) of w against n_tokens inputs (x as f32, av as 8-bit blocks for quantized
// layouts), by the kernel set chosen for this CPU: y[t·ldy + r].
void compute_rows(const PackedMatrix& w, const float* x, const ActivationView& av, int64_t n_tokens, int64_t r0, int64_t r1, float* y,
                  int64_t ldy, bool avx512, GroupKernels group_kernels) {
    const PackedView wv = view_of(w);
    if (is_quantized_layout(w.layout)) {
        // pack_matrix chose the layout for this CPU's kernels; the reference only serves a
        // split-row matrix packed by hand where AVX-512 is off.
        if (is_row_grouped(w.layout)) {
            if (group_kernels == GroupKernels::avx_vnni) gemm_quant_avx_vnni(wv, av, r0, r1, y, ldy);
            else if (group_kernels == GroupKernels::avx512_vnni) gemm_quant_avx512_vnni(wv, av, r0, r1, y, ldy);
            else gemm_quant_avx2(wv, av, r0, r1, y, ldy);
        }
        else if (avx512) gemm_quant_avx512(wv, av, r0, r1, y, ldy);
        else gemm_quant_ref(wv, av, r0, r1, y, ldy);
    } else if (w.layout == PackedLayout::f16x8 || w.layout == PackedLayout::bf16x8) {
        if (group_kernels == GroupKernels::avx512_vnni) gemm_float_avx512_groups(wv, x, n_tokens, r0, r1, y, ldy);
        else gemm_float_avx2(wv, x, n_tokens, r0, r1, y, ldy);
    } else if (w.layout == PackedLayout::f16 || w.layout == PackedLayout::f32) {
        if (avx512) gemm_float_avx512(wv, x, n_tokens, r0, r1, y, ldy);
        else if (w.layout == PackedLayout::f32) gemm_float_avx2(wv, x, n_tokens, r0, r1, y, ldy);
        else gemm_float_ref(wv, x, n_tokens, r0, r1, y, ldy);  // f16 rows packed by hand
    } else {
        run_generic_rows(w, x, n_tokens, r0, r1, y, ldy);
    }
}

}  // namespace

const char* matmul_kernel_name() { return cpu_allow_avx512() ? "avx512-split-rows" : group_kernels_name(cpu_group_kernels()); }

void matmul_shared_input(std::span<const PackedMatrix* const> ws, const float* x, std::span<float* const> ys, int64_t n_tokens,
                         ThreadPool& pool, MatmulScratch& scratch, const MatmulFusion& fusion) {
    const int64_t n_in = ws[0]->n_in;
    bool any_quantized = false;
    int64_t total_rows = 0;
    for (const PackedMatrix* w : ws) {
        any_quantized = any_quantized || is_quantized_layout(w->layout);
        total_rows += w->n_out;
    }
    const QuantizedActivations& act = fusion.quantized_input ? *fusion.quantized_input : scratch.activations;
    if (any_quantized && !fusion.quantized_input) {
        QuantizedActivations& own = scratch.activations;
        resize_activations(own, n_tokens, n_in);
        if (n_tokens == 1) quantize_activations(x, 0, 1, own);
        else pool.parallel_for(n_tokens, [&](int64_t t0, int64_t t1) { quantize_activations(x, t0, t1, own); });
    }
    std::vector<MatmulChunk>& chunks = scratch.chunks;
    chunks.clear();
    if (fusion.same_rows) {
        const int64_t n_out = ws[0]->n_out;  // every matrix's (the caller's contract)
        const int64_t per = rows_per_chunk(n_out, pool.n_threads(), n_tokens, fusion.row_align);
        for (int64_t r = 0; r < n_out; r += per) chunks.push_back({-1, r, std::min(n_out, r + per)});
    } else {
        const int64_t per = rows_per_chunk(total_rows, pool.n_threads(), n_tokens, fusion.row_align);
        for (int m = 0; m < static_cast<int>(ws.size()); ++m)
            for (int64_t r = 0; r < ws[m]->n_out; r += per) chunks.push_back({m, r, std::min(ws[m]->n_out, r + per)});
    }

    const bool avx512 = cpu_allow_avx512();
    const GroupKernels group_kernels = cpu_group_kernels();
    const ActivationView av = any_quantized ? view_of(act) : ActivationView{};
    // Rows [r0, r1) of matrix m, then its epilogue.
    auto compute = [&](int m, int64_t r0, int64_t r1) {
        compute_rows(*ws[m], x, av, n_tokens, r0, r1, ys[m], ws[m]->n_out, avx512, group_kernels);
        if (fusion.epilogue) fusion.epilogue(m, r0, r1);
    };
    pool.run(static_cast<int64_t>(chunks.size()), [&](int64_t c) {
        const MatmulChunk& ch = chunks[static_cast<size_t>(c)];
        if (ch.matrix >= 0) compute(ch.matrix, ch.r0, ch.r1);
        else
            for (int m = 0; m < static_cast<int>(ws.size()); ++m) compute(m, ch.r0, ch.r1);
    });
}

void matmul_items(std::span<const MatmulItem> items, ThreadPool& pool, MatmulScratch& scratch) {
    int64_t total_rows = 0, most_tokens = 0;
    for (const MatmulItem& it : items) {
        total_rows += it.w->n_out;
        most_tokens = std::max(most_tokens, it.n_tokens);
    }
    std::vector<MatmulChunk>& chunks = scratch.chunks;
    chunks.clear();
    const int64_t per = rows_per_chunk(total_rows, pool.n_threads(), most_tokens, 1);
    for (int m = 0; m < static_cast<int>(items.size()); ++m)
        for (int64_t r = 0; r < items[static_cast<size_t>(m)].w->n_out; r += per)
            chunks.push_back({m, r, std::min(items[static_cast<size_t>(m)].w->n_out, r + per)});
    const bool avx512 = cpu_allow_avx512();
    const GroupKernels group_kernels = cpu_group_kernels();
    pool.run(static_cast<int64_t>(chunks.size()), [&](int64_t c) {
        const MatmulChunk& ch = chunks[static_cast<size_t>(c)];
        const MatmulItem& it = items[static_cast<size_t>(ch.matrix)];
        ActivationView av{};
        if (it.xq) {
            const QuantizedActivations& a = *it.xq;
            const int64_t t0 = it.xq_row0;
            av = {a.qs.data() + t0 * a.n_in, a.d.data() + t0 * a.block_stride, a.s.data() + t0 * a.block_stride,
                  a.sum_q.data() + t0 * a.block_stride, a.half_sum_q.data() + 2 * t0 * a.block_stride, it.n_tokens, a.n_in, a.block_stride};
        }
        compute_rows(*it.w, it.x, av, it.n_tokens, ch.r0, ch.r1, it.y, it.ldy, avx512, group_kernels);
    });
}

void matmul(const PackedMatrix& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch) {
    const PackedMatrix* ws[1] = {&w};
    float* ys[1] = {y};
    matmul_shared_input(ws, x, ys, n_tokens, pool, scratch);
}

}  // namespace workbench
