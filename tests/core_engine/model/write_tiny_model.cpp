// Writes one of the tiny generated models the architecture tests use, so an independent
// implementation (tests/reference/make_arch_goldens.sh, llama.cpp) can run the same bytes.
//   wb-write-tiny-model ARCH OUT.gguf
#include <cstdio>
#include <fstream>

#include "tests/core_engine/model/tiny_arch_specs.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s ARCH OUT.gguf\n", argv[0]);
        return 2;
    }
    const auto spec = tiny::arch_spec(argv[1]);
    if (!spec) {
        std::fprintf(stderr, "no tiny model for architecture '%s'\n", argv[1]);
        return 2;
    }
    const tiny::Model m = tiny::make(*spec);
    std::ofstream out(argv[2], std::ios::binary);
    out.write(reinterpret_cast<const char*>(m.gguf.data()), static_cast<std::streamsize>(m.gguf.size()));
    return out ? 0 : 1;
}
