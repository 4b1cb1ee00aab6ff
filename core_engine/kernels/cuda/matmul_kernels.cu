// GEMV over blocks decoded in registers (plain, and the MLP's gate and up with the activation
// fused); the decode to bf16 that feeds cuBLASLt for prompts.
#include "kernels/cuda/matmul_kernels.h"

#include <string>
#include <type_traits>

#include "kernels/cuda/block_decode.cuh"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/gated_activation.cuh"

namespace workbench::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

__device__ inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// This lane's share of one row's products with NT tokens: lane i decodes the row's blocks i,
// i + 32, ... and multiplies each by the tokens' matching 32 inputs (summed across the warp later).
template <DType T, int NT>
__device__ inline void row_partials(const uint8_t* row, int64_t n_in, const float* __restrict__ x, float (&acc)[NT]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    const int64_t n_blocks = (n_in + kBlock - 1) / kBlock;
    for (int64_t b = lane; b < n_blocks; b += 32) {
        float v[kBlock];
        decode_block<T>(row, b, n_in, v);
        const int64_t first = b * kBlock;
        const int n_valid = n_in - first < kBlock ? static_cast<int>(n_in - first) : kBlock;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            const float* xt = x + t * n_in + first;
            float s = 0.0f;
            if (n_valid == kBlock) {
#pragma unroll
                for (int j = 0; j < kBlock; ++j) s = fmaf(v[j], xt[j], s);
            } else {
                for (int j = 0; j < n_valid; ++j) s = fmaf(v[j], xt[j], s);
            }
            acc[t] += s;
        }
    }
}

// One warp per output row; the lanes' partial sums meet by shuffles; the bias (when given) is
// added to the sum, as the CPU adds it after the product.
template <DType T, int NT>
__global__ void gemv_rows(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t n_in, int64_t n_out,
                          const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ bias) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    if (r >= n_out) return;
    float acc[NT];
    row_partials<T, NT>(w + r * row_bytes, n_in, x, acc);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float s = warp_sum(acc[t]);
        if (threadIdx.x % 32 == 0) y[t * n_out + r] = bias != nullptr ? s + bias[r] : s;
    }
}

// The MLP's gate and up rows r in one warp, over the same inputs, written as act(g) · u: the
// activation fused into the matmuls (one launch and no pass over the gate's outputs).
template <DType T, int NT>
__global__ void gemv_gated_rows(const uint8_t* __restrict__ w_gate, const uint8_t* __restrict__ w_up, int64_t row_bytes, int64_t n_in,
                                int64_t n_out, const float* __restrict__ x, float* __restrict__ y, bool gelu) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    if (r >= n_out) return;
    float g[NT], u[NT];
    row_partials<T, NT>(w_gate + r * row_bytes, n_in, x, g);
    row_partials<T, NT>(w_up + r * row_bytes, n_in, x, u);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float gs = warp_sum(g[t]), us = warp_sum(u[t]);
        if (threadIdx.x % 32 == 0) y[t * n_out + r] = gated_value(gs, us, gelu);
    }
}

// Calls f(std::integral_constant<int, NT>) for a pass of n tokens (1..kGemvTokensPerPass).
template <typename F>
void dispatch_tokens(int64_t n, F&& f) {
    switch (n) {
        case 1: f(std::integral_constant<int, 1>{}); break;
        case 2: f(std::integral_constant<int, 2>{}); break;
        case 3: f(std::integral_constant<int, 3>{}); break;
        case 4: f(std::integral_constant<int, 4>{}); break;
        case 5: f(std::integral_constant<int, 5>{}); break;
        case 6: f(std::integral_constant<int, 6>{}); break;
        case 7: f(std::integral_constant<int, 7>{}); break;
        default: f(std::integral_constant<int, 8>{}); break;
    }
}

unsigned gemv_grid(int64_t n_out) { return static_cast<unsigned>((n_out + kWarpsPerBlock - 1) / kWarpsPerBlock); }

template <DType T>
__global__ void decode_rows_bf16(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t n_in, int64_t n_out,
                                 __nv_bfloat16* __restrict__ out) {
    const int64_t n_blocks = (n_in + kBlock - 1) / kBlock;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n_out * n_blocks) return;
    const int64_t r = i / n_blocks, b = i % n_blocks;
    float v[kBlock];
    decode_block<T>(w + r * row_bytes, b, n_in, v);
    __nv_bfloat16* o = out + r * n_in + b * kBlock;
    const int64_t n_valid = n_in - b * kBlock < kBlock ? n_in - b * kBlock : kBlock;
    for (int j = 0; j < n_valid; ++j) o[j] = __float2bfloat16_rn(v[j]);
}

__global__ void convert_bf16(const float* __restrict__ x, __nv_bfloat16* __restrict__ out, int64_t count) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) out[i] = __float2bfloat16_rn(x[i]);
}

Status unsupported_type(const DeviceMatrix& w) {
    return error(StatusCode::unsupported, "the CUDA kernels do not read " + std::string(dtype_name(w.type)) + " matrices");
}

}  // namespace

Status gemv(const DeviceMatrix& w, const float* x, float* y, int64_t n_tokens, cudaStream_t stream, const float* bias) {
    if (w.n_out <= 0 || n_tokens <= 0) return Status::ok_status();
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kGemvTokensPerPass) {
        const int64_t n = n_tokens - t0 < kGemvTokensPerPass ? n_tokens - t0 : kGemvTokensPerPass;
        const bool known = dispatch_type(w.type, [&](auto type) {
            dispatch_tokens(n, [&](auto nt) {
                gemv_rows<decltype(type)::value, decltype(nt)::value>
                    <<<gemv_grid(w.n_out), kWarpsPerBlock * 32, 0, stream>>>(w.data, w.row_bytes, w.n_in, w.n_out, x + t0 * w.n_in, y + t0 * w.n_out, bias);
            });
        });
        if (!known) return unsupported_type(w);
    }
    return check_launch("gemv launch");
}

Status gemv_gated(const DeviceMatrix& gate, const DeviceMatrix& up, const float* x, float* y, int64_t n_tokens, bool gelu, cudaStream_t stream) {
    if (gate.type != up.type || gate.n_in != up.n_in || gate.n_out != up.n_out || gate.row_bytes != up.row_bytes)
        return error(StatusCode::invalid_argument, "gemv_gated: the gate and up matrices differ in type or shape");
    if (gate.n_out <= 0 || n_tokens <= 0) return Status::ok_status();
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kGemvTokensPerPass) {
        const int64_t n = n_tokens - t0 < kGemvTokensPerPass ? n_tokens - t0 : kGemvTokensPerPass;
        const bool known = dispatch_type(gate.type, [&](auto type) {
            dispatch_tokens(n, [&](auto nt) {
                gemv_gated_rows<decltype(type)::value, decltype(nt)::value><<<gemv_grid(gate.n_out), kWarpsPerBlock * 32, 0, stream>>>(
                    gate.data, up.data, gate.row_bytes, gate.n_in, gate.n_out, x + t0 * gate.n_in, y + t0 * gate.n_out, gelu);
            });
        });
        if (!known) return unsupported_type(gate);
    }
    return check_launch("gated gemv launch");
}

Status decode_to_bf16(const DeviceMatrix& w, uint16_t* out, cudaStream_t stream) {
    const int64_t items = w.n_out * blocks_per_row(w.n_in);
    if (items <= 0) return Status::ok_status();
    const unsigned grid = static_cast<unsigned>((items + 255) / 256);
    const bool known = dispatch_type(w.type, [&](auto type) {
        decode_rows_bf16<decltype(type)::value><<<grid, 256, 0, stream>>>(w.data, w.row_bytes, w.n_in, w.n_out,
                                                                          reinterpret_cast<__nv_bfloat16*>(out));
    });
    if (!known) return unsupported_type(w);
    return check_launch("decode_to_bf16 launch");
}

Status f32_to_bf16(const float* x, uint16_t* out, int64_t count, cudaStream_t stream) {
    if (count <= 0) return Status::ok_status();
    convert_bf16<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(x, reinterpret_cast<__nv_bfloat16*>(out), count);
    return check_launch("f32_to_bf16 launch");
}

}  // namespace workbench::cuda
