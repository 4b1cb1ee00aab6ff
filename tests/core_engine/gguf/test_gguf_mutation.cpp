// Mutation test: hundreds of truncated and bit-flipped copies of the real model's header (and of
// a small complete file) must each parse or fail with a Status: never crash, hang or allocate
// without bound. Run under ASan/UBSan (-DWB_SANITIZE=ON) to catch out-of-bounds reads too.
#include <QTest>

#include <fstream>
#include <random>

#include "tests/skip_missing.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

using namespace workbench;

namespace {

// The real model's header region: everything before the tensor data (vocabulary included).
std::vector<uint8_t> real_header(uint64_t& data_offset) {
    auto file = GgufFile::open(WB_DEFAULT_MODEL_PATH);
    if (!file.ok()) return {};
    data_offset = (*file)->data_offset();
    std::ifstream in(WB_DEFAULT_MODEL_PATH, std::ios::binary);
    std::vector<uint8_t> bytes(data_offset);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return bytes;
}

int parse_outcome(const std::vector<uint8_t>& bytes) {
    auto r = GgufFile::from_memory(bytes, "mutant.gguf");
    if (r.ok()) return 1;
    if (r.status().message().empty()) return -1;  // an error must say something
    return 0;
}

}  // namespace

class TestGgufMutation : public QObject {
    Q_OBJECT
private slots:
    void truncations_of_real_header() {
        uint64_t data_offset = 0;
        auto header = real_header(data_offset);
        if (header.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        std::mt19937_64 rng(1);
        int errors = 0;
        for (int i = 0; i < 300; ++i) {
            // Dense near the start (fixed fields), spread over the rest (vocab strings).
            size_t n = i < 100 ? static_cast<size_t>(i) : rng() % header.size();
            std::vector<uint8_t> cut(header.begin(), header.begin() + static_cast<long>(n));
            int outcome = parse_outcome(cut);
            QVERIFY(outcome != -1);
            errors += outcome == 0;
        }
        QCOMPARE(errors, 300);  // a header cut anywhere is never a valid model
    }

    void bit_flips_of_real_header() {
        uint64_t data_offset = 0;
        auto header = real_header(data_offset);
        if (header.empty()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        std::mt19937_64 rng(2);
        for (int i = 0; i < 400; ++i) {
            auto mutant = header;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int f = 0; f < flips; ++f) {
                // Half the flips hit the first 4 KiB, where the counts and key lengths live.
                size_t at = (rng() % 2) ? rng() % std::min<size_t>(4096, mutant.size()) : rng() % mutant.size();
                mutant[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
            }
            QVERIFY(parse_outcome(mutant) != -1);
        }
    }

    void mutations_of_small_complete_file() {
        GgufWriter w;
        w.set_string("general.architecture", "llama");
        w.set_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
        w.set_float32_array("tokenizer.ggml.scores", {1, 2, 3});
        std::vector<uint8_t> q(40, 7);
        (void)w.add_tensor("blk.0.w", {64}, DType::q4_1, q);
        auto bytes = w.to_bytes();
        QCOMPARE(parse_outcome(bytes), 1);
        std::mt19937_64 rng(3);
        int parsed = 0;
        for (int i = 0; i < 2000; ++i) {
            auto mutant = bytes;
            mutant[rng() % mutant.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
            if (rng() % 4 == 0) mutant.resize(rng() % mutant.size());
            int outcome = parse_outcome(mutant);
            QVERIFY(outcome != -1);
            parsed += outcome;
        }
        // Flips inside string bytes or tensor data leave a valid file: both outcomes must occur.
        QVERIFY(parsed > 0 && parsed < 2000);
    }
};

QTEST_APPLESS_MAIN(TestGgufMutation)
#include "test_gguf_mutation.moc"
