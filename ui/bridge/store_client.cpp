#include "ui/bridge/store_client.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>

StoreClient::StoreClient(QObject* parent) : QObject(parent) {
    // One thread, kept alive: the tasks run in the order they were queued.
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1);
    m_pool.setObjectName(QStringLiteral("store"));
}

StoreClient::~StoreClient() {
    m_pool.waitForDone();
    m_state->store.reset();
}

QString StoreClient::defaultPath() { return QString::fromStdString(workbench::default_history_path()); }

workbench::Status StoreClient::offStatus(const State& state) {
    return workbench::error(workbench::StatusCode::io_error, "history is off: " + state.offReason);
}

void StoreClient::enqueue(std::function<void()> job) { m_pool.start(std::move(job)); }

void StoreClient::open(const QString& path) {
    m_path = path;
    enqueue([this, state = m_state, path] {
        state->store.reset();
        QString reason;
        const QString folder = QFileInfo(path).absolutePath();
        if (!QDir().mkpath(folder)) {
            reason = tr("cannot create the folder %1").arg(folder);
        } else {
            workbench::StoreOptions options;
            options.path = path.toStdString();
            // The store thread waits on each id it asks for (a session, a run): commit promptly.
            // The GUI writes a few rows per reply, so small batches cost nothing.
            options.flush_interval_ms = 10;
            auto opened = workbench::Store::open(options);
            if (opened.ok()) state->store = std::move(opened).value();
            else reason = QString::fromStdString(opened.status().message());
        }
        state->offReason = reason.toStdString();
        QMetaObject::invokeMethod(this, [this, path, reason] {
            m_open = reason.isEmpty();
            m_offReason = reason;
            if (m_open) emit opened(path);
            else emit unavailable(reason);
        }, Qt::QueuedConnection);
    });
}

void StoreClient::post(std::function<void(workbench::Store&)> task) {
    enqueue([state = m_state, task = std::move(task)] {
        if (state->store) task(*state->store);
    });
}

void StoreClient::whenIdle(QObject* context, std::function<void()> done) {
    QPointer<QObject> guard(context);
    enqueue([this, guard, done = std::move(done)] {
        QMetaObject::invokeMethod(this, [guard, done] {
            if (guard) done();
        }, Qt::QueuedConnection);
    });
}

bool StoreClient::waitIdle(int timeoutMs) {
    auto idle = std::make_shared<bool>(false);
    whenIdle(this, [idle] { *idle = true; });
    QDeadlineTimer deadline(timeoutMs);
    while (!*idle && !deadline.hasExpired()) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return *idle;
}
