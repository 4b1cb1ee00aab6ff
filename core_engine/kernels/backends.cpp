// Which backends can run here. The CUDA query lives in kernels/cuda/ (built only with the
// toolkit); a build without it answers for it here.
#include "workbench/backends.h"

#ifdef WB_HAVE_CUDA
#include "kernels/cuda/cuda_device.h"
#endif

namespace workbench {

const std::vector<std::string>& backend_names() {
    static const std::vector<std::string> names = {"cpu", "cuda"};
    return names;
}

bool cuda_backend_built() {
#ifdef WB_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

Result<std::vector<CudaDevice>> cuda_devices() {
#ifdef WB_HAVE_CUDA
    // Asked once per process: the first query starts the driver, which can take a while, and the
    // devices do not change under a running program (the GUI's menu and every load ask).
    static const Result<std::vector<CudaDevice>> devices = cuda::list_devices();
    return devices;
#else
    return error(StatusCode::unsupported, "this build has no CUDA backend (CMake did not find the CUDA toolkit's nvcc when it was built)");
#endif
}

Status check_backend_name(const std::string& backend) {
    for (const std::string& name : backend_names())
        if (backend == name) return Status::ok_status();
    return error(StatusCode::invalid_argument, "unknown backend '" + backend + "' (cpu or cuda)");
}

Status check_backend_available(const std::string& backend) {
    WB_RETURN_IF_ERROR(check_backend_name(backend));
    if (backend == "cpu") return Status::ok_status();
    if (auto devices = cuda_devices(); !devices.ok()) return devices.status();
    return Status::ok_status();
}

}  // namespace workbench
