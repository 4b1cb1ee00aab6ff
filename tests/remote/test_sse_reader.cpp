// The SSE reader on byte streams cut anywhere: events whole, line endings of every kind,
// comments and other fields skipped, junk lines counted, multi-line data joined.
#include <QTest>

#include "remote/sse_reader.h"

using wbremote::SseReader;

class TestSseReader : public QObject {
    Q_OBJECT
private slots:
    void events_survive_any_cut() {
        const std::string stream = "data: {\"a\":1}\n\n: keep-alive\n\ndata:{\"b\":2}\r\n\r\nevent: x\nid: 7\ndata: [DONE]\r\r";
        for (size_t cut = 0; cut <= stream.size(); ++cut) {
            SseReader r;
            std::vector<std::string> got = r.feed(std::string_view(stream).substr(0, cut));
            for (auto& e : r.feed(std::string_view(stream).substr(cut))) got.push_back(e);
            QCOMPARE(got.size(), size_t(3));
            QCOMPARE(got[0], std::string("{\"a\":1}"));
            QCOMPARE(got[1], std::string("{\"b\":2}"));
            QCOMPARE(got[2], std::string("[DONE]"));
            QCOMPARE(r.n_malformed_lines(), 0);
            QVERIFY(!r.mid_event());
        }
    }
    void byte_by_byte() {
        const std::string stream = "data: one\ndata: two\n\ndata: three\n\n";
        SseReader r;
        std::vector<std::string> got;
        for (char c : stream)
            for (auto& e : r.feed(std::string_view(&c, 1))) got.push_back(e);
        QCOMPARE(got, (std::vector<std::string>{"one\ntwo", "three"}));
    }
    void junk_is_counted_not_fatal() {
        SseReader r;
        const auto got = r.feed("<html>\nnot sse at all\ndata: ok\n\n");
        QCOMPARE(got, (std::vector<std::string>{"ok"}));
        QCOMPARE(r.n_malformed_lines(), 2);
    }
    void a_cut_mid_event_is_visible() {
        SseReader r;
        QVERIFY(r.feed("data: {\"partial\"").empty());
        QVERIFY(r.mid_event());
        QVERIFY(r.feed("\n").empty());
        QVERIFY(r.mid_event());   // data read, event not yet dispatched
    }
};

QTEST_APPLESS_MAIN(TestSseReader)
#include "test_sse_reader.moc"
