// One thread per element (per rotated pair for RoPE, per 32-element block for the embedding).
#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/block_decode.cuh"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/gated_activation.cuh"
#include "kernels/cuda/rope_rotate.cuh"

namespace workbench::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t items) { return static_cast<unsigned>((items + kThreads - 1) / kThreads); }

template <DType T>
__global__ void embed_kernel(DeviceMatrix table, const int32_t* __restrict__ tokens, int64_t n_tokens, float scale, float* __restrict__ out) {
    const int64_t n_embd = table.n_in, n_blocks = blocks_per_row(n_embd);
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n_tokens * n_blocks) return;
    const int64_t t = i / n_blocks, b = i % n_blocks;
    float v[kBlock];
    decode_block<T>(table, tokens[t], b, v);
    float* o = out + t * n_embd + b * kBlock;
    const int64_t n_valid = n_embd - b * kBlock < kBlock ? n_embd - b * kBlock : kBlock;
    // The CPU multiplies only when the scale is not 1; x · 1 is exact, so always multiplying is the same.
    for (int j = 0; j < n_valid; ++j) o[j] = v[j] * scale;
}

__global__ void add_kernel(float* x, const float* __restrict__ y, int64_t count) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) x[i] += y[i];
}

__global__ void bias_kernel(float* x, const float* __restrict__ bias, int64_t count, int64_t width) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) x[i] += bias[i % width];
}

__global__ void rope_kernel(float* x, int64_t n_tokens, int64_t width, int64_t head_dim, int32_t n_rot, bool neox,
                            const float* __restrict__ cos, const float* __restrict__ sin) {
    const int64_t half = n_rot / 2, heads = width / head_dim;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n_tokens * heads * half) return;
    const int64_t pair = i % half, head = (i / half) % heads, t = i / (half * heads);
    float* h = x + t * width + head * head_dim;
    const int64_t i0 = neox ? pair : 2 * pair, i1 = neox ? pair + half : 2 * pair + 1;
    const float c = cos[t * half + pair], s = sin[t * half + pair];
    const float u = h[i0], v = h[i1];
    h[i0] = rope_first(u, v, c, s);
    h[i1] = rope_second(u, v, c, s);
}

__global__ void glu_kernel(float* gate, const float* __restrict__ up, int64_t count, bool gelu) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) gate[i] = gated_value(gate[i], up[i], gelu);
}

__global__ void cap_kernel(float* x, int64_t count, float cap) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) x[i] = cap * tanhf(x[i] / cap);
}

// One row a block, one value a thread, in shared memory.
__global__ void hadamard_kernel(float* __restrict__ x, int64_t head_dim, float norm) {
    __shared__ float s[256];
    float* row = x + static_cast<int64_t>(blockIdx.x) * head_dim;
    const int i = static_cast<int>(threadIdx.x);
    s[i] = row[i];
    __syncthreads();
    for (int len = 1; len < head_dim; len <<= 1) {
        float mine = 0;
        if ((i & len) == 0) mine = __fadd_rn(s[i], s[i + len]);
        else mine = __fsub_rn(s[i - len], s[i]);
        __syncthreads();
        s[i] = mine;
        __syncthreads();
    }
    row[i] = __fmul_rn(s[i], norm);
}

__global__ void gather_kernel(const float* __restrict__ x, const int64_t* __restrict__ rows, int64_t n_rows, int64_t width,
                              float* __restrict__ out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n_rows * width) out[i] = x[rows[i / width] * width + i % width];
}

}  // namespace

Status embed_rows(const DeviceMatrix& table, const int32_t* tokens, int64_t n_tokens, float scale, float* out, cudaStream_t stream) {
    const int64_t items = n_tokens * blocks_per_row(table.n_in);
    if (items <= 0) return Status::ok_status();
    const bool known = dispatch_type(table.type, [&](auto type) {
        embed_kernel<decltype(type)::value><<<grid_for(items), kThreads, 0, stream>>>(table, tokens, n_tokens, scale, out);
    });
    if (!known) return error(StatusCode::unsupported, "the CUDA kernels do not read this embedding table's type");
    return check_launch("embedding launch");
}

Status add_into(float* x, const float* y, int64_t count, cudaStream_t stream) {
    if (count <= 0) return Status::ok_status();
    add_kernel<<<grid_for(count), kThreads, 0, stream>>>(x, y, count);
    return check_launch("residual add launch");
}

Status add_bias(float* x, const float* bias, int64_t rows, int64_t width, cudaStream_t stream) {
    if (rows * width <= 0) return Status::ok_status();
    bias_kernel<<<grid_for(rows * width), kThreads, 0, stream>>>(x, bias, rows * width, width);
    return check_launch("bias launch");
}

Status rope_rows(float* x, int64_t n_tokens, int64_t width, int64_t head_dim, int32_t n_rot, bool neox, const float* cos,
                 const float* sin, cudaStream_t stream) {
    const int64_t items = n_tokens * (width / head_dim) * (n_rot / 2);
    if (items <= 0) return Status::ok_status();
    rope_kernel<<<grid_for(items), kThreads, 0, stream>>>(x, n_tokens, width, head_dim, n_rot, neox, cos, sin);
    return check_launch("RoPE launch");
}

Status hadamard_rows(float* x, int64_t n_rows, int64_t head_dim, cudaStream_t stream) {
    if (n_rows <= 0) return Status::ok_status();
    if (head_dim > 256 || (head_dim & (head_dim - 1)) != 0)
        return error(StatusCode::unsupported, "the device's Hadamard transform takes power-of-two rows of at most 256 values");
    hadamard_kernel<<<static_cast<unsigned>(n_rows), static_cast<unsigned>(head_dim), 0, stream>>>(x, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim)));
    return check_launch("Hadamard launch");
}

Status gated_activation(float* gate, const float* up, int64_t count, bool gelu, cudaStream_t stream) {
    if (count <= 0) return Status::ok_status();
    glu_kernel<<<grid_for(count), kThreads, 0, stream>>>(gate, up, count, gelu);
    return check_launch("gated activation launch");
}

Status soft_cap(float* x, int64_t count, float cap, cudaStream_t stream) {
    if (count <= 0) return Status::ok_status();
    cap_kernel<<<grid_for(count), kThreads, 0, stream>>>(x, count, cap);
    return check_launch("soft-cap launch");
}

Status gather_rows(const float* x, const int64_t* rows, int64_t n_rows, int64_t width, float* out, cudaStream_t stream) {
    if (n_rows * width <= 0) return Status::ok_status();
    gather_kernel<<<grid_for(n_rows * width), kThreads, 0, stream>>>(x, rows, n_rows, width, out);
    return check_launch("row gather launch");
}

}  // namespace workbench::cuda
