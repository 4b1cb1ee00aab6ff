// Every CUDA runtime call's result as a Status: the engine API never lets a CUDA error abort the
// process or escape as an exception. Messages name the operation and the runtime's words.
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "workbench/status.h"

namespace workbench::cuda {

// ok for cudaSuccess; otherwise resource_exhausted for out-of-memory, unsupported for a missing
// or unusable device, internal for the rest ("rms_norm launch: invalid configuration argument").
Status check(cudaError_t result, std::string_view what);

// The last launch's error (kernels report asynchronously; this catches bad launch parameters).
inline Status check_launch(std::string_view what) { return check(cudaGetLastError(), what); }

}  // namespace workbench::cuda

#define WB_CUDA_RETURN_IF_ERROR(call, what) WB_RETURN_IF_ERROR(::workbench::cuda::check((call), (what)))
