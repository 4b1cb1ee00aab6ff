#include "smoke_run.h"

#include <QApplication>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <cstring>

#include "ui/bridge/engine_client.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "widgets/token_stream_view.h"
#include "workbench/engine.h"

namespace smoke {
namespace {

constexpr int kMaxTokens = 8;
// A load and a few tokens take seconds; a shared or slow machine gets a generous margin.
constexpr int kTimeoutMs = 180000;

void finish(int code, const QString& line) {
    std::fprintf(code == 0 ? stdout : stderr, "workbench --smoke: %s\n", qPrintable(line));
    std::fflush(nullptr);
    QApplication::exit(code);
}

template <typename T>
T* childNamed(MainWindow& window, const char* name) {
    return window.findChild<T*>(QString::fromLatin1(name));
}

}  // namespace

bool requested(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--smoke") == 0) return true;
    return false;
}

void isolateUserState(const QTemporaryDir& dir) {
    qputenv("XDG_CONFIG_HOME", dir.path().toLocal8Bit());
    qputenv("WORKBENCH_HISTORY_DB", dir.filePath(QStringLiteral("history.db")).toLocal8Bit());
}

void start(MainWindow& window, const QString& modelPath) {
    const QString path = modelPath.isEmpty() ? QString::fromStdString(workbench::find_default_model()) : modelPath;
    if (path.isEmpty()) {
        // Queued: exit() only ends a running event loop.
        QTimer::singleShot(0, [] {
            finish(1, QStringLiteral("FAILED: no model found. %1").arg(QString::fromStdString(workbench::default_model_hint())));
        });
        return;
    }
    EngineClient* client = window.client();
    ChatPage* chat = window.chatPage();
    auto* temperature = childNamed<QDoubleSpinBox>(window, "temperatureSpin");
    auto* maxTokens = childNamed<QSpinBox>(window, "maxTokensSpin");
    if (!temperature || !maxTokens) {
        QTimer::singleShot(0, [] { finish(1, QStringLiteral("FAILED: the configuration panel has no sampling fields")); });
        return;
    }
    temperature->setValue(0);
    maxTokens->setValue(kMaxTokens);

    QObject::connect(client, &EngineClient::loadFailed, &window, [path](const QString& message, bool) {
        finish(1, QStringLiteral("FAILED to load %1: %2").arg(path, message));
    });
    QObject::connect(client, &EngineClient::modelLoaded, &window, [chat](const workbench::ModelInfo&) {
        chat->input()->setPlainText(QStringLiteral("Say hello."));
        chat->send();
    });
    QObject::connect(client, &EngineClient::replyFailed, &window, [](const QString& message) {
        finish(1, QStringLiteral("FAILED: the reply stopped: %1").arg(message));
    });
    QObject::connect(client, &EngineClient::replyFinished, &window, [&window, client, chat](const ReplySummary& reply) {
        // The reply must have reached the window, not only the engine.
        const TokenStreamView* view = chat->transcript();
        const QString shown = view->messageCount() > 0 ? view->textOf(view->messageCount() - 1) : QString();
        if (reply.metrics.n_generated <= 0 || shown.trimmed().isEmpty()) {
            finish(1, QStringLiteral("FAILED: the reply is empty (%1 tokens, stop: %2)")
                          .arg(reply.metrics.n_generated)
                          .arg(reply.stopReasonName));
            return;
        }
        const auto& info = client->modelInfo();
        const QString name = info && !info->name.empty() ? QString::fromStdString(info->name)
                                                         : QFileInfo(window.modelPath()).fileName();
        finish(0, QStringLiteral("ok: model %1 (%6), %2 tokens, %3 tok/s decode, TTFT %4 ms, platform %5")
                      .arg(name)
                      .arg(reply.metrics.n_generated)
                      .arg(reply.metrics.decode_tok_s.value_or(0), 0, 'f', 1)
                      .arg(reply.metrics.ttft_ms, 0, 'f', 0)
                      .arg(QGuiApplication::platformName(), QFileInfo(window.modelPath()).fileName()));
    });
    QTimer::singleShot(kTimeoutMs, &window, [] {
        finish(1, QStringLiteral("FAILED: no reply within %1 s").arg(kTimeoutMs / 1000));
    });
    window.startWithModel(path);
}

}  // namespace smoke
