// A test skips when something the installer provides is absent (the default model, a Debian
// package such as libsimde-dev), so a partial checkout still runs the rest. Under CI=true such a
// skip fails instead: CI installs everything from scratch, and a skip there would hide a missing
// install step.
#pragma once

#include <QString>
#include <QTest>
#include <QtGlobal>

namespace wbtest {
inline bool missing_must_fail() { return qgetenv("CI") == "true"; }
}  // namespace wbtest

#define WB_SKIP_MISSING(reason)                                                                           \
    do {                                                                                                  \
        if (wbtest::missing_must_fail())                                                                  \
            QFAIL(qPrintable(QStringLiteral("%1 (CI=true: a missing install step fails, never skips)")     \
                                 .arg(QString::fromUtf8(reason))));                                       \
        QSKIP(reason);                                                                                    \
    } while (0)
