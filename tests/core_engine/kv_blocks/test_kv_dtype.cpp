// KV element types: block layouts and byte counts (scales included, partial blocks padded), names,
// and the --kv-type spec parser with its error messages naming the bad part.
#include <QTest>

#include <string>

#include "kv_blocks/kv_dtype.h"

using namespace workbench;

namespace {

constexpr KvDType kAll[] = {KvDType::f32, KvDType::f16, KvDType::bf16, KvDType::q8_0, KvDType::q4_0, KvDType::fp8, KvDType::q2_0};

// Parses a spec that must fail and returns its message.
std::string parse_error(const char* spec) {
    const Result<KvTypes> r = parse_kv_types(spec);
    if (r.ok()) return "<parsed>";
    if (r.status().code() != StatusCode::invalid_argument) return "<wrong code>";
    return r.status().message();
}

}  // namespace

class TestKvDType : public QObject {
    Q_OBJECT

private slots:
    void layouts();
    void bytes_of_n_values();
    void names_round_trip();
    void parses_one_type_for_both();
    void parses_k_and_v();
    void spec_names_round_trip();
    void parses_recent_window();
    void errors_name_the_bad_part();
};

void TestKvDType::layouts() {
    const struct {
        KvDType type;
        const char* name;
        uint32_t values;
        uint32_t bytes;
    } expected[] = {{KvDType::f32, "f32", 1, 4},    {KvDType::f16, "f16", 1, 2},    {KvDType::bf16, "bf16", 1, 2},
                    {KvDType::q8_0, "q8_0", 32, 34}, {KvDType::q4_0, "q4_0", 32, 18}, {KvDType::fp8, "fp8", 32, 34}, {KvDType::q2_0, "q2_0", 32, 10}};
    for (const auto& e : expected) {
        const KvDTypeLayout& layout = kv_dtype_layout(e.type);
        QCOMPARE(layout.type, e.type);
        QCOMPARE(std::string(layout.name), std::string(e.name));
        QCOMPARE(layout.block_values, e.values);
        QCOMPARE(layout.block_bytes, e.bytes);
    }
}

void TestKvDType::bytes_of_n_values() {
    const struct {
        KvDType type;
        uint64_t n_values;
        uint64_t bytes;
    } cases[] = {
        // head_dim 64: plain types by the value, block types two blocks of 32 with their fp16 scales.
        {KvDType::f32, 64, 256}, {KvDType::f16, 64, 128}, {KvDType::bf16, 64, 128},
        {KvDType::q8_0, 64, 68}, {KvDType::q4_0, 64, 36},  {KvDType::fp8, 64, 68},
        {KvDType::q8_0, 128, 136},
        // A trailing partial block is padded to a whole one.
        {KvDType::q8_0, 1, 34},  {KvDType::q8_0, 33, 68},  {KvDType::q4_0, 31, 18},
        {KvDType::fp8, 96, 102}, {KvDType::f16, 3, 6}, {KvDType::q2_0, 64, 20}, {KvDType::q2_0, 33, 20},
    };
    for (const auto& c : cases) QCOMPARE(kv_bytes(c.type, c.n_values), c.bytes);
    for (KvDType type : kAll) QCOMPARE(kv_bytes(type, 0), uint64_t(0));
}

void TestKvDType::names_round_trip() {
    for (KvDType type : kAll) {
        const Result<KvTypes> parsed = parse_kv_types(kv_dtype_name(type));
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->k, type);
        QCOMPARE(parsed->v, type);
    }
}

void TestKvDType::parses_one_type_for_both() {
    const Result<KvTypes> plain = parse_kv_types("f16");
    QVERIFY(plain.ok());
    QVERIFY((*plain == KvTypes{KvDType::f16, KvDType::f16}));
    const Result<KvTypes> upper = parse_kv_types("  Q8_0 ");
    QVERIFY(upper.ok());
    QVERIFY((*upper == KvTypes{KvDType::q8_0, KvDType::q8_0}));
}

void TestKvDType::parses_k_and_v() {
    const KvTypes want{KvDType::q8_0, KvDType::q4_0};
    for (const char* spec : {"k=q8_0,v=q4_0", "v=q4_0,k=q8_0", " K = Q8_0 , V = q4_0 "}) {
        const Result<KvTypes> r = parse_kv_types(spec);
        QVERIFY2(r.ok(), spec);
        QVERIFY2(*r == want, spec);
    }
    const Result<KvTypes> same = parse_kv_types("k=bf16,v=bf16");
    QVERIFY(same.ok());
    QVERIFY((*same == KvTypes{KvDType::bf16, KvDType::bf16}));
}

void TestKvDType::spec_names_round_trip() {
    QCOMPARE(kv_types_name({KvDType::f16, KvDType::f16}), std::string("f16"));
    QCOMPARE(kv_types_name({KvDType::q8_0, KvDType::q4_0}), std::string("k=q8_0,v=q4_0"));
    for (KvDType k : kAll)
        for (KvDType v : kAll) {
            const Result<KvTypes> back = parse_kv_types(kv_types_name({k, v}));
            QVERIFY(back.ok());
            QVERIFY((*back == KvTypes{k, v}));
        }
}

void TestKvDType::parses_recent_window() {
    const Result<KvTypes> one = parse_kv_types("q4_0, recent=128");
    QVERIFY(one.ok());
    QVERIFY((*one == KvTypes{KvDType::q4_0, KvDType::q4_0, 128}));
    const Result<KvTypes> split = parse_kv_types("recent=64,v=q4_0,k=f16");
    QVERIFY(split.ok());
    QVERIFY((*split == KvTypes{KvDType::f16, KvDType::q4_0, 64}));
    const Result<KvTypes> zero = parse_kv_types("q8_0,recent=0");
    QVERIFY(zero.ok());
    QVERIFY((*zero == KvTypes{KvDType::q8_0, KvDType::q8_0}));
    QCOMPARE(kv_types_name({KvDType::q4_0, KvDType::q4_0, 128}), std::string("q4_0,recent=128"));
    QCOMPARE(kv_types_name({KvDType::q8_0, KvDType::q4_0, 32}), std::string("k=q8_0,v=q4_0,recent=32"));
    QCOMPARE(kv_types_name({KvDType::q8_0, KvDType::q8_0, 0}), std::string("q8_0"));
    for (const char* spec : {"q4_0,recent=128", "k=q8_0,v=q4_0,recent=32", "fp8,recent=4096"}) {
        const Result<KvTypes> r = parse_kv_types(spec);
        QVERIFY2(r.ok(), spec);
        QCOMPARE(kv_types_name(*r), std::string(spec));
    }
}

void TestKvDType::errors_name_the_bad_part() {
    const struct {
        const char* spec;
        const char* expected;
    } cases[] = {
        {"  ", "empty spec"},
        {"f17", "unknown type 'f17'"},
        {"f17", "types: f32, f16, bf16, q8_0, q4_0, fp8, q2_0"},
        {"k=q8_0,v=q5_1", "'k=q8_0,v=q5_1': unknown type 'q5_1' in part 'v=q5_1'"},
        {"k=q8_0", "missing 'v=TYPE'"},
        {"v=f16", "missing 'k=TYPE'"},
        {"k=q8_0,k=f16", "'k' is given twice"},
        {"x=f16,v=f16", "part 'x=f16' names 'x', expected 'k', 'v' or 'recent'"},
        {"k:q8_0,v=f16", "unknown type 'k:q8_0'"},
        {"k=q8_0,v=q4_0,", "part '' is not KEY=VALUE"},
        {"q4_0,recent=12x", "recent=12x is not a token count from 0 to 4096"},
        {"q4_0,recent=5000", "recent=5000 is not a token count"},
        {"q4_0,recent=8,recent=8", "'recent' is given twice"},
        {"f16,recent=64", "with f16 keys and values it changes nothing"},
        {"q4_0,k=q8_0", "sets 'k' after a type for both"},
        {"k=,v=f16", "unknown type '' in part 'k='"},
    };
    for (const auto& c : cases) {
        const std::string message = parse_error(c.spec);
        QVERIFY2(message.find(c.expected) != std::string::npos, (std::string(c.spec) + " -> " + message).c_str());
    }
}

QTEST_APPLESS_MAIN(TestKvDType)
#include "test_kv_dtype.moc"
