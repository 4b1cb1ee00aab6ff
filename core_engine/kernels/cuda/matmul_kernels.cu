// The GEMV: weights read 16 bytes a lane at a time and decoded in registers, rows split over up
// to 8 warps when they are too few to fill the device (plain, and the MLP's gate and up with the
// activation fused); the decode to bf16 that feeds cuBLASLt for prompts.
#include "kernels/cuda/matmul_kernels.h"

#include <string>
#include <type_traits>

#include "kernels/cuda/block_decode.cuh"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/gated_activation.cuh"

namespace workbench::cuda {
namespace {

constexpr int kWarps = 8;   // per block of the GEMV

__device__ inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// This lane's share of row r's products with NT tokens, over the chunks part·32 + lane,
// (part + ways)·32 + lane, ...: each one 16-byte load of the weights (Chunk<T>), decoded in
// registers and multiplied by the tokens' matching inputs (read as float4). Summed across the
// warp, and across the row's `ways` warps, later.
template <DType T, int NT>
__device__ inline void chunk_partials(const DeviceMatrix& w, int64_t r, int part, int ways, const float* __restrict__ x, float (&acc)[NT]) {
    constexpr int E = Chunk<T>::kElements;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    const int64_t n_chunks = w.n_in / E;
    const uint4* row = reinterpret_cast<const uint4*>(w.data + r * w.row_bytes);
    for (int64_t c = static_cast<int64_t>(part) * 32 + lane; c < n_chunks; c += static_cast<int64_t>(ways) * 32) {
        float v[E];
        Chunk<T>::decode(w, r, c, __ldg(row + c), v);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            const float4* xt = reinterpret_cast<const float4*>(x + t * w.n_in + c * E);
            float s = 0.0f;
#pragma unroll
            for (int j = 0; j < E / 4; ++j) {
                const float4 xv = xt[j];
                s = fmaf(v[4 * j], xv.x, s);
                s = fmaf(v[4 * j + 1], xv.y, s);
                s = fmaf(v[4 * j + 2], xv.z, s);
                s = fmaf(v[4 * j + 3], xv.w, s);
            }
            acc[t] += s;
        }
    }
}

// The same share for rows the GEMV cannot read in 16-byte chunks (plain types whose rows are
// not whole chunks): lane i decodes blocks i, i + 32, ... of the row's part.
template <DType T, int NT>
__device__ inline void block_partials(const DeviceMatrix& w, int64_t r, int part, int ways, const float* __restrict__ x, float (&acc)[NT]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    const int64_t n_blocks = blocks_per_row(w.n_in);
    for (int64_t b = static_cast<int64_t>(part) * 32 + lane; b < n_blocks; b += static_cast<int64_t>(ways) * 32) {
        float v[kBlock];
        decode_block<T>(w, r, b, v);
        const int64_t first = b * kBlock;
        const int n_valid = w.n_in - first < kBlock ? static_cast<int>(w.n_in - first) : kBlock;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            const float* xt = x + t * w.n_in + first;
            float s = 0.0f;
            if (n_valid == kBlock) {   // unrolled, so v stays in registers
#pragma unroll
                for (int j = 0; j < kBlock; ++j) s = fmaf(v[j], xt[j], s);
            } else {
                for (int j = 0; j < n_valid; ++j) s = fmaf(v[j], xt[j], s);
            }
            acc[t] += s;
        }
    }
}

template <DType T, int NT, bool kChunks>
__device__ inline void partials(const DeviceMatrix& w, int64_t r, int part, int ways, const float* __restrict__ x, float (&acc)[NT]) {
    if constexpr (kChunks) chunk_partials<T, NT>(w, r, part, ways, x, acc);
    else block_partials<T, NT>(w, r, part, ways, x, acc);
}

// Row r's sums, from `ways` warps each holding a part of the row (split-K for matrices with few
// rows): the parts meet in shared memory and are added in order, so the result does not depend
// on which warp finished first. ways = 1: the warp's own sums. Every thread of the block calls it.
template <int NT>
__device__ inline void row_sums(float (&acc)[NT], int ways, float (&shared)[kWarps][NT]) {
    const int warp = threadIdx.x / 32;
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = warp_sum(acc[t]);
    if (ways == 1) return;
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int t = 0; t < NT; ++t) shared[warp][t] = acc[t];
    __syncthreads();
    if (warp % ways != 0) return;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        float s = shared[warp][t];
        for (int p = 1; p < ways; ++p) s += shared[warp + p][t];
        acc[t] = s;
    }
}

// y[t, r] = x[t] · W[r] (+ bias[r]) for NT tokens; a block of kWarps warps serves kWarps / ways
// rows. Gated: W is the MLP's gate, `up` its up matrix (same type and shape), and the result is
// act(x · G[r]) · (x · U[r]) — the activation fused into the decode step's matmuls.
template <DType T, int NT, bool kChunks, bool kGated>
__global__ void __launch_bounds__(kWarps * 32)
    gemv_kernel(DeviceMatrix w, DeviceMatrix up, const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ bias, int ways,
                bool gelu) {
    __shared__ float shared_g[kWarps][NT];
    __shared__ float shared_u[kGated ? kWarps : 1][NT];
    const int warp = threadIdx.x / 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * (kWarps / ways) + warp / ways;
    const int part = warp % ways;
    const bool live = r < w.n_out;   // a block's last rows may lie past the matrix: they still meet the barrier
    float g[NT], u[NT];
    if (live) partials<T, NT, kChunks>(w, r, part, ways, x, g);
    else
#pragma unroll
        for (int t = 0; t < NT; ++t) g[t] = 0.0f;
    row_sums<NT>(g, ways, shared_g);
    if constexpr (kGated) {
        if (live) partials<T, NT, kChunks>(up, r, part, ways, x, u);
        else
#pragma unroll
            for (int t = 0; t < NT; ++t) u[t] = 0.0f;
        row_sums<NT>(u, ways, shared_u);
    }
    if (!live || part != 0 || threadIdx.x % 32 != 0) return;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        if constexpr (kGated) y[t * w.n_out + r] = gated_value(g[t], u[t], gelu);
        else y[t * w.n_out + r] = bias != nullptr ? g[t] + bias[r] : g[t];
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

int multiprocessors() {
    static const int count = [] {
        int device = 0, n = 0;
        if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) n = 0;
        return n > 0 ? n : 64;
    }();
    return count;
}

// Warps per row: split K while the rows alone would leave the device short of warps (16 per
// multiprocessor keeps its loads in flight) and each lane still reads a chunk per pass.
int gemv_ways(const DeviceMatrix& w, bool chunks) {
    int64_t units = blocks_per_row(w.n_in);   // what a lane reads at a time
    if (chunks) dispatch_type(w.type, [&](auto type) { units = w.n_in / Chunk<decltype(type)::value>::kElements; });
    int ways = 1;
    while (ways < kWarps && w.n_out * ways < static_cast<int64_t>(multiprocessors()) * 16 && units / (ways * 2) >= 32) ways *= 2;
    return ways;
}

// One launch per pass of up to kGemvTokensPerPass tokens; false for a type the kernels do not read.
template <bool kGated>
bool launch_gemv(const DeviceMatrix& w, const DeviceMatrix& up, const float* x, float* y, int64_t n_tokens, const float* bias, bool gelu,
                 cudaStream_t stream) {
    // Chunks read the inputs as float4 too.
    const bool chunks = reads_in_chunks(w) && (!kGated || reads_in_chunks(up)) && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    const int ways = gemv_ways(w, chunks);
    const unsigned grid = static_cast<unsigned>((w.n_out + kWarps / ways - 1) / (kWarps / ways));
    return dispatch_type(w.type, [&](auto type) {
        constexpr DType T = decltype(type)::value;
        for (int64_t t0 = 0; t0 < n_tokens; t0 += kGemvTokensPerPass) {
            const int64_t n = n_tokens - t0 < kGemvTokensPerPass ? n_tokens - t0 : kGemvTokensPerPass;
            const float* xs = x + t0 * w.n_in;
            float* ys = y + t0 * w.n_out;
            dispatch_tokens(n, [&](auto nt) {
                constexpr int NT = decltype(nt)::value;
                if constexpr (split_on_device(T)) {
                    gemv_kernel<T, NT, true, kGated><<<grid, kWarps * 32, 0, stream>>>(w, up, xs, ys, bias, ways, gelu);
                } else if (chunks) {
                    gemv_kernel<T, NT, true, kGated><<<grid, kWarps * 32, 0, stream>>>(w, up, xs, ys, bias, ways, gelu);
                } else {
                    gemv_kernel<T, NT, false, kGated><<<grid, kWarps * 32, 0, stream>>>(w, up, xs, ys, bias, ways, gelu);
                }
            });
        }
    });
}

template <DType T>
__global__ void decode_rows_bf16(DeviceMatrix w, __nv_bfloat16* __restrict__ out) {
    const int64_t n_blocks = blocks_per_row(w.n_in);
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= w.n_out * n_blocks) return;
    const int64_t r = i / n_blocks, b = i % n_blocks;
    float v[kBlock];
    decode_block<T>(w, r, b, v);
    __nv_bfloat16* o = out + r * w.n_in + b * kBlock;
    const int64_t n_valid = w.n_in - b * kBlock < kBlock ? w.n_in - b * kBlock : kBlock;
    for (int j = 0; j < n_valid; ++j) o[j] = __float2bfloat16_rn(v[j]);
}

__global__ void convert_bf16(const float* __restrict__ x, __nv_bfloat16* __restrict__ out, int64_t count) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) out[i] = __float2bfloat16_rn(x[i]);
}

Status unsupported_type(const DeviceMatrix& w) {
    return error(StatusCode::unsupported, "the CUDA kernels do not read " + std::string(dtype_name(w.type)) + " matrices");
}

// Split matrices are read in chunks only, which read the inputs as float4.
Status check_inputs(const DeviceMatrix& w, const float* x) {
    if (split_on_device(w.type) && reinterpret_cast<uintptr_t>(x) % 16 != 0)
        return error(StatusCode::invalid_argument, "gemv: the inputs of a quantized matrix must start at a 16-byte boundary");
    return Status::ok_status();
}

}  // namespace

Status gemv(const DeviceMatrix& w, const float* x, float* y, int64_t n_tokens, cudaStream_t stream, const float* bias) {
    if (w.n_out <= 0 || n_tokens <= 0) return Status::ok_status();
    WB_RETURN_IF_ERROR(check_inputs(w, x));
    if (!launch_gemv<false>(w, w, x, y, n_tokens, bias, false, stream)) return unsupported_type(w);
    return check_launch("gemv launch");
}

Status gemv_gated(const DeviceMatrix& gate, const DeviceMatrix& up, const float* x, float* y, int64_t n_tokens, bool gelu, cudaStream_t stream) {
    if (gate.type != up.type || gate.n_in != up.n_in || gate.n_out != up.n_out || gate.row_bytes != up.row_bytes)
        return error(StatusCode::invalid_argument, "gemv_gated: the gate and up matrices differ in type or shape");
    if (gate.n_out <= 0 || n_tokens <= 0) return Status::ok_status();
    WB_RETURN_IF_ERROR(check_inputs(gate, x));
    if (!launch_gemv<true>(gate, up, x, y, n_tokens, nullptr, gelu, stream)) return unsupported_type(gate);
    return check_launch("gated gemv launch");
}

Status decode_to_bf16(const DeviceMatrix& w, uint16_t* out, cudaStream_t stream) {
    const int64_t items = w.n_out * blocks_per_row(w.n_in);
    if (items <= 0) return Status::ok_status();
    const unsigned grid = static_cast<unsigned>((items + 255) / 256);
    const bool known = dispatch_type(w.type, [&](auto type) {
        decode_rows_bf16<decltype(type)::value><<<grid, 256, 0, stream>>>(w, reinterpret_cast<__nv_bfloat16*>(out));
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
