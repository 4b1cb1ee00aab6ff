// GGUF v3 serialisation: header, key/values in insertion order, tensor infos, aligned data.
#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace workbench {
namespace {

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &value, sizeof(T));
}

void append_string(std::vector<uint8_t>& out, const std::string& s) {
    append<uint64_t>(out, s.size());
    const size_t at = out.size();
    out.resize(at + s.size());
    if (!s.empty()) std::memcpy(out.data() + at, s.data(), s.size());
}

std::vector<uint8_t> tagged(GgufType type) {
    std::vector<uint8_t> out;
    append<uint32_t>(out, static_cast<uint32_t>(type));
    return out;
}

void pad_to(std::vector<uint8_t>& out, uint64_t alignment) {
    while (out.size() % alignment != 0) out.push_back(0);
}

}  // namespace

void GgufWriter::put(const std::string& key, std::vector<uint8_t> encoded) {
    for (auto& e : entries_)
        if (e.key == key) {
            e.encoded = std::move(encoded);
            return;
        }
    entries_.push_back({key, std::move(encoded)});
}

void GgufWriter::set_uint32(const std::string& key, uint32_t value) { auto e = tagged(GgufType::uint32); append(e, value); put(key, e); }
void GgufWriter::set_uint64(const std::string& key, uint64_t value) { auto e = tagged(GgufType::uint64); append(e, value); put(key, e); }
void GgufWriter::set_int32(const std::string& key, int32_t value) { auto e = tagged(GgufType::int32); append(e, value); put(key, e); }
void GgufWriter::set_float32(const std::string& key, float value) { auto e = tagged(GgufType::float32); append(e, value); put(key, e); }
void GgufWriter::set_bool(const std::string& key, bool value) { auto e = tagged(GgufType::boolean); append<uint8_t>(e, value ? 1 : 0); put(key, e); }
void GgufWriter::set_string(const std::string& key, const std::string& value) { auto e = tagged(GgufType::string); append_string(e, value); put(key, e); }

void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& values) {
    auto e = tagged(GgufType::array);
    append<uint32_t>(e, static_cast<uint32_t>(GgufType::string));
    append<uint64_t>(e, values.size());
    for (const auto& v : values) append_string(e, v);
    put(key, e);
}

void GgufWriter::set_float32_array(const std::string& key, const std::vector<float>& values) {
    auto e = tagged(GgufType::array);
    append<uint32_t>(e, static_cast<uint32_t>(GgufType::float32));
    append<uint64_t>(e, values.size());
    for (float v : values) append(e, v);
    put(key, e);
}

void GgufWriter::set_int32_array(const std::string& key, const std::vector<int32_t>& values) {
    auto e = tagged(GgufType::array);
    append<uint32_t>(e, static_cast<uint32_t>(GgufType::int32));
    append<uint64_t>(e, values.size());
    for (int32_t v : values) append(e, v);
    put(key, e);
}

void GgufWriter::set_value(const std::string& key, const GgufValue& v) {
    auto e = tagged(v.type);
    switch (v.type) {
        case GgufType::uint8: case GgufType::boolean: append<uint8_t>(e, static_cast<uint8_t>(v.u)); break;
        case GgufType::int8: append<int8_t>(e, static_cast<int8_t>(v.i)); break;
        case GgufType::uint16: append<uint16_t>(e, static_cast<uint16_t>(v.u)); break;
        case GgufType::int16: append<int16_t>(e, static_cast<int16_t>(v.i)); break;
        case GgufType::uint32: append<uint32_t>(e, static_cast<uint32_t>(v.u)); break;
        case GgufType::int32: append<int32_t>(e, static_cast<int32_t>(v.i)); break;
        case GgufType::float32: append<float>(e, static_cast<float>(v.f)); break;
        case GgufType::uint64: append<uint64_t>(e, v.u); break;
        case GgufType::int64: append<int64_t>(e, v.i); break;
        case GgufType::float64: append<double>(e, v.f); break;
        case GgufType::string: append_string(e, std::string(v.str)); break;
        case GgufType::array: {
            append<uint32_t>(e, static_cast<uint32_t>(v.array_type));
            append<uint64_t>(e, v.array_count);
            // The elements are stored exactly as in the source file: walk them to find their extent.
            const uint8_t* p = v.array_data;
            for (uint64_t k = 0; k < v.array_count; ++k) {
                uint64_t len;
                switch (v.array_type) {
                    case GgufType::string: std::memcpy(&len, p, 8); len += 8; break;
                    case GgufType::uint8: case GgufType::int8: case GgufType::boolean: len = 1; break;
                    case GgufType::uint16: case GgufType::int16: len = 2; break;
                    case GgufType::uint32: case GgufType::int32: case GgufType::float32: len = 4; break;
                    default: len = 8; break;
                }
                p += len;
            }
            const size_t at = e.size();
            e.resize(at + static_cast<size_t>(p - v.array_data));
            if (p != v.array_data) std::memcpy(e.data() + at, v.array_data, static_cast<size_t>(p - v.array_data));
            break;
        }
    }
    put(key, e);
}

Status GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> shape, DType type, std::span<const uint8_t> bytes) {
    const DTypeTraits& t = dtype_traits(type);
    if (shape.empty() || shape.size() > 4) return error(StatusCode::invalid_argument, "tensor '" + name + "': 1 to 4 dimensions expected");
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    if (shape[0] % t.block_elements != 0)
        return error(StatusCode::invalid_argument, "tensor '" + name + "': row length not a multiple of the block size");
    uint64_t expected = n / t.block_elements * t.block_bytes;
    if (bytes.size() != expected)
        return error(StatusCode::invalid_argument, "tensor '" + name + "': " + std::to_string(bytes.size()) + " bytes given, expected " + std::to_string(expected));
    tensors_.push_back({name, std::move(shape), type, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return Status::ok_status();
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
    std::vector<uint8_t> out;
    append<uint32_t>(out, 0x46554747);
    append<uint32_t>(out, 3);
    append<uint64_t>(out, tensors_.size());
    append<uint64_t>(out, entries_.size() + (alignment_ != 32 ? 1 : 0));
    if (alignment_ != 32) {
        append_string(out, "general.alignment");
        append<uint32_t>(out, static_cast<uint32_t>(GgufType::uint32));
        append<uint32_t>(out, static_cast<uint32_t>(alignment_));
    }
    for (const auto& e : entries_) {
        append_string(out, e.key);
        out.insert(out.end(), e.encoded.begin(), e.encoded.end());
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        append_string(out, t.name);
        append<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
        for (uint64_t d : t.shape) append<uint64_t>(out, d);
        append<uint32_t>(out, static_cast<uint32_t>(t.type));
        append<uint64_t>(out, offset);
        offset += t.bytes.size();
        offset = (offset + alignment_ - 1) / alignment_ * alignment_;
    }
    pad_to(out, alignment_);
    for (const auto& t : tensors_) {
        out.insert(out.end(), t.bytes.begin(), t.bytes.end());
        pad_to(out, alignment_);
    }
    return out;
}

Status GgufWriter::write_to(const std::string& path) const {
    std::vector<uint8_t> bytes = to_bytes();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return error(StatusCode::io_error, path + ": cannot create: " + std::strerror(errno));
    size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int err = errno;
    bool closed = std::fclose(f) == 0;
    if (written != bytes.size() || !closed)
        return error(StatusCode::io_error, path + ": write failed after " + std::to_string(written) + " of " +
                                               std::to_string(bytes.size()) + " bytes: " + std::strerror(err));
    return Status::ok_status();
}

}  // namespace workbench
