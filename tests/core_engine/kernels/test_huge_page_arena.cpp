// The repacked weights' arena: allocations are 64-byte aligned, zeroed, disjoint and writable,
// including one larger than a slab; slabs start on 2 MiB boundaries (what a huge page needs).
#include <QTest>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/huge_page_arena.h"

using namespace workbench;

class TestHugePageArena : public QObject {
    Q_OBJECT
private slots:
    void allocations_are_aligned_zeroed_and_disjoint() {
        HugePageArena arena;
        std::vector<std::pair<uint8_t*, uint64_t>> got;
        for (uint64_t bytes : {1ull, 100ull, 4096ull, 3ull << 20, 40ull << 20, 77ull, 31ull << 20}) {
            uint8_t* p = arena.allocate(bytes);
            QVERIFY(p != nullptr);
            QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t{0});
            QVERIFY(std::all_of(p, p + bytes, [](uint8_t b) { return b == 0; }));
            std::memset(p, static_cast<int>(got.size() + 1), bytes);
            got.emplace_back(p, bytes);
        }
        // Every allocation still holds its own fill: none overlapped another.
        for (size_t i = 0; i < got.size(); ++i) {
            const auto [p, bytes] = got[i];
            QVERIFY(std::all_of(p, p + bytes, [&](uint8_t b) { return b == static_cast<uint8_t>(i + 1); }));
        }
        // The first allocation of a slab sits at the slab's 2 MiB-aligned start.
        QCOMPARE(reinterpret_cast<uintptr_t>(got[0].first) % (2u << 20), uintptr_t{0});
        QVERIFY(arena.mapped_bytes() >= (1ull + 3 + 40 + 31) << 20);
    }
};

QTEST_GUILESS_MAIN(TestHugePageArena)
#include "test_huge_page_arena.moc"
