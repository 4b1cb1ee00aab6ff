// StoreClient is the GUI thread's handle on the session database. It opens the Store and runs
// every call on it on one background thread, in the order asked (a one-thread QThreadPool), so
// the GUI never waits on SQLite: a write returning an id waits for its batch to commit (~100 ms)
// and a search may scan. Results come back as queued calls on the GUI thread and are dropped when
// the object that asked is gone. When the file cannot be opened it says why once (unavailable)
// and every later call fails with that reason: the app runs on without history.
// Methods are GUI-thread only; the tasks run on the store thread and must not touch widgets.
#pragma once

#include <QObject>
#include <QPointer>
#include <QThreadPool>
#include <functional>
#include <memory>
#include <string>

#include "workbench/store.h"

class StoreClient : public QObject {
    Q_OBJECT
public:
    explicit StoreClient(QObject* parent = nullptr);
    ~StoreClient() override;  // waits for queued tasks, then closes the store (which flushes)

    // workbench::default_history_path(): $WORKBENCH_HISTORY_DB, else the XDG data folder's
    // history.db (the CLI's `history` resolves it the same way).
    static QString defaultPath();

    // Opens (creating the folder and the file) on the store thread; emits opened or unavailable.
    void open(const QString& path);
    bool isOpen() const { return m_open; }
    QString path() const { return m_path; }
    QString offReason() const { return m_offReason; }  // empty while history is on

    // Runs `task` on the store thread after everything asked before it; `done` gets its result on
    // the GUI thread unless `context` has been deleted meanwhile.
    template <typename T>
    void call(std::function<workbench::Result<T>(workbench::Store&)> task, QObject* context,
              std::function<void(const workbench::Result<T>&)> done);
    // Runs `task` on the store thread (no result); skipped while history is off.
    void post(std::function<void(workbench::Store&)> task);
    // `done` runs on the GUI thread once every task queued before it has run (tests, shutdown).
    void whenIdle(QObject* context, std::function<void()> done);
    // Waits (processing events) until the queue is empty; false on timeout. Tests only.
    bool waitIdle(int timeoutMs);

signals:
    void opened(const QString& path);
    void unavailable(const QString& reason);
    // A queued write failed (disk full, locked, ...): the message, once per failure.
    void writeFailed(const QString& message);

private:
    // Touched only on the store thread once open() has been queued.
    struct State {
        std::unique_ptr<workbench::Store> store;
        std::string offReason = "not opened";
    };
    void enqueue(std::function<void()> job);
    static workbench::Status offStatus(const State& state);

    QThreadPool m_pool;
    std::shared_ptr<State> m_state = std::make_shared<State>();
    QString m_path, m_offReason;
    bool m_open = false;
};

template <typename T>
void StoreClient::call(std::function<workbench::Result<T>(workbench::Store&)> task, QObject* context,
                       std::function<void(const workbench::Result<T>&)> done) {
    QPointer<QObject> guard(context);
    enqueue([this, state = m_state, task = std::move(task), guard, done = std::move(done)] {
        workbench::Result<T> result = state->store ? task(*state->store) : workbench::Result<T>(offStatus(*state));
        // `this` outlives the pool (the destructor waits for it); the guard is read on the GUI thread.
        QMetaObject::invokeMethod(this, [guard, done, result] {
            if (guard) done(result);
        }, Qt::QueuedConnection);
    });
}
