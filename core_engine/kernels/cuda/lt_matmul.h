// y[n, n_out] (f32) = x[n, k] · Wᵀ (+ bias) with W [n_out, k], both bf16, through cuBLASLt: the
// prompt path's matmul, a bias added by cuBLASLt's epilogue. One handle and one workspace
// (32 MiB) per backend; the heuristic's algorithm is asked once per shape (and epilogue) and
// kept. Every cuBLASLt call's status becomes a Status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "kernels/cuda/device_buffer.h"
#include "workbench/status.h"

namespace workbench::cuda {

class LtMatmul {
public:
    static Result<std::unique_ptr<LtMatmul>> create(cudaStream_t stream);
    ~LtMatmul();
    LtMatmul(const LtMatmul&) = delete;
    LtMatmul& operator=(const LtMatmul&) = delete;

    // w: [n_out, k] bf16, x: [n, k] bf16, y: [n, n_out] f32, bias: n_out f32 or null; device
    // pointers. unsupported when cuBLASLt has no algorithm for the shape (with that epilogue).
    Status run(const uint16_t* w, const uint16_t* x, float* y, int64_t n_out, int64_t n, int64_t k, const float* bias = nullptr);
    size_t workspace_bytes() const { return workspace_.size(); }

private:
    struct Plan;
    LtMatmul() = default;

    void* handle_ = nullptr;   // cublasLtHandle_t (kept opaque so this header needs no cuBLASLt)
    cudaStream_t stream_ = nullptr;
    DeviceBuffer workspace_;
    std::map<std::tuple<int64_t, int64_t, int64_t, bool>, std::unique_ptr<Plan>> plans_;   // (n_out, n, k, bias)
};

}  // namespace workbench::cuda
