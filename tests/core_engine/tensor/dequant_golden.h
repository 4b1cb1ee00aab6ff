// Reader for the golden files in tests/data/dequant/ written by
// tests/reference/make_dequant_golden.py (gguf-py's quantize/dequantize output) and in
// tests/data/kquant/ written by tests/reference/make_kquant_golden.py (llama.cpp's Q4_K/Q6_K
// quantizer), and the bit-exact comparisons the (de)quantization tests share.
#pragma once

#include <QTest>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "tensor/dtype.h"

namespace workbench::test {

struct DequantGolden {
    DType type = DType::f32;
    uint32_t n_elements = 0;
    bool has_input = false;         // `input` quantizes to `blocks`
    bool script_reference = false;  // blocks from the script's own reference, not from gguf
    std::vector<float> input;
    std::vector<uint8_t> blocks;
    std::vector<float> dequantized;
};

// Golden files live in tests/data/<dir>/: "dequant" (make_dequant_golden.py, gguf-py's output)
// or "kquant" (make_kquant_golden.py, llama.cpp's Q4_K/Q6_K quantizer); same layout.
inline std::string golden_path(const std::string& type_name, const std::string& dir = "dequant") {
    return std::string(WB_TEST_DATA_DIR) + "/" + dir + "/" + type_name + ".golden";
}

// The golden file of a type (by its lower-case name), or a message saying what is wrong.
inline std::variant<DequantGolden, std::string> load_dequant_golden(
    const std::string& name, const std::string& dir = "dequant") {
    const std::string path = golden_path(name, dir);
    std::ifstream in(path, std::ios::binary);
    if (!in) return path + ": cannot open (run tests/reference/make_" + dir + "_golden.py)";
    char magic[4];
    uint32_t header[4];  // version, type, n_elements, flags
    if (!in.read(magic, 4) || std::memcmp(magic, "WBDQ", 4) != 0)
        return path + ": not a WBDQ golden file";
    if (!in.read(reinterpret_cast<char*>(header), sizeof header) || header[0] != 1)
        return path + ": truncated header or unknown version";
    const auto traits = dtype_traits(header[1]);
    if (!traits) return path + ": unknown type " + std::to_string(header[1]);
    if (header[2] == 0 || header[2] % traits->block_elements != 0)
        return path + ": element count " + std::to_string(header[2]) + " is not whole blocks";

    DequantGolden g;
    g.type = traits->type;
    g.n_elements = header[2];
    g.has_input = (header[3] & 1u) != 0;
    g.script_reference = (header[3] & 2u) != 0;
    const auto read_floats = [&](std::vector<float>& v) {
        v.resize(g.n_elements);
        return static_cast<bool>(in.read(reinterpret_cast<char*>(v.data()),
                                         static_cast<std::streamsize>(v.size() * sizeof(float))));
    };
    if (g.has_input && !read_floats(g.input)) return path + ": truncated input";
    g.blocks.resize(dtype_row_bytes(*traits, g.n_elements));
    if (!in.read(reinterpret_cast<char*>(g.blocks.data()),
                 static_cast<std::streamsize>(g.blocks.size())))
        return path + ": truncated blocks";
    if (!read_floats(g.dequantized)) return path + ": truncated dequantized values";
    if (in.peek() != std::char_traits<char>::eof()) return path + ": trailing bytes";
    return g;
}

// One data row per golden file, in a `name` column, for a data-driven Qt test.
inline void add_golden_rows(std::initializer_list<const char*> names) {
    QTest::addColumn<QString>("name");
    for (const char* name : names) QTest::newRow(name) << QString(name);
}

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline std::string describe_float(float f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(f), bits_of(f));
    return buf;
}

// Empty when `got` and `want` hold the same bits; else where and how the first difference is.
inline std::string first_float_mismatch(const std::vector<float>& got,
                                        const std::vector<float>& want) {
    if (got.size() != want.size())
        return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (bits_of(got[i]) != bits_of(want[i]))
            return "element " + std::to_string(i) + ": got " + describe_float(got[i]) +
                   ", want " + describe_float(want[i]);
    }
    return {};
}

inline std::string first_byte_mismatch(const std::vector<uint8_t>& got,
                                       const std::vector<uint8_t>& want, uint32_t block_bytes) {
    if (got.size() != want.size())
        return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i])
            return "byte " + std::to_string(i) + " (block " + std::to_string(i / block_bytes) +
                   ", offset " + std::to_string(i % block_bytes) + "): got " +
                   std::to_string(got[i]) + ", want " + std::to_string(want[i]);
    }
    return {};
}

}  // namespace workbench::test
