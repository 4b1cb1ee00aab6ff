#include "ui/model_fetcher.h"

#include <QDir>
#include <QFileInfo>

#include "workbench/engine.h"

ModelFetcher::ModelFetcher(QObject* parent) : QObject(parent) {
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    connect(&m_process, &QProcess::readyRead, this, [this] {
        while (m_process.canReadLine()) {
            const QString line = QString::fromUtf8(m_process.readLine()).trimmed();
            if (line.isEmpty()) continue;
            m_lastLine = line;
            emit progress(line);
        }
    });
    connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        // The model the script put into the destination (not another copy found elsewhere).
        const QFileInfoList fetched = QDir(destinationDir()).entryInfoList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Time);
        if (status == QProcess::NormalExit && code == 0 && !fetched.isEmpty()) emit finished(true, fetched.first().absoluteFilePath());
        else emit finished(false, m_lastLine.isEmpty() ? tr("the fetch script failed (exit code %1)").arg(code) : m_lastLine);
    });
}

QString ModelFetcher::scriptPath() {
    if (const QByteArray env = qgetenv("WORKBENCH_FETCH_SCRIPT"); !env.isEmpty()) return QString::fromLocal8Bit(env);
    for (const QString& candidate : {QStringLiteral(WB_FETCH_SCRIPT), QStringLiteral("/usr/share/inference-workbench/fetch_model.sh")})
        if (QFileInfo(candidate).isExecutable()) return candidate;
    return {};
}

QString ModelFetcher::destinationDir() { return QString::fromStdString(workbench::user_models_dir()); }

bool ModelFetcher::start(QString* error) {
    const QString script = scriptPath();
    if (isRunning() || script.isEmpty() || destinationDir().isEmpty()) {
        if (error) *error = isRunning() ? tr("a fetch is already running") : tr("no fetch script found (installer/fetch_model.sh)");
        return false;
    }
    QDir().mkpath(destinationDir());
    m_lastLine.clear();
    m_process.start(script, {destinationDir()});
    return true;
}
