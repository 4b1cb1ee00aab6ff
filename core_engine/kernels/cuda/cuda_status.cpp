#include "kernels/cuda/cuda_status.h"

#include <string>

namespace workbench::cuda {

Status check(cudaError_t result, std::string_view what) {
    if (result == cudaSuccess) return Status::ok_status();
    const StatusCode code = result == cudaErrorMemoryAllocation                                           ? StatusCode::resource_exhausted
                            : result == cudaErrorNoDevice || result == cudaErrorInsufficientDriver ||
                                      result == cudaErrorDevicesUnavailable                              ? StatusCode::unsupported
                                                                                                          : StatusCode::internal;
    return error(code, std::string(what) + ": " + cudaGetErrorString(result) + " (" + cudaGetErrorName(result) + ")");
}

}  // namespace workbench::cuda
