// Slabs of at least 32 MiB, mapped with 2 MiB of slack so their start can sit on a 2 MiB boundary
// (a huge page needs an aligned virtual range). Untouched slack costs address space, not memory.
#include "kernels/cpu/huge_page_arena.h"

#include <sys/mman.h>

#include <algorithm>

namespace workbench {
namespace {

constexpr uint64_t kHugePage = 2ull << 20;
constexpr uint64_t kMinSlab = 32ull << 20;

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

}  // namespace

HugePageArena::~HugePageArena() {
    for (const Slab& s : slabs_) munmap(s.mapping, s.mapping_bytes);
}

uint8_t* HugePageArena::allocate(uint64_t bytes) {
    bytes = round_up(std::max<uint64_t>(bytes, 1), 64);
    if (slabs_.empty() || slabs_.back().size - slabs_.back().used < bytes) {
        const uint64_t size = round_up(std::max(bytes, kMinSlab), kHugePage);
        const uint64_t mapping_bytes = size + kHugePage;
        void* m = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return nullptr;
        auto* base = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(m), kHugePage));
#ifdef MADV_HUGEPAGE
        (void)madvise(base, size, MADV_HUGEPAGE);  // advice only: without THP the slab is plain pages
#endif
        slabs_.push_back({m, mapping_bytes, base, size, 0});
    }
    Slab& s = slabs_.back();
    uint8_t* p = s.base + s.used;
    s.used += bytes;
    return p;
}

uint64_t HugePageArena::mapped_bytes() const {
    uint64_t n = 0;
    for (const Slab& s : slabs_) n += s.size;
    return n;
}

}  // namespace workbench
