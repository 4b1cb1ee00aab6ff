// The compute backends a model can run on: "cpu" (always) and "cuda" (when this build found the
// CUDA toolkit and the machine has a device). The GUI enables its backend choice from here, and
// Engine::load refuses a backend that cannot run, with the reason; nothing falls back silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workbench/status.h"

namespace workbench {

// The names EngineConfig::backend takes, in the order menus list them.
const std::vector<std::string>& backend_names();

struct CudaDevice {
    std::string name;                  // "NVIDIA H200"
    uint64_t memory_bytes = 0;
    int32_t compute_major = 0, compute_minor = 0;
};

// Whether this build has the CUDA backend (CMake found nvcc).
bool cuda_backend_built();
// The CUDA devices, or unsupported naming why there are none: "this build has no CUDA backend
// (...)", "no CUDA device: <the driver's words>".
Result<std::vector<CudaDevice>> cuda_devices();

// ok for a name in backend_names(), else invalid_argument naming it (what a configuration file
// may say, whether or not this machine can run it).
Status check_backend_name(const std::string& backend);

// ok when `backend` can run a model here; invalid_argument for a name that is not a backend,
// unsupported with the reason otherwise (a missing device is not "busy, try later").
Status check_backend_available(const std::string& backend);

}  // namespace workbench
