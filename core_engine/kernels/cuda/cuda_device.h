// The CUDA runtime's view of the machine, behind a header without CUDA types so the engine's
// other files compile without the toolkit. Built only when CMake finds it (WB_HAVE_CUDA).
#pragma once

#include <vector>

#include "workbench/backends.h"

namespace workbench::cuda {

// The devices the runtime sees; unsupported with the runtime's reason when it sees none (no
// driver, no device, a driver older than the runtime).
Result<std::vector<CudaDevice>> list_devices();

}  // namespace workbench::cuda
