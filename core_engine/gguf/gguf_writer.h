// Writes GGUF v3 files: metadata and tensors, data aligned as the reader expects. Used for test
// fixtures and (later) requantized models. Build in memory, then write_to(path) or to_bytes().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "workbench/status.h"

namespace workbench {

class GgufWriter {
public:
    explicit GgufWriter(uint64_t alignment = 32) : alignment_(alignment) {}

    void set_uint32(const std::string& key, uint32_t value);
    void set_uint64(const std::string& key, uint64_t value);
    void set_int32(const std::string& key, int32_t value);
    void set_float32(const std::string& key, float value);
    void set_bool(const std::string& key, bool value);
    void set_string(const std::string& key, const std::string& value);
    void set_string_array(const std::string& key, const std::vector<std::string>& values);
    void set_float32_array(const std::string& key, const std::vector<float>& values);
    void set_int32_array(const std::string& key, const std::vector<int32_t>& values);
    // Copies a value read by GgufFile (any type, arrays included) as it was stored.
    void set_value(const std::string& key, const GgufValue& value);

    // `shape` is ggml order (ne[0] = row length); `bytes` must match the type's size for it.
    Status add_tensor(const std::string& name, std::vector<uint64_t> shape, DType type, std::span<const uint8_t> bytes);

    std::vector<uint8_t> to_bytes() const;
    Status write_to(const std::string& path) const;  // io_error names the path and the cause

private:
    struct Entry {
        std::string key;
        std::vector<uint8_t> encoded;  // type tag + value, as GGUF stores it
    };
    struct Tensor {
        std::string name;
        std::vector<uint64_t> shape;
        DType type;
        std::vector<uint8_t> bytes;
    };
    void put(const std::string& key, std::vector<uint8_t> encoded);

    uint64_t alignment_;
    std::vector<Entry> entries_;
    std::vector<Tensor> tensors_;
};

}  // namespace workbench
