// Read-only view of a GGUF file (v2 and v3): metadata key/values and tensor infos over an mmap.
// Every count, length and offset is validated against the file size before it is used, so a
// corrupt file yields an error Status naming the file, the field and the value; never a crash,
// a hang or an unbounded allocation. Not thread-affine: a loaded GgufFile is immutable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"
#include "workbench/status.h"

namespace workbench {

enum class GgufType : uint32_t {
    uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6,
    boolean = 7, string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};
const char* gguf_type_name(GgufType type);

// One metadata value. Strings and arrays point into the mapped file.
struct GgufValue {
    GgufType type = GgufType::uint8;
    uint64_t u = 0;           // unsigned integer types and bool
    int64_t i = 0;            // signed integer types
    double f = 0;             // float32/float64
    std::string_view str;     // string
    GgufType array_type = GgufType::uint8;
    uint64_t array_count = 0;
    const uint8_t* array_data = nullptr;  // first element (validated to lie inside the file)
};

struct GgufTensorInfo {
    std::string name;
    std::vector<uint64_t> shape;   // ne[0] is the contiguous (row) dimension, as ggml
    DType type = DType::f32;
    uint64_t offset = 0;           // from the start of the data section
    uint64_t n_elements = 0;
    uint64_t n_bytes = 0;
    const uint8_t* data = nullptr; // inside the mapping
};

class GgufFile {
public:
    // Maps and validates a file. Errors: not_found, io_error, invalid_file, unsupported.
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
    // Parses a buffer the caller keeps alive (fuzzing and tests); `name` is used in messages.
    static Result<std::unique_ptr<GgufFile>> from_memory(std::span<const uint8_t> bytes, std::string name);

    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t file_size() const { return size_; }
    uint64_t data_offset() const { return data_offset_; }

    const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }
    const GgufValue* find(std::string_view key) const;
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* find_tensor(std::string_view name) const;

    // Typed accessors. Integers of any width convert when the value fits; errors name the key
    // and the type found. Optional variants return nullopt for a missing key, error for a bad type.
    Result<std::string> get_string(std::string_view key) const;
    Result<uint64_t> get_uint(std::string_view key) const;
    Result<double> get_float(std::string_view key) const;
    Result<bool> get_bool(std::string_view key) const;
    Result<std::optional<uint64_t>> get_uint_opt(std::string_view key) const;
    Result<std::optional<double>> get_float_opt(std::string_view key) const;
    Result<std::optional<bool>> get_bool_opt(std::string_view key) const;
    Result<std::optional<std::string>> get_string_opt(std::string_view key) const;
    Result<std::vector<std::string_view>> get_string_array(std::string_view key) const;
    Result<std::vector<float>> get_float_array(std::string_view key) const;
    Result<std::vector<int64_t>> get_int_array(std::string_view key) const;

    // Drops the mapped pages of [data, data + n_bytes) from memory after their contents were
    // copied elsewhere (repacked weights), so they don't count twice. No-op for in-memory files.
    void release_pages(const uint8_t* data, uint64_t n_bytes) const;

    // A value rendered for display (arrays shortened), as `inspect` prints it.
    static std::string value_to_string(const GgufValue& value, size_t max_items = 8);

private:
    GgufFile() = default;
    Status parse();

    std::string path_;
    const uint8_t* base_ = nullptr;
    uint64_t size_ = 0;
    void* mapping_ = nullptr;  // munmap target when the file was mapped
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    std::map<std::string, GgufValue, std::less<>> metadata_;
    std::vector<GgufTensorInfo> tensors_;
};

}  // namespace workbench
