// The GUI's dependency rules, checked on the sources (docs/ARCHITECTURE.md, "Direction of
// dependencies"): widgets/ includes neither the engine nor ui/; ui/ and app/gui/ reach the
// engine only through the public headers engine.h, config.h, types.h, status.h, metrics.h, store.h,
// measure.h, retrieval.h, sweep.h, backends.h (and the other public headers listed below); and
// files stay under 600 lines.
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include "tests/ui/ui_test_support.h"

namespace {

const QString kRoot = QStringLiteral(WB_SOURCE_DIR);

QStringList sources(const QString& folder) {
    QStringList out;
    QDirIterator it(kRoot + QLatin1Char('/') + folder, {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) out << it.next();
    return out;
}

QStringList includesOf(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    static const QRegularExpression re(QStringLiteral("^\\s*#\\s*include\\s*[\"<]([^\">]+)[\">]"),
                                       QRegularExpression::MultilineOption);
    QStringList out;
    for (auto m = re.globalMatch(QString::fromUtf8(f.readAll())); m.hasNext();) out << m.next().captured(1);
    return out;
}

}  // namespace

class TestLayering : public QObject {
    Q_OBJECT
private slots:
    void widgetsKnowOnlyQt() {
        const QStringList files = sources(QStringLiteral("widgets"));
        QVERIFY(!files.isEmpty());
        for (const QString& file : files)
            for (const QString& inc : includesOf(file))
                QVERIFY2(!inc.startsWith("workbench/") && !inc.startsWith("ui/") && !inc.startsWith("core_engine/"),
                         qPrintable(file + ": " + inc));
    }

    void uiReachesTheEngineOnlyThroughItsApi() {
        const QStringList allowed = {"workbench/engine.h", "workbench/config.h", "workbench/types.h",
                                     "workbench/status.h", "workbench/metrics.h", "workbench/store.h",
                                     "workbench/measure.h", "workbench/model_file.h", "workbench/json.h",
                                     "workbench/bench_row.h", "workbench/request.h", "workbench/attention.h",
                                     "workbench/retrieval.h", "workbench/pareto.h", "workbench/sweep.h",
                                     "workbench/backends.h", "workbench/digest.h", "workbench/chat_reply.h"};
        QStringList files = sources(QStringLiteral("ui")) + sources(QStringLiteral("app/gui"));
        QVERIFY(!files.isEmpty());
        int engineIncludes = 0;  // proves the scan sees includes at all
        for (const QString& file : files)
            for (const QString& inc : includesOf(file)) {
                engineIncludes += inc == QLatin1String("workbench/engine.h");
                QVERIFY2(!inc.startsWith("core_engine/"), qPrintable(file + ": " + inc));
                if (inc.startsWith("workbench/")) QVERIFY2(allowed.contains(inc), qPrintable(file + ": " + inc));
                // Everything else in quotes is the GUI's own, or the remote-server client (remote/).
                QVERIFY2(!inc.endsWith(".h") || inc.startsWith("ui/") || inc.startsWith("widgets/") || inc.startsWith("remote/") ||
                             inc.startsWith("workbench/") || !inc.contains('/'),
                         qPrintable(file + ": " + inc));
            }
        QVERIFY(engineIncludes > 0);
    }

    void filesStaySmall() {
        for (const QString& folder : {QStringLiteral("ui"), QStringLiteral("widgets"), QStringLiteral("app/gui")})
            for (const QString& file : sources(folder)) {
                QFile f(file);
                QVERIFY(f.open(QIODevice::ReadOnly));
                const int lines = f.readAll().count('\n');
                QVERIFY2(lines <= 600, qPrintable(QStringLiteral("%1: %2 lines").arg(file).arg(lines)));
            }
    }
};

WB_UI_TEST_MAIN(TestLayering, false)
#include "test_ui_layering.moc"
