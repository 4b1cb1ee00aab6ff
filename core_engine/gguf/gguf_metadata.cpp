// Typed access to GGUF metadata values: integer widths convert when the value fits, and a wrong
// type is an error naming the key, the type found and the type expected.
#include <cstring>
#include <sstream>

#include "gguf/gguf_file.h"

namespace workbench {
namespace {

bool is_unsigned(GgufType t) { return t == GgufType::uint8 || t == GgufType::uint16 || t == GgufType::uint32 || t == GgufType::uint64; }
bool is_signed(GgufType t) { return t == GgufType::int8 || t == GgufType::int16 || t == GgufType::int32 || t == GgufType::int64; }
bool is_float(GgufType t) { return t == GgufType::float32 || t == GgufType::float64; }

Status wrong_type(const std::string& path, std::string_view key, GgufType found, const char* expected) {
    return error(StatusCode::invalid_file, path + ": metadata '" + std::string(key) + "' is " + gguf_type_name(found) + ", expected " + expected);
}

Status missing(const std::string& path, std::string_view key) {
    return error(StatusCode::not_found, path + ": required metadata key '" + std::string(key) + "' is missing");
}

// Reads element `index` of a numeric array as the widest type of its kind.
template <typename T>
T read_le(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

uint64_t elem_size(GgufType t) {
    switch (t) {
        case GgufType::uint8: case GgufType::int8: case GgufType::boolean: return 1;
        case GgufType::uint16: case GgufType::int16: return 2;
        case GgufType::uint32: case GgufType::int32: case GgufType::float32: return 4;
        default: return 8;
    }
}

double numeric_elem(GgufType t, const uint8_t* p) {
    switch (t) {
        case GgufType::uint8: case GgufType::boolean: return p[0];
        case GgufType::int8: return static_cast<int8_t>(p[0]);
        case GgufType::uint16: return read_le<uint16_t>(p);
        case GgufType::int16: return read_le<int16_t>(p);
        case GgufType::uint32: return read_le<uint32_t>(p);
        case GgufType::int32: return read_le<int32_t>(p);
        case GgufType::float32: return read_le<float>(p);
        case GgufType::uint64: return static_cast<double>(read_le<uint64_t>(p));
        case GgufType::int64: return static_cast<double>(read_le<int64_t>(p));
        case GgufType::float64: return read_le<double>(p);
        default: return 0;
    }
}

}  // namespace

Result<std::optional<uint64_t>> GgufFile::get_uint_opt(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<uint64_t>{};
    if (is_unsigned(v->type)) return std::optional<uint64_t>{v->u};
    if (is_signed(v->type)) {
        if (v->i < 0) return error(StatusCode::invalid_file, path_ + ": metadata '" + std::string(key) + "' is negative (" + std::to_string(v->i) + ")");
        return std::optional<uint64_t>{static_cast<uint64_t>(v->i)};
    }
    return wrong_type(path_, key, v->type, "an integer");
}

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
    WB_ASSIGN_OR_RETURN(auto value, get_uint_opt(key));
    if (!value) return missing(path_, key);
    return *value;
}

Result<std::optional<double>> GgufFile::get_float_opt(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<double>{};
    if (is_float(v->type)) return std::optional<double>{v->f};
    if (is_unsigned(v->type)) return std::optional<double>{static_cast<double>(v->u)};
    if (is_signed(v->type)) return std::optional<double>{static_cast<double>(v->i)};
    return wrong_type(path_, key, v->type, "a number");
}

Result<double> GgufFile::get_float(std::string_view key) const {
    WB_ASSIGN_OR_RETURN(auto value, get_float_opt(key));
    if (!value) return missing(path_, key);
    return *value;
}

Result<std::optional<bool>> GgufFile::get_bool_opt(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<bool>{};
    if (v->type == GgufType::boolean) return std::optional<bool>{v->u != 0};
    return wrong_type(path_, key, v->type, "bool");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
    WB_ASSIGN_OR_RETURN(auto value, get_bool_opt(key));
    if (!value) return missing(path_, key);
    return *value;
}

Result<std::optional<std::string>> GgufFile::get_string_opt(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<std::string>{};
    if (v->type != GgufType::string) return wrong_type(path_, key, v->type, "string");
    return std::optional<std::string>{std::string(v->str)};
}

Result<std::string> GgufFile::get_string(std::string_view key) const {
    WB_ASSIGN_OR_RETURN(auto value, get_string_opt(key));
    if (!value) return missing(path_, key);
    return *value;
}

Result<std::vector<std::string_view>> GgufFile::get_string_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(path_, key);
    if (v->type != GgufType::array || v->array_type != GgufType::string) return wrong_type(path_, key, v->type, "array of strings");
    std::vector<std::string_view> out;
    out.reserve(v->array_count);
    const uint8_t* p = v->array_data;  // lengths were validated during parse
    for (uint64_t k = 0; k < v->array_count; ++k) {
        uint64_t len = read_le<uint64_t>(p);
        out.emplace_back(reinterpret_cast<const char*>(p + 8), len);
        p += 8 + len;
    }
    return out;
}

Result<std::vector<float>> GgufFile::get_float_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(path_, key);
    if (v->type != GgufType::array || v->array_type == GgufType::string) return wrong_type(path_, key, v->type, "numeric array");
    std::vector<float> out(v->array_count);
    for (uint64_t k = 0; k < v->array_count; ++k)
        out[k] = static_cast<float>(numeric_elem(v->array_type, v->array_data + k * elem_size(v->array_type)));
    return out;
}

Result<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(path_, key);
    if (v->type != GgufType::array || !(is_signed(v->array_type) || is_unsigned(v->array_type) || v->array_type == GgufType::boolean))
        return wrong_type(path_, key, v->type, "integer array");
    std::vector<int64_t> out(v->array_count);
    for (uint64_t k = 0; k < v->array_count; ++k)
        out[k] = static_cast<int64_t>(numeric_elem(v->array_type, v->array_data + k * elem_size(v->array_type)));
    return out;
}

std::string GgufFile::value_to_string(const GgufValue& v, size_t max_items) {
    std::ostringstream s;
    switch (v.type) {
        case GgufType::string: {
            std::string text(v.str.substr(0, 120));
            for (auto& ch : text) if (ch == '\n') ch = ' ';
            s << '"' << text << (v.str.size() > 120 ? "...\"" : "\"");
            break;
        }
        case GgufType::boolean: s << (v.u ? "true" : "false"); break;
        case GgufType::float32: case GgufType::float64: s << v.f; break;
        case GgufType::int8: case GgufType::int16: case GgufType::int32: case GgufType::int64: s << v.i; break;
        case GgufType::array: {
            s << "[" << gguf_type_name(v.array_type) << " x " << v.array_count << "]";
            if (v.array_type != GgufType::string && v.array_count > 0) {
                s << " {";
                for (uint64_t k = 0; k < v.array_count && k < max_items; ++k)
                    s << (k ? ", " : "") << numeric_elem(v.array_type, v.array_data + k * elem_size(v.array_type));
                s << (v.array_count > max_items ? ", ...}" : "}");
            }
            break;
        }
        default: s << v.u; break;
    }
    return s.str();
}

}  // namespace workbench
