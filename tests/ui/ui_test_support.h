// Shared by the ui suites: a main that isolates QSettings in a temporary XDG config folder and the
// history in a temporary database (the suites must neither read nor overwrite a user's window
// layout or history), skips with exit code 77 and a reason when a suite needs the real default
// model and it is absent (fails under CI=true), and small helpers.
#pragma once

#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <cstdio>
#include <string>

#include "workbench/engine.h"

namespace uitest {

inline QString modelPath() { return QString::fromStdString(workbench::find_default_model()); }

// Seconds the suites wait for a load or a reply before failing (the machine may be shared).
constexpr int kTimeoutMs = 60000;

inline int runSuite(QObject& suite, int argc, char** argv) { return QTest::qExec(&suite, argc, argv); }

}  // namespace uitest

// main() for a suite; NEEDS_MODEL: exit 77 (CTest's skip) with a reason when the model is absent.
#define WB_UI_TEST_MAIN(TestClass, NEEDS_MODEL)                                                          \
    int main(int argc, char** argv) {                                                                    \
        QTemporaryDir configHome;                                                                        \
        qputenv("XDG_CONFIG_HOME", configHome.path().toLocal8Bit());                                     \
        /* Never the user's history: a fresh database per run unless the suite chooses one. */         \
        qputenv("WORKBENCH_HISTORY_DB", configHome.filePath(QStringLiteral("history.db")).toLocal8Bit()); \
        QApplication app(argc, argv);                                                                    \
        QApplication::setOrganizationName(QStringLiteral("InferenceWorkbenchTests"));                    \
        QApplication::setApplicationName(QStringLiteral(#TestClass));                                    \
        /* Each window starts on an empty chat; the suite that tests reopening turns it on. */         \
        QSettings().setValue(QStringLiteral("chat/reopenLast"), false);                                  \
        if ((NEEDS_MODEL) && uitest::modelPath().isEmpty()) {                                            \
            /* Under CI=true a missing install step fails (tests/skip_missing.h). */                     \
            const bool fail = qgetenv("CI") == "true";                                                   \
            std::printf("%s: default model not present (%s)\n", fail ? "FAIL (CI=true)" : "SKIP",      \
                        workbench::default_model_hint().c_str());                                        \
            return fail ? 1 : 77;                                                                        \
        }                                                                                                \
        TestClass suite;                                                                                 \
        return uitest::runSuite(suite, argc, argv);                                                      \
    }
