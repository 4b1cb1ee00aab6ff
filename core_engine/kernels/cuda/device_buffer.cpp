#include "kernels/cuda/device_buffer.h"

#include <string>
#include <utility>

#include "kernels/cuda/cuda_status.h"

namespace workbench::cuda {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), n_bytes_(std::exchange(other.n_bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (data_) (void)cudaFree(data_);
        data_ = std::exchange(other.data_, nullptr);
        n_bytes_ = std::exchange(other.n_bytes_, 0);
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (data_) (void)cudaFree(data_);   // a failure here has no one to report to
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t n_bytes) {
    DeviceBuffer b;
    if (n_bytes == 0) return b;
    WB_CUDA_RETURN_IF_ERROR(cudaMalloc(&b.data_, n_bytes), "allocating " + std::to_string(n_bytes) + " bytes of device memory");
    b.n_bytes_ = n_bytes;
    return b;
}

Status DeviceBuffer::upload(const void* host, size_t n_bytes) {
    if (n_bytes > n_bytes_) return error(StatusCode::internal, "upload of " + std::to_string(n_bytes) + " bytes into a buffer of " + std::to_string(n_bytes_));
    return check(cudaMemcpy(data_, host, n_bytes, cudaMemcpyHostToDevice), "copying to the device");
}

Status DeviceBuffer::download(void* host, size_t n_bytes) const {
    if (n_bytes > n_bytes_) return error(StatusCode::internal, "download of " + std::to_string(n_bytes) + " bytes from a buffer of " + std::to_string(n_bytes_));
    return check(cudaMemcpy(host, data_, n_bytes, cudaMemcpyDeviceToHost), "copying from the device");
}

}  // namespace workbench::cuda
