// ServerProcess runs `workbench-cli serve` as a child process for the Server page: builds its
// arguments, reads its stdout lines (listening → the URL, ready → serving) and stderr (the error
// it exits with), and stops it with SIGTERM (SIGKILL if it has not ended within 10 s). It never
// leaves the server behind: its destructor stops it and waits (Ctrl+C in a terminal reaches the
// child too: it shares the GUI's process group). GUI thread only.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

class QTimer;

class ServerProcess : public QObject {
    Q_OBJECT
public:
    enum class State { Stopped, Loading, Serving, Stopping };

    struct Options {
        QString program;     // workbench-cli
        QString modelPath;
        QString host = QStringLiteral("127.0.0.1");
        int port = 8080;     // 0: the OS picks one (the listening line names it)
        QString apiKey;      // empty: none
        int maxRunning = 32;
        int threads = 0;     // 0: the server's default
        int contextLength = 0;
        QString attention;   // empty: the server's default
        QString kvTypes;
        QString weightType;
    };

    explicit ServerProcess(QObject* parent = nullptr);
    ~ServerProcess() override;

    // workbench-cli next to the running executable (where the build and the .deb put both);
    // empty when it is not there.
    static QString defaultProgram();
    // The command line (without the program). The API key is not in it: it goes through
    // WORKBENCH_API_KEY, so other local users cannot read it from the process list.
    static QStringList arguments(const Options& options);

    // False (nothing started) when a server already runs.
    bool start(const Options& options);
    // SIGTERM; the server finishes its running replies' step and exits ("stopped").
    void stop();

    State state() const { return m_state; }
    bool isRunning() const { return m_process->state() != QProcess::NotRunning; }
    qint64 processId() const { return m_process->processId(); }
    QString url() const { return m_url; }               // "http://127.0.0.1:8080" once listening
    QString modelName() const { return m_modelName; }   // as the server names it, once ready

signals:
    void stateChanged(State state);
    void listening(const QString& url);
    // The process ended without being asked (or failed to start): the error lines it printed,
    // else how it ended.
    void failed(const QString& message);

private:
    void readStdout();
    void readStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void setState(State state);

    QProcess* m_process = nullptr;
    QTimer* m_killTimer = nullptr;
    State m_state = State::Stopped;
    QString m_url;
    QString m_modelName;
    QStringList m_errors;   // "workbench-cli: error: …" lines, prefix removed
    QString m_stderrTail;   // the last stderr lines, for an exit that printed no error line
    bool m_stopRequested = false;
};
