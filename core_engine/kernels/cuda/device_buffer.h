// Device memory owned by one object: allocated with a Status (out of memory is an error the
// caller reports, not a crash), freed when it goes, copied to and from the host synchronously.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workbench/status.h"

namespace workbench::cuda {

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();

    // resource_exhausted naming the size when the device has no room.
    static Result<DeviceBuffer> allocate(size_t n_bytes);

    void* data() const { return data_; }
    template <typename T>
    T* as() const { return static_cast<T*>(data_); }
    size_t size() const { return n_bytes_; }

    // Copies n_bytes (at most size()) from or to the host.
    Status upload(const void* host, size_t n_bytes);
    Status download(void* host, size_t n_bytes) const;

private:
    void* data_ = nullptr;
    size_t n_bytes_ = 0;
};

}  // namespace workbench::cuda
