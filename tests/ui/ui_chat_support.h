// Shared by the ui suites that chat on the real window and read the session database: a turn
// typed into the chat (Enter) waited for until its reply is in and the store has settled, and a
// store query run on the store's thread and waited for.
#pragma once

#include <QSignalSpy>
#include <QTest>
#include <functional>
#include <optional>

#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"

namespace uitest {

inline ReplySummary sendAndWait(MainWindow* window, const QString& text) {
    QSignalSpy finished(window->client(), &EngineClient::replyFinished);
    window->chatPage()->input()->setPlainText(text);
    QTest::keyClick(window->chatPage()->input(), Qt::Key_Return);
    if (!QTest::qWaitFor([&] { return finished.count() == 1; }, kTimeoutMs)) qFatal("no reply");
    if (!window->store()->waitIdle(kTimeoutMs)) qFatal("the store did not settle");
    return finished.at(0).at(0).value<ReplySummary>();
}

// Runs `task` on the store thread and waits for its result (`context`: the receiver of the answer).
template <typename T>
workbench::Result<T> storeQuery(MainWindow* window, QObject* context, std::function<workbench::Result<T>(workbench::Store&)> task) {
    std::optional<workbench::Result<T>> out;
    window->store()->call<T>(std::move(task), context, [&out](const workbench::Result<T>& r) { out = r; });
    if (!QTest::qWaitFor([&] { return out.has_value(); }, kTimeoutMs)) qFatal("no answer from the store");
    return *out;
}

}  // namespace uitest
