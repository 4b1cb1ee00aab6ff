// `workbench --smoke` as a user runs it to ask "does my install work?": on the default model it
// prints one 'ok' line naming the model, the tokens, the speed and the Qt platform, and exits 0;
// on a broken file or a missing one it names the file and the cause and exits 1. It leaves no
// trace in the user's settings or history.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "tests/skip_missing.h"


namespace {

struct Outcome {
    int exit_code = -1;
    bool finished = false;
    QByteArray out, err;
};

// Runs the GUI with --smoke and `args`, its XDG folders in `home` (offscreen, as CTest sets).
Outcome run_smoke(const QTemporaryDir& home, const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
    env.remove(QStringLiteral("WORKBENCH_HISTORY_DB"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WB_GUI_PATH), QStringList{QStringLiteral("--smoke")} + args);
    Outcome o;
    o.finished = p.waitForFinished(240000) && p.exitStatus() == QProcess::NormalExit;
    if (!o.finished) p.kill();
    p.waitForFinished();
    o.exit_code = p.exitCode();
    o.out = p.readAllStandardOutput();
    o.err = p.readAllStandardError();
    return o;
}

bool is_empty_dir(const QString& path) {
    return !QDir(path).exists() || QDir(path).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty();
}

}  // namespace

class TestGuiSmoke : public QObject {
    Q_OBJECT
private slots:
    void default_model_replies_and_leaves_no_trace() {
        if (!QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH)))
            WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir home;
        const Outcome o = run_smoke(home, {QStringLiteral("-m"), QStringLiteral(WB_DEFAULT_MODEL_PATH)});
        QVERIFY2(o.finished, o.err.constData());
        QCOMPARE(o.exit_code, 0);
        QCOMPARE(o.out.count('\n'), 1);
        QVERIFY2(o.out.startsWith("workbench --smoke: ok: model "), o.out.constData());
        QVERIFY(o.out.contains("(SmolLM2-135M-Instruct.Q4_1.gguf), 8 tokens, "));
        QVERIFY(o.out.trimmed().endsWith("platform offscreen"));
        // Neither a settings file nor a history database of the user's was written.
        QVERIFY(is_empty_dir(home.filePath(QStringLiteral("config"))));
        QVERIFY(!QFile::exists(home.filePath(QStringLiteral("data/inference-workbench/history.db"))));
    }

    void broken_model_names_the_file_and_exits_1() {
        QTemporaryDir home;
        const QString broken = home.filePath(QStringLiteral("broken.gguf"));
        QFile f(broken);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF\x03\x00\x00\x00 not a model", 24);
        f.close();
        for (const QString& path : {broken, home.filePath(QStringLiteral("absent.gguf"))}) {
            const Outcome o = run_smoke(home, {QStringLiteral("-m"), path});
            QVERIFY2(o.finished, o.err.constData());
            QCOMPARE(o.exit_code, 1);
            QVERIFY(o.out.isEmpty());
            QVERIFY2(o.err.contains("workbench --smoke: FAILED to load " + path.toUtf8()), o.err.constData());
        }
    }

    // A configuration file for a backend this machine cannot run (no GPU here) is refused with
    // the reason before a window opens, never run on the CPU instead.
    void config_for_an_unavailable_backend_is_refused() {
        QTemporaryDir home;
        const QString path = home.filePath(QStringLiteral("on_cuda.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"backend": "cuda", "attention": "full"})");
        f.close();
        const Outcome o = run_smoke(home, {QStringLiteral("--config"), path});
        QVERIFY2(o.finished, o.err.constData());
        QCOMPARE(o.exit_code, 2);
        QVERIFY2(o.err.contains("on_cuda.json: ") && o.err.contains("CUDA"), o.err.constData());
        QCOMPARE(o.err.count("workbench: "), 1);   // one line of ours (Qt may add its own notices)
        QVERIFY(o.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestGuiSmoke)
#include "test_gui_smoke.moc"
