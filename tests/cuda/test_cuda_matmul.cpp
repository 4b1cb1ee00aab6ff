// First, without a device: the split layout of the quantized types (device_matrix.h) holds the
// file's values. Then the device matmuls against the CPU's reference arithmetic on random data,
// for every weight format the CUDA backend keeps on the device: the GEMV (1–13 tokens: one pass, a pass and a
// tail) within 1e-4 of the output's RMS (f32 accumulation, another order), and the prompt path
// (bf16 decode + cuBLASLt) within 1.5e-2 (its inputs are rounded to bf16's 8 bits). Shapes: the
// tiny model's, the 1B model's attention output, 37 rows of 4096 (each row split over 4 or 8 warps,
// a block's last row past the matrix), and a width that is not whole 16-byte loads for the
// plain types; each with and without a bias (fused into the GEMV; cuBLASLt's epilogue on the
// prompt path). The output is filled with NaN before each run, so rows left unwritten fail. The
// MLP's fused GEMV (gate and up with SiLU or GELU in one pass) matches the two GEMVs followed by
// the element-wise activation it replaces within 1e-6 of the largest output (the same sums; only
// the compiler's contraction of the activation may differ between the two kernels).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/lt_matmul.h"
#include "kernels/cuda/matmul_kernels.h"
#include "tensor/dequantize.h"
#include "tests/cuda/cuda_check.h"
#include "workbench/backends.h"

using namespace workbench;

namespace {

// Largest |got − expected| over the expected values' RMS.
double relative_error(const std::vector<float>& got, const std::vector<double>& expected) {
    double worst = 0, sq = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        worst = cudacheck::worse(worst, std::fabs(got[i] - expected[i]));
        sq += expected[i] * expected[i];
    }
    return worst / std::max(1e-30, std::sqrt(sq / static_cast<double>(expected.size())));
}

template <typename T>
Result<cuda::DeviceBuffer> to_device(const std::vector<T>& host) {
    WB_ASSIGN_OR_RETURN(cuda::DeviceBuffer b, cuda::DeviceBuffer::allocate(host.size() * sizeof(T)));
    WB_RETURN_IF_ERROR(b.upload(host.data(), host.size() * sizeof(T)));
    return b;
}

// GGUF rows in the device's layout (quantized blocks split into quants and scales).
std::vector<uint8_t> device_layout(DType type, const std::vector<uint8_t>& rows, int64_t n_in, int64_t n_out) {
    std::vector<uint8_t> laid(static_cast<size_t>(cuda::device_matrix_bytes(type, n_in, n_out).total));
    cuda::to_device_layout(type, rows.data(), n_in, n_out, laid.data());
    return laid;
}

// Element i of row r read from the device layout as device_matrix.h describes it (host side,
// no device needed): the quants at row · row_bytes, the f16 scales from scales_offset.
float element_of_layout(DType type, const std::vector<uint8_t>& laid, int64_t n_in, int64_t n_out, int64_t r, int64_t i) {
    const cuda::DeviceMatrixBytes at = cuda::device_matrix_bytes(type, n_in, n_out);
    const int64_t block = r * (n_in / 32) + i / 32, j = i % 32;
    auto half_at = [&](int64_t byte) { return fp16_to_fp32(static_cast<uint16_t>(laid[byte] | laid[byte + 1] << 8)); };
    const uint8_t* quants = laid.data() + r * at.row_bytes + (i / 32) * cuda::quant_bytes(type);
    if (type == DType::q8_0) return static_cast<float>(static_cast<int8_t>(quants[j])) * half_at(at.scales_offset + block * 2);
    const int nibble = j < 16 ? quants[j] & 0xF : quants[j - 16] >> 4;
    if (type == DType::q4_0) return static_cast<float>(nibble - 8) * half_at(at.scales_offset + block * 2);
    return static_cast<float>(nibble) * half_at(at.scales_offset + block * 4) + half_at(at.scales_offset + block * 4 + 2);
}

// The split layout holds the file's values, its scales 256-byte aligned and its quant rows whole
// 16-byte loads. Runs without a device.
void check_layout(DType type, int64_t n_in, int64_t n_out) {
    const std::string name = std::string(dtype_name(type)) + " layout";
    const int64_t row_bytes = static_cast<int64_t>(dtype_row_bytes(dtype_traits(type), static_cast<uint64_t>(n_in)));
    const std::vector<float> w = cudacheck::random_floats(static_cast<size_t>(n_in * n_out), 1.0f, 5);
    std::vector<uint8_t> rows(static_cast<size_t>(row_bytes * n_out));
    std::vector<float> expected(static_cast<size_t>(n_in));
    for (int64_t r = 0; r < n_out; ++r) CHECK(quantize_row(type, w.data() + r * n_in, rows.data() + r * row_bytes, n_in), name + ": quantize");
    const std::vector<uint8_t> laid = device_layout(type, rows, n_in, n_out);
    const cuda::DeviceMatrixBytes at = cuda::device_matrix_bytes(type, n_in, n_out);
    CHECK(at.scales_offset % 256 == 0 && at.row_bytes % 16 == 0, name + ": scales or rows misaligned");
    int64_t wrong = 0;
    for (int64_t r = 0; r < n_out; ++r) {
        CHECK(dequantize_row(type, rows.data() + r * row_bytes, expected.data(), n_in), name + ": dequantize");
        for (int64_t i = 0; i < n_in; ++i) wrong += element_of_layout(type, laid, n_in, n_out, r, i) != expected[static_cast<size_t>(i)];
    }
    std::printf("%-18s %lldx%lld: %lld elements differ from the file's\n", name.c_str(), static_cast<long long>(n_out),
                static_cast<long long>(n_in), static_cast<long long>(wrong));
    CHECK(wrong == 0, name + ": the device layout changes the matrix");
}

void check_type(DType type, int64_t n_in, int64_t n_out, cuda::LtMatmul& lt) {
    const std::string name = std::string(dtype_name(type)) + " " + std::to_string(n_out) + "x" + std::to_string(n_in);
    const DTypeTraits& traits = dtype_traits(type);
    const int64_t row_bytes = static_cast<int64_t>(dtype_row_bytes(traits, static_cast<uint64_t>(n_in)));
    const std::vector<float> w = cudacheck::random_floats(static_cast<size_t>(n_in * n_out), 1.0f, 7);
    std::vector<uint8_t> blocks(static_cast<size_t>(row_bytes * n_out));
    std::vector<float> w_ref(w.size());
    for (int64_t r = 0; r < n_out; ++r) {
        CHECK(quantize_row(type, w.data() + r * n_in, blocks.data() + r * row_bytes, n_in), name + ": quantize");
        CHECK(dequantize_row(type, blocks.data() + r * row_bytes, w_ref.data() + r * n_in, n_in), name + ": dequantize");
    }
    constexpr int64_t kMaxTokens = 40;
    const std::vector<float> x = cudacheck::random_floats(static_cast<size_t>(kMaxTokens * n_in), 1.0f, 11);
    auto dw = to_device(device_layout(type, blocks, n_in, n_out));
    auto dx = to_device(x);
    auto dy = cuda::DeviceBuffer::allocate(static_cast<size_t>(kMaxTokens * n_out) * 4);
    auto w16 = cuda::DeviceBuffer::allocate(static_cast<size_t>(n_in * n_out) * 2);
    auto x16 = cuda::DeviceBuffer::allocate(static_cast<size_t>(kMaxTokens * n_in) * 2);
    CHECK(dw.ok() && dx.ok() && dy.ok() && w16.ok() && x16.ok(), name + ": device buffers");
    if (!dw.ok() || !dx.ok() || !dy.ok() || !w16.ok() || !x16.ok()) return;
    const cuda::DeviceMatrix m = cuda::device_matrix_at(type, dw->as<uint8_t>(), n_in, n_out);
    const std::vector<float> bias = cudacheck::random_floats(static_cast<size_t>(n_out), 1.0f, 17);
    auto dbias = to_device(bias);
    CHECK(dbias.ok(), name + ": device buffers");
    if (!dbias.ok()) return;
    for (const int64_t n : {1, 3, 8, 13, 40})
        for (const bool with_bias : {false, true}) {
            std::vector<double> expected(static_cast<size_t>(n * n_out));
            for (int64_t t = 0; t < n; ++t)
                for (int64_t r = 0; r < n_out; ++r) {
                    double s = with_bias ? bias[static_cast<size_t>(r)] : 0.0;
                    for (int64_t i = 0; i < n_in; ++i) s += static_cast<double>(w_ref[static_cast<size_t>(r * n_in + i)]) * x[static_cast<size_t>(t * n_in + i)];
                    expected[static_cast<size_t>(t * n_out + r)] = s;
                }
            std::vector<float> got(expected.size());
            const bool prompt_path = n > 13;
            const float* b = with_bias ? dbias->as<float>() : nullptr;
            Status s = cuda::check(cudaMemset(dy->data(), 0xFF, dy->size()), "NaN fill");
            if (s.ok()) s = prompt_path ? cuda::decode_to_bf16(m, w16->as<uint16_t>(), nullptr) : cuda::gemv(m, dx->as<float>(), dy->as<float>(), n, nullptr, b);
            if (s.ok() && prompt_path) s = cuda::f32_to_bf16(dx->as<float>(), x16->as<uint16_t>(), n * n_in, nullptr);
            // The bias by cuBLASLt's epilogue.
            if (s.ok() && prompt_path) s = lt.run(w16->as<uint16_t>(), x16->as<uint16_t>(), dy->as<float>(), n_out, n, n_in, b);
            if (s.ok()) s = cuda::check(cudaDeviceSynchronize(), "matmul");
            if (s.ok()) s = dy->download(got.data(), got.size() * 4);
            CHECK(s.ok(), name + ": " + s.message());
            if (!s.ok()) continue;
            const double err = relative_error(got, expected), bound = prompt_path ? 1.5e-2 : 1e-4;
            std::printf("%-18s %2lld tokens (%s%s): relative error %.2e (bound %.0e)\n", name.c_str(), static_cast<long long>(n),
                        prompt_path ? "cuBLASLt" : "gemv", with_bias ? " + bias" : "", err, bound);
            CHECK(err <= bound, name + (with_bias ? " + bias" : "") + ": the device result departs from the reference");
        }
    // The fused gate/up GEMV against the unfused sequence, on the device.
    const std::vector<float> w_up = cudacheck::random_floats(w.size(), 1.0f, 13);
    std::vector<uint8_t> up_blocks(blocks.size());
    for (int64_t r = 0; r < n_out; ++r)
        CHECK(quantize_row(type, w_up.data() + r * n_in, up_blocks.data() + r * row_bytes, n_in), name + ": quantize up");
    auto dup = to_device(device_layout(type, up_blocks, n_in, n_out));
    auto dg = cuda::DeviceBuffer::allocate(static_cast<size_t>(kMaxTokens * n_out) * 4);
    CHECK(dup.ok() && dg.ok(), name + ": device buffers");
    if (!dup.ok() || !dg.ok()) return;
    const cuda::DeviceMatrix up = cuda::device_matrix_at(type, dup->as<uint8_t>(), n_in, n_out);
    for (const int64_t n : {1, 3, 13})
        for (const bool gelu : {false, true}) {
            std::vector<float> fused(static_cast<size_t>(n * n_out)), unfused(fused.size());
            Status s = cuda::check(cudaMemset(dy->data(), 0xFF, dy->size()), "NaN fill");
            if (s.ok()) s = cuda::gemv_gated(m, up, dx->as<float>(), dy->as<float>(), n, gelu, nullptr);
            if (s.ok()) s = cuda::gemv(m, dx->as<float>(), dg->as<float>(), n, nullptr);
            if (s.ok()) s = cuda::gemv(up, dx->as<float>(), dg->as<float>() + n * n_out, n, nullptr);
            if (s.ok()) s = cuda::gated_activation(dg->as<float>(), dg->as<float>() + n * n_out, n * n_out, gelu, nullptr);
            if (s.ok()) s = cuda::check(cudaDeviceSynchronize(), "gated gemv");
            if (s.ok()) s = dy->download(fused.data(), fused.size() * 4);
            if (s.ok()) s = dg->download(unfused.data(), unfused.size() * 4);
            CHECK(s.ok(), name + ": gated: " + s.message());
            if (!s.ok()) continue;
            const auto [worst, largest] = cudacheck::difference(fused, unfused);
            std::printf("%-18s %2lld tokens gated gemv (%s): largest difference from the unfused kernels %.2e of %.2f\n", name.c_str(),
                        static_cast<long long>(n), gelu ? "GELU" : "SiLU", worst, largest);
            CHECK(worst <= 1e-6 * largest, name + ": the fused gate/up GEMV departs from the unfused kernels");
        }
}

}  // namespace

int main() {
    for (const DType type : {DType::q4_0, DType::q4_1, DType::q8_0}) check_layout(type, 96, 7);
    if (auto devices = cuda_devices(); !devices.ok()) {
        if (cudacheck::failures > 0) return cudacheck::finish();
        cudacheck::skip(devices.status().message());
    }
    auto lt = cuda::LtMatmul::create(nullptr);
    CHECK(lt.ok(), lt.status().message());
    if (!lt.ok()) return cudacheck::finish();
    for (const DType type : {DType::q4_0, DType::q4_1, DType::q8_0, DType::f16, DType::bf16, DType::f32}) {
        check_type(type, 64, 96, **lt);
        check_type(type, 2048, 512, **lt);
        check_type(type, 4096, 37, **lt);   // few rows: each split over 4 (q4) or 8 warps
    }
    for (const DType type : {DType::f16, DType::bf16, DType::f32}) check_type(type, 100, 37, **lt);
    return cudacheck::finish();
}
