// GGUF reader and writer: round trips of every value type, and a clear error (naming the field
// and value) for each kind of malformed file.
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

#include <cstring>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

using namespace workbench;

namespace {

std::vector<uint8_t> sample_file() {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_uint32("llama.block_count", 2);
    w.set_uint64("big", 1ull << 40);
    w.set_int32("neg", -5);
    w.set_float32("eps", 1e-5f);
    w.set_bool("flag", true);
    w.set_string_array("tokens", {"a", "bc", "", "d\xc3\xa9"});
    w.set_float32_array("scores", {0.5f, -1.0f});
    w.set_int32_array("types", {1, 3, 6});
    std::vector<float> values(64);
    for (int i = 0; i < 64; ++i) values[i] = static_cast<float>(i) - 20.5f;
    auto bytes = std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4);
    (void)w.add_tensor("t0", {16, 4}, DType::f32, bytes);
    (void)w.add_tensor("t1", {8}, DType::f32, bytes.subspan(0, 32));
    return w.to_bytes();
}

// Writes a little-endian value at `offset`.
template <typename T>
void poke(std::vector<uint8_t>& b, size_t offset, T v) {
    std::memcpy(b.data() + offset, &v, sizeof v);
}

QString message_of(const std::vector<uint8_t>& bytes) {
    auto r = GgufFile::from_memory(bytes, "test.gguf");
    return r.ok() ? QString() : QString::fromStdString(r.status().message());
}

}  // namespace

class TestGgufReader : public QObject {
    Q_OBJECT
private slots:
    void round_trip_every_type() {
        auto bytes = sample_file();
        auto r = GgufFile::from_memory(bytes, "sample.gguf");
        QVERIFY2(r.ok(), r.status().message().c_str());
        const GgufFile& f = **r;
        QCOMPARE(f.version(), 3u);
        QCOMPARE(*f.get_string("general.architecture"), std::string("llama"));
        QCOMPARE(*f.get_uint("llama.block_count"), uint64_t{2});
        QCOMPARE(*f.get_uint("big"), uint64_t{1} << 40);
        QCOMPARE(f.find("neg")->i, int64_t{-5});
        QCOMPARE(static_cast<float>(*f.get_float("eps")), 1e-5f);
        QCOMPARE(*f.get_bool("flag"), true);
        auto tokens = *f.get_string_array("tokens");
        QCOMPARE(tokens.size(), size_t{4});
        QCOMPARE(std::string(tokens[1]), std::string("bc"));
        QCOMPARE(std::string(tokens[2]), std::string(""));
        QCOMPARE(std::string(tokens[3]), std::string("d\xc3\xa9"));
        QCOMPARE((*f.get_float_array("scores"))[1], -1.0f);
        QCOMPARE((*f.get_int_array("types"))[2], int64_t{6});
        QCOMPARE(f.tensors().size(), size_t{2});
        const GgufTensorInfo* t0 = f.find_tensor("t0");
        QVERIFY(t0);
        QCOMPARE(t0->shape, (std::vector<uint64_t>{16, 4}));
        QCOMPARE(t0->n_bytes, uint64_t{256});
        QCOMPARE(reinterpret_cast<uintptr_t>(t0->data) % 32, reinterpret_cast<uintptr_t>(bytes.data()) % 32);
        float v;
        std::memcpy(&v, t0->data + 4 * 5, 4);
        QCOMPARE(v, 5.0f - 20.5f);
        QCOMPARE(f.find_tensor("t1")->offset % 32, uint64_t{0});
    }

    void typed_accessors_report_key_and_type() {
        auto bytes = sample_file();
        auto f = std::move(GgufFile::from_memory(bytes, "sample.gguf")).value();
        auto missing = f->get_uint("llama.context_length");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.status().code(), StatusCode::not_found);
        QVERIFY(missing.status().message().find("llama.context_length") != std::string::npos);
        auto wrong = f->get_uint("general.architecture");
        QVERIFY(!wrong.ok());
        QVERIFY(wrong.status().message().find("is string, expected an integer") != std::string::npos);
        QVERIFY(!f->get_uint("neg").ok());  // negative into unsigned
        QVERIFY(f->get_uint_opt("nope").ok() && !f->get_uint_opt("nope")->has_value());
    }

    void bad_magic_and_version() {
        auto bytes = sample_file();
        bytes[0] = 'X';
        QVERIFY(message_of(bytes).contains("not a GGUF file"));
        bytes = sample_file();
        poke<uint32_t>(bytes, 4, 1);
        QVERIFY(message_of(bytes).contains("GGUF version 1 is not supported"));
        bytes = sample_file();
        poke<uint32_t>(bytes, 4, 2);  // v2 has the same layout as v3 for little-endian files
        QVERIFY(message_of(bytes).isEmpty());
    }

    void absurd_counts_are_rejected_before_allocation() {
        auto bytes = sample_file();
        poke<uint64_t>(bytes, 8, ~0ull);  // tensor count
        QVERIFY(message_of(bytes).contains("tensor count"));
        bytes = sample_file();
        poke<uint64_t>(bytes, 16, 1ull << 60);  // kv count
        QVERIFY(message_of(bytes).contains("metadata count"));
    }

    void every_truncation_is_an_error() {
        auto bytes = sample_file();
        for (size_t n = 0; n < bytes.size() - 32; ++n) {
            std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
            auto r = GgufFile::from_memory(cut, "cut.gguf");
            QVERIFY2(!r.ok(), ("truncated at " + std::to_string(n) + " parsed").c_str());
            QCOMPARE(r.status().message().rfind("cut.gguf", 0), size_t{0});
        }
    }

    void unknown_dtype_and_misaligned_offset() {
        GgufWriter w;
        float zeros[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        (void)w.add_tensor("w", {8}, DType::f32, std::span(reinterpret_cast<const uint8_t*>(zeros), 32));
        auto bytes = w.to_bytes();
        // Tensor info: name(8+1) ndims(4) ne(8) type(4) offset(8), right after the 24-byte header.
        const size_t type_at = 24 + 9 + 4 + 8;
        auto b = bytes;
        poke<uint32_t>(b, type_at, 77);
        QVERIFY(message_of(b).contains("tensor 'w': element type 77 is unknown"));
        b = bytes;
        poke<uint64_t>(b, type_at + 4, 3);
        QVERIFY(message_of(b).contains("not aligned"));
        b = bytes;
        poke<uint64_t>(b, type_at + 4, 1ull << 40);
        QVERIFY(message_of(b).contains("runs past the end of the file"));
        b = bytes;
        poke<uint64_t>(b, 24 + 9 + 4, 0);
        QVERIFY(message_of(b).contains("is zero or absurd"));
    }

    void quantized_row_must_fill_blocks() {
        GgufWriter w;
        std::vector<uint8_t> block(20, 0);
        QVERIFY(w.add_tensor("q", {32}, DType::q4_1, block).ok());
        auto bytes = w.to_bytes();
        poke<uint64_t>(bytes, 24 + 9 + 4, 33);
        QVERIFY(message_of(bytes).contains("not a multiple of the q4_1 block size 32"));
    }

    void alignment_key_is_honoured_and_checked() {
        GgufWriter w(64);
        float data[16] = {};
        (void)w.add_tensor("a", {16}, DType::f32, std::span(reinterpret_cast<const uint8_t*>(data), 64));
        (void)w.add_tensor("b", {4}, DType::f32, std::span(reinterpret_cast<const uint8_t*>(data), 16));
        auto bytes = w.to_bytes();
        auto r = GgufFile::from_memory(bytes, "aligned.gguf");
        QVERIFY2(r.ok(), r.status().message().c_str());
        QCOMPARE((*r)->alignment(), uint64_t{64});
        QCOMPARE((*r)->find_tensor("b")->offset, uint64_t{64});
        // general.alignment = 48 (not a power of two)
        const size_t value_at = 24 + 8 + std::strlen("general.alignment") + 4;
        poke<uint32_t>(bytes, value_at, 48);
        QVERIFY(message_of(bytes).contains("general.alignment is 48"));
    }

    void open_reports_missing_and_empty_files() {
        auto r = GgufFile::open("/nonexistent/dir/model.gguf");
        QVERIFY(!r.ok());
        QCOMPARE(r.status().code(), StatusCode::not_found);
        QVERIFY(r.status().message().find("/nonexistent/dir/model.gguf") != std::string::npos);
        QTemporaryFile empty;
        QVERIFY(empty.open());
        auto e = GgufFile::open(empty.fileName().toStdString());
        QVERIFY(!e.ok());
        QVERIFY(e.status().message().find("empty") != std::string::npos);
        auto dir = GgufFile::open("/tmp");
        QVERIFY(!dir.ok());
    }

    void writer_file_round_trip() {
        GgufWriter w;
        w.set_string("k", "v");
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/x.gguf").toStdString();
        QVERIFY(w.write_to(path).ok());
        auto r = GgufFile::open(path);
        QVERIFY2(r.ok(), r.status().message().c_str());
        QCOMPARE(*(*r)->get_string("k"), std::string("v"));
        auto bad = w.write_to("/nonexistent/dir/x.gguf");
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("/nonexistent/dir/x.gguf") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestGgufReader)
#include "test_gguf_reader.moc"
