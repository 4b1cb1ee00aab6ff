// SHA-256 (FIPS 180-4), for provenance: which model file and which evaluation text a stored
// figure came from. Streaming, so a multi-GB model hashes in constant memory.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace workbench {

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t n);
    std::array<uint8_t, 32> finish();   // the object is spent afterwards
    static std::string hex(const std::array<uint8_t, 32>& digest);

private:
    void block(const uint8_t* p);
    uint32_t h_[8];
    uint8_t buf_[64];
    size_t n_buf_ = 0;
    uint64_t n_bytes_ = 0;
};

}  // namespace workbench
