// Every SIMD matmul path this CPU can run against the scalar reference, on random data (never
// zeros), for each packed layout, odd shapes and token counts 1..9 (tiles and tails); plus the
// batch-invariance property: a token's result is bit-identical alone or among others.
#include <QTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tests/skip_missing.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/matmul.h"
#include "tensor/half_convert.h"
#include "tensor/dequantize.h"
#include "tensor/quant_blocks.h"

using namespace workbench;

namespace {

struct Case {
    DType type;
    int64_t n_in, n_out;
};

// A random weight matrix in GGUF form, packed, with its bytes kept alive.
struct Weights {
    std::vector<uint8_t> gguf;
    PackedMatrix packed;
};

Weights make_weights(const Case& c, std::mt19937& rng, PackFamily family = PackFamily::for_this_cpu) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(static_cast<size_t>(c.n_in * c.n_out));
    for (auto& v : values) v = normal(rng) * (1.0f + static_cast<float>(rng() % 4));
    Weights w;
    const auto& t = dtype_traits(c.type);
    w.gguf.resize(static_cast<size_t>(dtype_row_bytes(t, static_cast<uint64_t>(c.n_in)) * static_cast<uint64_t>(c.n_out)));
    auto random_blocks = [&](auto block_type, auto fix) {  // random bytes, sane fp16 super-block scales
        using Block = decltype(block_type);
        for (auto& byte : w.gguf) byte = static_cast<uint8_t>(rng());
        for (size_t at = 0; at < w.gguf.size(); at += sizeof(Block)) fix(*reinterpret_cast<Block*>(w.gguf.data() + at));
    };
    auto small_scale = [&] { return float_to_half(0.001f * static_cast<float>(1 + rng() % 50)); };
    // No Q2_K or Q3_K quantizer: random blocks with sane fp16 scales are valid data; Q5_K's too
    // (random bytes reach every fifth bit, sub-scale and min, which its quantizer's output may not).
    if (c.type == DType::q5_k) {
        random_blocks(quant::BlockQ5_K{}, [&](quant::BlockQ5_K& b) { b.d = small_scale(), b.dmin = small_scale(); });
    } else if (c.type == DType::q2_k) {
        random_blocks(quant::BlockQ2_K{}, [&](quant::BlockQ2_K& b) { b.d = small_scale(), b.dmin = small_scale(); });
    } else if (c.type == DType::q3_k) {
        random_blocks(quant::BlockQ3_K{}, [&](quant::BlockQ3_K& b) { b.d = small_scale(); });
    } else if (!quantize_row(c.type, values.data(), w.gguf.data(), static_cast<int64_t>(values.size()))) {
        qFatal("quantize failed");
    }
    WeightTensor wt{c.type, w.gguf.data(), c.n_in, c.n_out, w.gguf.size()};
    if (!pack_matrix(wt, w.packed, family)) qFatal("pack failed");
    return w;
}

std::vector<float> make_inputs(int64_t n_tokens, int64_t n_in, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n_tokens * n_in));
    for (auto& v : x) v = normal(rng);
    return x;
}

// Magnitude-aware comparison: |a − b| ≤ tol · (|b| + scale), where scale is the typical size of
// a result (a dot product of n_in terms cancels, so a relative bound alone is too strict near 0).
// Guard values (kGuard) must come back untouched and stay out of the scale, which they would
// otherwise make so large that any result passes.
constexpr float kGuard = 1e30f;
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol, const char* what) {
    double scale = 0;
    for (float v : want)
        if (v != kGuard) scale = std::max(scale, static_cast<double>(std::abs(v)));
    for (size_t i = 0; i < want.size(); ++i)
        if (want[i] == kGuard ? got[i] != kGuard : std::abs(got[i] - want[i]) > tol * (std::abs(want[i]) + scale))
            QFAIL(qPrintable(QString("%1: element %2: %3 vs reference %4").arg(what).arg(i).arg(got[i]).arg(want[i])));
}

using QuantKernel = void (*)(const PackedView&, const ActivationView&, int64_t, int64_t, float*, int64_t);
using FloatKernel = void (*)(const PackedView&, const float*, int64_t, int64_t, int64_t, float*, int64_t);

}  // namespace

#ifdef WB_HAVE_SIMDE
// The VNNI and AVX-512 kernel files built again with SIMDe in place of the instructions
// (tests/core_engine/kernels/CMakeLists.txt): the same source, runnable on any AVX2 CPU.
namespace workbench {
void gemm_quant_avx_vnni_emulated(const PackedView&, const ActivationView&, int64_t, int64_t, float*, int64_t);
void gemm_quant_avx512_vnni_emulated(const PackedView&, const ActivationView&, int64_t, int64_t, float*, int64_t);
void gemm_quant_avx512_emulated(const PackedView&, const ActivationView&, int64_t, int64_t, float*, int64_t);
void gemm_float_avx512_emulated(const PackedView&, const float*, int64_t, int64_t, int64_t, float*, int64_t);
void gemm_float_avx512_groups_emulated(const PackedView&, const float*, int64_t, int64_t, int64_t, float*, int64_t);
}  // namespace workbench
#endif

namespace {

}  // namespace

class TestGemmKernels : public QObject {
    Q_OBJECT

    // `same_as`: a kernel whose results this one must equal bit for bit (the VNNI row groups
    // against the AVX2 ones: the same exact integer sums, the same float operations after).
    void check_quant(QuantKernel kernel, const char* name, PackFamily family, QuantKernel same_as = nullptr) {
        std::mt19937 rng(11);
        // Enough rows in several cases for the 16-row tiles of the AVX-512 kernels, and odd group
        // counts for their 8-row tails.
        std::vector<Case> cases = {Case{DType::q4_0, 96, 37}, Case{DType::q4_1, 576, 19}, Case{DType::q8_0, 1536, 5}, Case{DType::q4_1, 32, 3},
                                   Case{DType::q8_0, 544, 8}, Case{DType::q4_0, 800, 4}, Case{DType::q8_0, 96, 35}};
        // Types the row groups repack exactly into their int8 layouts.
        if (family == PackFamily::row_groups)
            cases.insert(cases.end(), {Case{DType::q5_0, 576, 19}, Case{DType::q5_1, 96, 11}, Case{DType::q4_k, 512, 13}, Case{DType::q5_k, 256, 17},
                                                Case{DType::q6_k, 256, 9}, Case{DType::q6_k, 256, 35}, Case{DType::q2_k, 256, 13}, Case{DType::q2_k, 768, 21},
                                                Case{DType::q3_k, 512, 17}, Case{DType::q3_k, 256, 6}, Case{DType::mxfp4, 256, 13},
                                                Case{DType::mxfp4, 96, 35}});
        for (Case c : cases) {
            Weights w = make_weights(c, rng, family);
            QVERIFY2(is_row_grouped(w.packed.layout) == (family == PackFamily::row_groups), dtype_name(c.type).data());
            for (int64_t n_tokens : {1, 2, 3, 4, 5, 7, 9, 17}) {
                auto x = make_inputs(n_tokens, c.n_in, rng);
                QuantizedActivations act;
                resize_activations(act, n_tokens, c.n_in);
                quantize_activations(x.data(), 0, n_tokens, act);
                // Guard values around the output catch writes outside [r0, r1).
                std::vector<float> ref(static_cast<size_t>(n_tokens * c.n_out), kGuard), got = ref;
                const int64_t r0 = 1, r1 = c.n_out - 1 > r0 ? c.n_out - 1 : c.n_out;
                gemm_quant_ref(view_of(w.packed), view_of(act), r0, r1, ref.data(), c.n_out);
                kernel(view_of(w.packed), view_of(act), r0, r1, got.data(), c.n_out);
                for (int64_t t = 0; t < n_tokens; ++t) {
                    QCOMPARE(got[static_cast<size_t>(t * c.n_out)], kGuard);
                    if (r1 < c.n_out) QCOMPARE(got[static_cast<size_t>(t * c.n_out + c.n_out - 1)], kGuard);
                }
                const QString what = QString("%1 %2 n_in=%3 tokens=%4").arg(name).arg(dtype_name(c.type).data()).arg(c.n_in).arg(n_tokens);
                expect_close(got, ref, 2e-5, qPrintable(what));
                if (same_as) {
                    std::vector<float> other(got.size(), kGuard);
                    same_as(view_of(w.packed), view_of(act), r0, r1, other.data(), c.n_out);
                    for (size_t i = 0; i < got.size(); ++i)
                        if (std::memcmp(&got[i], &other[i], sizeof(float)) != 0)
                            QFAIL(qPrintable(QString("%1: element %2: %3, not bit-identical to %4").arg(what).arg(i).arg(got[i]).arg(other[i])));
                }
            }
        }
    }

    // As check_quant; the 75-row case reaches the 64-row decode tiles and an odd tail.
    void expect_bit_identical(const std::vector<float>& got, const std::vector<float>& x, int64_t n_tokens, const Weights& w, Case c, int64_t r0,
                              int64_t r1, FloatKernel other_kernel, const QString& what) {
        std::vector<float> other(got.size(), kGuard);
        other_kernel(view_of(w.packed), x.data(), n_tokens, r0, r1, other.data(), c.n_out);
        for (size_t i = 0; i < got.size(); ++i)
            if (std::memcmp(&got[i], &other[i], sizeof(float)) != 0)
                QFAIL(qPrintable(QString("%1: element %2: %3, not bit-identical to %4").arg(what).arg(i).arg(got[i]).arg(other[i])));
    }

    void check_float(FloatKernel kernel, const char* name, PackFamily family, FloatKernel same_as = nullptr) {
        std::mt19937 rng(12);
        for (Case c : {Case{DType::f16, 576, 7}, Case{DType::f32, 100, 9}, Case{DType::f16, 13, 3}, Case{DType::f16, 64, 37},
                       Case{DType::bf16, 96, 19}, Case{DType::f16, 40, 75}, Case{DType::bf16, 24, 75}}) {
            if (c.type == DType::bf16 && family != PackFamily::row_groups) continue;  // bf16 rows stay GGUF blocks there
            Weights w = make_weights(c, rng, family);
            for (int64_t n_tokens : {1, 2, 4, 6, 7, 13}) {
                auto x = make_inputs(n_tokens, c.n_in, rng);
                // Rows [1, n_out − 1): guard values catch writes outside the range.
                std::vector<float> ref(static_cast<size_t>(n_tokens * c.n_out), kGuard), got = ref;
                const int64_t r0 = 1, r1 = c.n_out - 1;
                gemm_float_ref(view_of(w.packed), x.data(), n_tokens, r0, r1, ref.data(), c.n_out);
                kernel(view_of(w.packed), x.data(), n_tokens, r0, r1, got.data(), c.n_out);
                for (int64_t t = 0; t < n_tokens; ++t) {
                    QCOMPARE(got[static_cast<size_t>(t * c.n_out)], kGuard);
                    QCOMPARE(got[static_cast<size_t>(t * c.n_out + c.n_out - 1)], kGuard);
                }
                const QString what = QString("%1 %2 n_in=%3 tokens=%4").arg(name).arg(dtype_name(c.type).data()).arg(c.n_in).arg(n_tokens);
                expect_close(got, ref, 1e-5, qPrintable(what));
                if (same_as) expect_bit_identical(got, x, n_tokens, w, c, r0, r1, same_as, what);
            }
        }
    }

private slots:
    void avx2_quant_matches_reference() { check_quant(gemm_quant_avx2, "avx2", PackFamily::row_groups); }
    void avx2_float_matches_reference() { check_float(gemm_float_avx2, "avx2", PackFamily::row_groups); }

    void vnni_quant_matches_reference() {
        const CpuFeatures& f = cpu_features();
        if (!f.avx_vnni && !f.has_avx512_vnni_path()) QSKIP("this CPU has neither AVX-VNNI nor AVX512-VNNI (the emulated test covers them)");
        if (f.avx_vnni) check_quant(gemm_quant_avx_vnni, "avx-vnni", PackFamily::row_groups, gemm_quant_avx2);
        if (f.has_avx512_vnni_path()) {
            check_quant(gemm_quant_avx512_vnni, "avx512-vnni", PackFamily::row_groups, gemm_quant_avx2);
            check_float(gemm_float_avx512_groups, "avx512 groups", PackFamily::row_groups, gemm_float_avx2);
        }
    }

    void avx512_matches_reference() {
        if (!cpu_features().has_avx512_vnni_path()) QSKIP("this CPU has no AVX-512 VNNI: that path cannot run here (the emulated test covers it)");
        check_quant(gemm_quant_avx512, "avx512", PackFamily::split_rows);
        check_float(gemm_float_avx512, "avx512", PackFamily::split_rows);
    }

    // The same kernel sources with SIMDe standing in for AVX-512 and VNNI: their arithmetic is
    // checked on every machine, the native run above only where the CPU has the instructions.
    void emulated_vnni_and_avx512_match_reference() {
#ifdef WB_HAVE_SIMDE
        check_quant(gemm_quant_avx_vnni_emulated, "avx-vnni (emulated)", PackFamily::row_groups, gemm_quant_avx2);
        check_quant(gemm_quant_avx512_vnni_emulated, "avx512-vnni (emulated)", PackFamily::row_groups, gemm_quant_avx2);
        check_float(gemm_float_avx512_groups_emulated, "avx512 groups (emulated)", PackFamily::row_groups, gemm_float_avx2);
        check_quant(gemm_quant_avx512_emulated, "avx512 (emulated)", PackFamily::split_rows);
        check_float(gemm_float_avx512_emulated, "avx512 (emulated)", PackFamily::split_rows);
#else
        WB_SKIP_MISSING("built without libsimde-dev (installer/bootstrap.sh installs it): the AVX-512/VNNI kernels are not emulated");
#endif
    }

    void packed_rows_dequantize_like_gguf() {
        std::mt19937 rng(13);
        for (PackFamily family : {PackFamily::row_groups, PackFamily::split_rows})
            for (DType type : {DType::q4_0, DType::q4_1, DType::q8_0, DType::f16, DType::q5_0, DType::q5_1, DType::q4_k, DType::q5_k,
                               DType::q6_k, DType::q2_k, DType::q3_k, DType::bf16, DType::mxfp4}) {
                const int64_t n_in = dtype_traits(type).block_elements == 256 ? 512 : 96;
                Weights w = make_weights({type, n_in, 11}, rng, family);
                std::vector<float> a(static_cast<size_t>(n_in)), b(static_cast<size_t>(n_in));
                for (int64_t r = 0; r < 11; ++r) {
                    packed_row_f32(w.packed, r, a.data());
                    dequantize_row(type, w.gguf.data() + r * (w.gguf.size() / 11), b.data(), n_in);
                    for (int64_t i = 0; i < n_in; ++i)
                        if (a[static_cast<size_t>(i)] != b[static_cast<size_t>(i)])
                            QFAIL(qPrintable(QString("%1 row %2 element %3: %4 vs %5").arg(dtype_name(type).data()).arg(r).arg(i)
                                                 .arg(a[static_cast<size_t>(i)]).arg(b[static_cast<size_t>(i)])));
                }
            }
    }

    // MXFP4 as ggml computes its dot product against q8_0 activations: per block
    // fp16(d_a)·2^(e − 128)·Σ value·q, summed over blocks; the reference kernel equals it.
    void mxfp4_reference_is_ggmls_dot_product() {
        std::mt19937 rng(21);
        const Case c{DType::mxfp4, 128, 5};
        Weights w = make_weights(c, rng, PackFamily::row_groups);
        QCOMPARE(w.packed.layout, PackedLayout::mxfp4x8);
        QCOMPARE(w.packed.n_bytes, w.gguf.size() / 5 * 8);  // 8 rows a group (3 of them padding): 136 bytes per 8 × 32
        auto x = make_inputs(2, c.n_in, rng);
        QuantizedActivations act;
        resize_activations(act, 2, c.n_in);
        quantize_activations(x.data(), 0, 2, act);
        std::vector<float> got(static_cast<size_t>(2 * c.n_out));
        gemm_quant_ref(view_of(w.packed), view_of(act), 0, c.n_out, got.data(), c.n_out);
        for (int64_t t = 0; t < 2; ++t)
            for (int64_t r = 0; r < c.n_out; ++r) {
                double want = 0;  // block products summed in double, as the reference does
                for (int64_t b = 0; b < c.n_in / 32; ++b) {
                    const uint8_t* blk = w.gguf.data() + r * (w.gguf.size() / 5) + b * 17;
                    int32_t isum = 0;
                    for (int j = 0; j < 16; ++j)
                        isum += quant::kMxfp4Values[blk[1 + j] & 0x0F] * act.qs[static_cast<size_t>(t * c.n_in + b * 32 + j)] +
                                quant::kMxfp4Values[blk[1 + j] >> 4] * act.qs[static_cast<size_t>(t * c.n_in + b * 32 + j + 16)];
                    want += static_cast<double>(static_cast<float>(isum) * (quant::e8m0_half(blk[0]) * act.d[static_cast<size_t>(t * act.block_stride + b)]));
                }
                QCOMPARE(got[static_cast<size_t>(t * c.n_out + r)], static_cast<float>(want));
            }
    }

    // Both families describe the same matrix: the reference reads them to the same results.
    void families_agree_under_the_reference() {
        std::mt19937 rng(15);
        for (DType type : {DType::q4_0, DType::q4_1, DType::q8_0}) {
            std::mt19937 same = rng;
            Weights groups = make_weights({type, 160, 13}, rng, PackFamily::row_groups);
            Weights split = make_weights({type, 160, 13}, same, PackFamily::split_rows);
            QVERIFY(is_row_grouped(groups.packed.layout) && !is_row_grouped(split.packed.layout));
            auto x = make_inputs(3, 160, rng);
            QuantizedActivations act;
            resize_activations(act, 3, 160);
            quantize_activations(x.data(), 0, 3, act);
            std::vector<float> a(3 * 13), b(3 * 13);
            gemm_quant_ref(view_of(groups.packed), view_of(act), 0, 13, a.data(), 13);
            gemm_quant_ref(view_of(split.packed), view_of(act), 0, 13, b.data(), 13);
            QCOMPARE(a, b);
        }
        std::mt19937 same = rng;
        Weights groups = make_weights({DType::f16, 160, 13}, rng, PackFamily::row_groups);
        Weights split = make_weights({DType::f16, 160, 13}, same, PackFamily::split_rows);
        QCOMPARE(groups.packed.layout, PackedLayout::f16x8);
        auto x = make_inputs(3, 160, rng);
        std::vector<float> a(3 * 13), b(3 * 13);
        gemm_float_ref(view_of(groups.packed), x.data(), 3, 0, 13, a.data(), 13);
        gemm_float_ref(view_of(split.packed), x.data(), 3, 0, 13, b.data(), 13);
        QCOMPARE(a, b);
    }

    void results_are_batch_and_thread_invariant() {
        std::mt19937 rng(14);
        for (DType type : {DType::q4_1, DType::q8_0, DType::f16, DType::q5_0, DType::bf16, DType::q2_k, DType::q3_k}) {
            const int64_t n_in = dtype_traits(type).block_elements == 256 ? 768 : 576;
            Weights w = make_weights({type, n_in, 64}, rng);
            const int64_t n = 7;
            auto x = make_inputs(n, n_in, rng);
            ThreadPool one(1), two(2);
            MatmulScratch s1, s2;
            std::vector<float> all(static_cast<size_t>(n * 64));
            matmul(w.packed, x.data(), all.data(), n, two, s2);
            for (int64_t t = 0; t < n; ++t) {
                std::vector<float> alone(64);
                matmul(w.packed, x.data() + t * n_in, alone.data(), 1, one, s1);
                for (int r = 0; r < 64; ++r) QCOMPARE(alone[static_cast<size_t>(r)], all[static_cast<size_t>(t * 64 + r)]);
            }
        }
    }

    // A corrupt file's NaN or huge values reach the activations: every quant stays in [-127, 127]
    // and each block's sums stay what 32 such quants can sum to, so the integer kernels that
    // subtract 128·Σq never overflow (found by fuzz_model_load: a NaN after a large value hid it
    // from the block's max).
    void non_finite_activations_keep_quants_in_range() {
        std::vector<float> x(64, 0.5f);
        x[3] = 5e6f;                                   // lane 3 of the first vector...
        x[11] = std::numeric_limits<float>::quiet_NaN();  // ...then NaN in the same lane of the next
        x[40] = std::numeric_limits<float>::infinity();
        x[50] = -1e30f;
        QuantizedActivations a;
        resize_activations(a, 1, 64);
        quantize_activations(x.data(), 0, 1, a);
        for (int i = 0; i < 64; ++i) QVERIFY(a.qs[static_cast<size_t>(i)] >= -127 && a.qs[static_cast<size_t>(i)] <= 127);
        for (int b = 0; b < 2; ++b) {
            QVERIFY(std::abs(a.sum_q[static_cast<size_t>(b)]) <= 32 * 127);
            QVERIFY(std::abs(a.half_sum_q[static_cast<size_t>(2 * b)]) <= 16 * 127);
        }
    }

    // MatmulFusion: an epilogue sees every row of every matrix exactly once, on chunk edges that
    // respect row_align, and with same_rows the last matrix's call comes after the others' for
    // the same rows on the same thread; a caller's pre-quantized input is the one used, and the
    // same input quantized by the caller gives bit-identical results.
    void fusion_contract() {
        std::mt19937 rng(21);
        for (DType type : {DType::q4_1, DType::f16}) {
            Weights a = make_weights({type, 576, 200}, rng), b = make_weights({type, 576, 200}, rng);
            const PackedMatrix* ws[2] = {&a.packed, &b.packed};
            for (int64_t n : {1, 20}) {
                auto x = make_inputs(n, 576, rng);
                ThreadPool pool(2);
                MatmulScratch scratch;
                std::vector<float> plain0(static_cast<size_t>(n * 200)), plain1 = plain0, y0 = plain0, y1 = plain0;
                float* plain[2] = {plain0.data(), plain1.data()};
                matmul_shared_input(ws, x.data(), plain, n, pool, scratch);
                for (bool same_rows : {false, true}) {
                    std::vector<std::atomic<int>> seen(400);
                    std::atomic<int> misaligned{0}, out_of_order{0};
                    std::vector<std::atomic<bool>> first_done(200);
                    MatmulFusion f;
                    f.same_rows = same_rows;
                    f.row_align = 32;
                    f.epilogue = [&](int m, int64_t r0, int64_t r1) {
                        if (r0 % 32 != 0 || (r1 % 32 != 0 && r1 != 200)) misaligned.fetch_add(1);
                        for (int64_t r = r0; r < r1; ++r) {
                            seen[static_cast<size_t>(m * 200 + r)].fetch_add(1);
                            if (m == 0) first_done[static_cast<size_t>(r)] = true;
                            else if (same_rows && !first_done[static_cast<size_t>(r)]) out_of_order.fetch_add(1);
                        }
                    };
                    float* ys[2] = {y0.data(), y1.data()};
                    matmul_shared_input(ws, x.data(), ys, n, pool, scratch, f);
                    for (auto& c : seen) QCOMPARE(c.load(), 1);
                    QCOMPARE(misaligned.load(), 0);
                    QCOMPARE(out_of_order.load(), 0);
                    QVERIFY(y0 == plain0 && y1 == plain1);
                }
                if (type != DType::q4_1) continue;
                QuantizedActivations mine;
                resize_activations(mine, n, 576);
                quantize_activations(x.data(), 0, n, mine);
                MatmulFusion f;
                f.quantized_input = &mine;
                float* ys[2] = {y0.data(), y1.data()};
                matmul_shared_input(ws, x.data(), ys, n, pool, scratch, f);
                QVERIFY(y0 == plain0 && y1 == plain1);
                std::vector<float> doubled(x);
                for (float& v : doubled) v *= 2.0f;
                quantize_activations(doubled.data(), 0, n, mine);  // x stays: the quantized input must win
                matmul_shared_input(ws, x.data(), ys, n, pool, scratch, f);
                QVERIFY(std::abs(y0[0] - 2.0f * plain0[0]) <= 1e-3f * (std::abs(plain0[0]) + 1.0f));
            }
        }
    }

    // The engine's memory target (resident ≤ file + KV + 10%): the 4-, 5- and 8-bit types, Q2_K
    // and Q6_K pack to the file's size; Q3_K to 3.5625 of its 3.4375 bits per weight, Q4_K to
    // 4.625 of 4.5, Q5_K to 5.625 of 5.5 (their 6-bit scales take a byte).
    void row_groups_stay_near_file_size() {
        std::mt19937 rng(17);
        for (DType type : {DType::q4_0, DType::q4_1, DType::q5_0, DType::q5_1, DType::q8_0, DType::q2_k, DType::q6_k}) {
            Weights w = make_weights({type, 512, 16}, rng, PackFamily::row_groups);
            QVERIFY2(w.packed.n_bytes == static_cast<uint64_t>(w.gguf.size()), dtype_name(type).data());
        }
        Weights q3 = make_weights({DType::q3_k, 512, 16}, rng, PackFamily::row_groups);
        QCOMPARE(q3.packed.n_bytes * 110, static_cast<uint64_t>(q3.gguf.size()) * 114);
        Weights q4 = make_weights({DType::q4_k, 512, 16}, rng, PackFamily::row_groups);
        QCOMPARE(q4.packed.n_bytes * 144, static_cast<uint64_t>(q4.gguf.size()) * 148);
        Weights q5 = make_weights({DType::q5_k, 512, 16}, rng, PackFamily::row_groups);
        QCOMPARE(q5.packed.n_bytes * 176, static_cast<uint64_t>(q5.gguf.size()) * 180);
    }

    // The 2-bit row groups through the whole matmul against the plain definition: dequantize the
    // GGUF rows, f32 dot products with the unquantized input. Only the activations' 8-bit rounding
    // separates the two, so the tolerance is that of int8 inputs, not of float reordering.
    void two_bit_groups_match_dequantized_dot() {
        std::mt19937 rng(16);
        for (Case c : {Case{DType::q2_k, 512, 13}, Case{DType::q3_k, 768, 21}, Case{DType::q2_k, 256, 8}, Case{DType::q3_k, 256, 3}}) {
            Weights w = make_weights(c, rng, PackFamily::row_groups);
            QVERIFY(group_crumbs(w.packed.layout));
            std::vector<float> dequantized(static_cast<size_t>(c.n_in * c.n_out));
            const size_t row_bytes = w.gguf.size() / static_cast<size_t>(c.n_out);
            for (int64_t r = 0; r < c.n_out; ++r) dequantize_row(c.type, w.gguf.data() + r * row_bytes, dequantized.data() + r * c.n_in, c.n_in);
            for (int64_t n_tokens : {1, 3, 7, 17}) {
                auto x = make_inputs(n_tokens, c.n_in, rng);
                std::vector<float> want(static_cast<size_t>(n_tokens * c.n_out)), got(want.size());
                for (int64_t t = 0; t < n_tokens; ++t)
                    for (int64_t r = 0; r < c.n_out; ++r) {
                        double sum = 0;
                        for (int64_t i = 0; i < c.n_in; ++i) sum += static_cast<double>(dequantized[static_cast<size_t>(r * c.n_in + i)]) * x[static_cast<size_t>(t * c.n_in + i)];
                        want[static_cast<size_t>(t * c.n_out + r)] = static_cast<float>(sum);
                    }
                ThreadPool pool(1);
                MatmulScratch scratch;
                if (cpu_allow_avx512()) {  // pack_matrix(for_this_cpu) would pick split rows there
                    QuantizedActivations act;
                    resize_activations(act, n_tokens, c.n_in);
                    quantize_activations(x.data(), 0, n_tokens, act);
                    gemm_quant_avx2(view_of(w.packed), view_of(act), 0, c.n_out, got.data(), c.n_out);
                } else {
                    matmul(w.packed, x.data(), got.data(), n_tokens, pool, scratch);
                }
                expect_close(got, want, 2e-2, qPrintable(QString("%1 n_in=%2 tokens=%3").arg(dtype_name(c.type).data()).arg(c.n_in).arg(n_tokens)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestGemmKernels)
#include "test_gemm_kernels.moc"
