// libFuzzer target for the GGUF reader: any byte string must parse or fail with a Status.
// Build: cmake -DWB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ..., run: build/bin/fuzz_gguf corpus/
#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto r = workbench::GgufFile::from_memory(std::span(data, size), "fuzz.gguf");
    if (r.ok()) {
        // Touch what a loader would: every string array and tensor info.
        for (const auto& [key, value] : (*r)->metadata())
            if (value.type == workbench::GgufType::array && value.array_type == workbench::GgufType::string)
                (void)(*r)->get_string_array(key);
    }
    return 0;
}
