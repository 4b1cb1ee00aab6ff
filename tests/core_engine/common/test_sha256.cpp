// SHA-256 (libcrypto) against FIPS 180-4's published vectors, streamed in odd-sized pieces, and a file.
#include <QTemporaryFile>
#include <QTest>

#include "common/digest.h"
#include "workbench/digest.h"

using namespace workbench;

class TestSha256 : public QObject {
    Q_OBJECT
private slots:
    void known_vectors() {
        QCOMPARE(sha256_hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    }

    void streaming_equals_one_piece() {
        const std::string million(1000000, 'a');
        Sha256 h;
        for (size_t at = 0, step = 1; at < million.size(); at += step, step = step % 97 + 13)
            h.update(million.data() + at, std::min(step, million.size() - at));
        QCOMPARE(h.finish_hex(), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void file_hash_and_missing_file() {
        QTemporaryFile f;
        QVERIFY(f.open());
        f.write("abc");
        f.close();
        auto h = file_sha256(f.fileName().toStdString());
        QVERIFY(h.ok());
        QCOMPARE(*h, sha256_hex("abc"));
        auto missing = file_sha256("/nonexistent/file.gguf");
        QCOMPARE(missing.status().code(), StatusCode::not_found);
        QVERIFY(missing.status().message().find("/nonexistent/file.gguf") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestSha256)
#include "test_sha256.moc"
