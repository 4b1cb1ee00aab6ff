// Device discovery through the CUDA runtime. Without a driver the runtime answers
// cudaErrorInsufficientDriver or cudaErrorNoDevice rather than failing, so this is safe to call
// on any machine the binary runs on.
#include "kernels/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

namespace workbench::cuda {

Result<std::vector<CudaDevice>> list_devices() {
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
        return error(StatusCode::unsupported, std::string("no CUDA device: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
    if (count == 0) return error(StatusCode::unsupported, "no CUDA device: the driver lists none");
    std::vector<CudaDevice> devices;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (const cudaError_t e = cudaGetDeviceProperties(&prop, i); e != cudaSuccess)
            return error(StatusCode::unsupported, "CUDA device " + std::to_string(i) + ": " + cudaGetErrorString(e));
        devices.push_back({prop.name, static_cast<uint64_t>(prop.totalGlobalMem), prop.major, prop.minor});
    }
    return devices;
}

}  // namespace workbench::cuda
