// Golden files under tests/data/json_shapes/: a text compared byte for byte with the file. They
// were written by release 0.1.0's own writers and rewritten once for nlohmann-json, whose bytes
// differ only in \b/\f escapes, invalid UTF-8 and a few number spellings (that commit lists
// them); WB_WRITE_GOLDEN=1 rewrites the files instead (only when a change of bytes is meant, and
// say so in the commit).
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <algorithm>

namespace wbtest {

inline bool matches_golden(const char* name, const QByteArray& text, QString& why) {
    QFile f(QStringLiteral(WB_TEST_DATA_DIR "/json_shapes/") + QLatin1String(name));
    if (qgetenv("WB_WRITE_GOLDEN") == "1") {
        QDir().mkpath(QFileInfo(f).absolutePath());
        if (f.open(QIODevice::WriteOnly) && f.write(text) == text.size()) return true;
        return why = f.fileName() + ": " + f.errorString(), false;
    }
    if (!f.open(QIODevice::ReadOnly)) return why = f.fileName() + ": " + f.errorString(), false;
    const QByteArray golden = f.readAll();
    if (golden == text) return true;
    qsizetype at = 0;
    while (at < golden.size() && at < text.size() && golden[at] == text[at]) ++at;
    const qsizetype from = std::max<qsizetype>(0, at - 20);
    why = QStringLiteral("%1 differs at byte %2:\n  golden: %3\n  now:    %4")
              .arg(QLatin1String(name))
              .arg(at)
              .arg(QString::fromUtf8(golden.mid(from, 60)), QString::fromUtf8(text.mid(from, 60)));
    return false;
}

}  // namespace wbtest

#define WB_VERIFY_GOLDEN(name, text)                                                       \
    do {                                                                                   \
        QString why_;                                                                      \
        QVERIFY2(wbtest::matches_golden(name, QByteArray::fromStdString(text), why_), qPrintable(why_)); \
    } while (0)
