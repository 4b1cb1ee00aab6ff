// `workbench-cli serve` as a child of the GUI (see the header).
#include "ui/pages/server_process.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTimer>

namespace {

constexpr int kKillAfterMs = 10000;  // a server stuck past SIGTERM this long gets SIGKILL
constexpr int kStderrTailLines = 6;
const QLatin1String kErrorPrefix("workbench-cli: error: ");

}  // namespace

ServerProcess::ServerProcess(QObject* parent) : QObject(parent) {
    m_process = new QProcess(this);
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    m_killTimer = new QTimer(this);
    m_killTimer->setSingleShot(true);
    m_killTimer->setInterval(kKillAfterMs);
    connect(m_killTimer, &QTimer::timeout, m_process, &QProcess::kill);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &ServerProcess::readStdout);
    connect(m_process, &QProcess::readyReadStandardError, this, &ServerProcess::readStderr);
    connect(m_process, &QProcess::finished, this, &ServerProcess::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &ServerProcess::onError);
}

ServerProcess::~ServerProcess() {
    if (m_process->state() == QProcess::NotRunning) return;
    // The page that listens is being destroyed too: no signals into it from here on.
    m_process->disconnect(this);
    m_process->terminate();
    if (!m_process->waitForFinished(kKillAfterMs)) {
        m_process->kill();
        m_process->waitForFinished(3000);
    }
}

QString ServerProcess::defaultProgram() {
    const QString path = QCoreApplication::applicationDirPath() + QStringLiteral("/workbench-cli");
    const QFileInfo info(path);
    return info.isFile() && info.isExecutable() ? path : QString();
}

QStringList ServerProcess::arguments(const Options& o) {
    QStringList args = {QStringLiteral("serve"), QStringLiteral("-m"), o.modelPath,
                        QStringLiteral("--host"), o.host, QStringLiteral("--port"), QString::number(o.port),
                        QStringLiteral("--max-running"), QString::number(o.maxRunning)};
    if (o.threads > 0) args << QStringLiteral("-t") << QString::number(o.threads);
    if (o.contextLength > 0) args << QStringLiteral("-c") << QString::number(o.contextLength);
    if (!o.attention.isEmpty()) args << QStringLiteral("--attention") << o.attention;
    if (!o.kvTypes.isEmpty()) args << QStringLiteral("--kv-type") << o.kvTypes;
    if (!o.weightType.isEmpty()) args << QStringLiteral("--weights") << o.weightType;
    return args;
}

bool ServerProcess::start(const Options& options) {
    if (isRunning()) return false;
    m_url.clear();
    m_modelName.clear();
    m_errors.clear();
    m_stderrTail.clear();
    m_stopRequested = false;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // An empty field means no key, even when the user's shell exports one for the CLI.
    if (options.apiKey.isEmpty()) env.remove(QStringLiteral("WORKBENCH_API_KEY"));
    else env.insert(QStringLiteral("WORKBENCH_API_KEY"), options.apiKey);
    m_process->setProcessEnvironment(env);
    setState(State::Loading);
    m_process->start(options.program, arguments(options));
    return true;
}

void ServerProcess::stop() {
    if (!isRunning()) return;
    m_stopRequested = true;
    setState(State::Stopping);
    m_process->terminate();
    m_killTimer->start();
}

void ServerProcess::readStdout() {
    static const QRegularExpression listeningRe(QStringLiteral("^workbench-cli serve: listening on (\\S+)"));
    static const QRegularExpression readyRe(QStringLiteral("^workbench-cli serve: ready: model '(.*)', context"));
    while (m_process->canReadLine()) {
        const QString line = QString::fromUtf8(m_process->readLine()).trimmed();
        if (const auto m = listeningRe.match(line); m.hasMatch()) {
            m_url = m.captured(1);
            emit listening(m_url);
        } else if (const auto r = readyRe.match(line); r.hasMatch()) {
            m_modelName = r.captured(1);
            if (m_state == State::Loading) setState(State::Serving);
        }
    }
}

void ServerProcess::readStderr() {
    m_stderrTail += QString::fromUtf8(m_process->readAllStandardError());
    QStringList lines = m_stderrTail.split(QLatin1Char('\n'));
    const QString partial = lines.takeLast();  // a line not yet ended waits for the rest
    for (const QString& line : lines)
        if (line.startsWith(kErrorPrefix)) m_errors << line.mid(kErrorPrefix.size()).trimmed();
    while (lines.size() > kStderrTailLines) lines.removeFirst();
    lines << partial;
    m_stderrTail = lines.join(QLatin1Char('\n'));
}

void ServerProcess::onFinished(int exitCode, QProcess::ExitStatus status) {
    m_killTimer->stop();
    readStdout();
    readStderr();
    const bool asked = m_stopRequested;
    m_stopRequested = false;
    setState(State::Stopped);
    if (asked) return;
    QString message = m_errors.join(QLatin1Char('\n'));
    if (message.isEmpty()) {
        const QString tail = m_stderrTail.trimmed();
        message = status == QProcess::CrashExit ? tr("The server crashed.") : tr("The server exited with code %1.").arg(exitCode);
        if (!tail.isEmpty()) message += QLatin1Char(' ') + tail;
    }
    emit failed(message);
}

void ServerProcess::onError(QProcess::ProcessError error) {
    // A process that ran and ended reports through finished(); only a start that failed is ours.
    if (error != QProcess::FailedToStart) return;
    m_stopRequested = false;
    setState(State::Stopped);
    emit failed(tr("Could not start %1: %2").arg(m_process->program(), m_process->errorString()));
}

void ServerProcess::setState(State state) {
    if (state == m_state) return;
    m_state = state;
    emit stateChanged(state);
}
