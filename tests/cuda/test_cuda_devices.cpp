// Device discovery and the backend's availability: where no device can be used the reason is the
// one `--backend cuda` prints and the test skips with it; where one can, each device is described.
#include "tests/cuda/cuda_check.h"
#include "workbench/backends.h"

int main() {
    using namespace workbench;
    const Result<std::vector<CudaDevice>> devices = cuda_devices();
    const Status cuda = check_backend_available("cuda");
    CHECK(check_backend_available("cpu").ok(), "the CPU backend always runs");
    CHECK(check_backend_available("tpu").code() == StatusCode::invalid_argument, "an unknown name is a bad argument");
    if (!devices.ok()) {
        const std::string& why = devices.status().message();
        CHECK(devices.status().code() == StatusCode::unsupported, why);
        CHECK(why.rfind(cuda_backend_built() ? "no CUDA device: " : "this build has no CUDA backend", 0) == 0, why);
        CHECK(cuda.message() == why, "--backend cuda gives the same reason: " + cuda.message());
        if (cudacheck::failures) return cudacheck::finish();
        cudacheck::skip(why);
    }
    CHECK(cuda_backend_built(), "devices listed by a build without the backend");
    CHECK(cuda.ok(), "a device is listed, so --backend cuda runs: " + cuda.message());
    CHECK(!devices->empty(), "an ok list is not empty");
    for (const CudaDevice& d : *devices) {
        std::printf("device: %s, %.1f GiB, compute %d.%d\n", d.name.c_str(), d.memory_bytes / 1073741824.0, d.compute_major, d.compute_minor);
        CHECK(!d.name.empty(), "a device has a name");
        CHECK(d.memory_bytes >= (1ull << 30), d.name + " has at least 1 GiB");
        CHECK(d.compute_major >= 7, d.name + ": CUDA 13 runs on compute 7.5 and newer");
    }
    return cudacheck::finish();
}
