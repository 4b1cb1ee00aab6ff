// Memory for repacked weights in slabs the kernel may back with 2 MiB pages (madvise
// MADV_HUGEPAGE, honoured when transparent huge pages are in "madvise" or "always" mode). Decode
// streams every weight once per token; with 4 KiB pages that is a TLB miss every 4 KiB, hundreds
// of thousands per second. Allocations are 64-byte aligned, zeroed, and live as long as the arena.
#pragma once

#include <cstdint>
#include <vector>

namespace workbench {

class HugePageArena {
public:
    HugePageArena() = default;
    ~HugePageArena();
    HugePageArena(const HugePageArena&) = delete;
    HugePageArena& operator=(const HugePageArena&) = delete;

    // Null when the memory cannot be mapped (the caller keeps its own copy then).
    uint8_t* allocate(uint64_t bytes);

    uint64_t mapped_bytes() const;

private:
    struct Slab {
        void* mapping;
        uint64_t mapping_bytes;
        uint8_t* base;  // 2 MiB aligned, inside the mapping
        uint64_t size, used;
    };
    std::vector<Slab> slabs_;
};

}  // namespace workbench
