// The Server page (see the header): its form, the start from the chat's model and load settings, the
// status line from the server process's state, and the /metrics polls behind the live figures.
#include "ui/pages/server_page.h"

#include <QClipboard>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

#include "ui/bridge/engine_client.h"
#include "ui/format.h"

namespace {

constexpr int kPollMs = 1000;
const QString kDash = QStringLiteral("–");

// 'text' for a POSIX shell: single quotes, each ' inside written as '\''.
QString shellQuote(const QString& text) {
    QString out = text;
    out.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + out + QLatin1Char('\'');
}

// The server's own default name for a model: the file's name without .gguf (cmd_serve's rule).
QString fileStem(const QString& path) {
    QString name = QFileInfo(path).fileName();
    if (name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) name.chop(5);
    return name;
}

QLabel* figureLabel(QWidget* parent, const QString& name) {
    auto* l = new QLabel(kDash, parent);
    l->setObjectName(name);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

QString number(std::optional<double> v) { return v ? QString::number(*v, 'f', 0) : kDash; }

}  // namespace

ServerPage::ServerPage(EngineClient* chat, QWidget* parent) : QWidget(parent), m_chat(chat) {
    m_server = new ServerProcess(this);
    m_program = ServerProcess::defaultProgram();
    m_net = new QNetworkAccessManager(this);
    // The server is on this machine or the LAN: a proxy from the environment must not carry the polls.
    m_net->setProxy(QNetworkProxy::NoProxy);
    m_pollTimer = new QTimer(this);
    m_pollTimer->setInterval(kPollMs);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* setup = new QGroupBox(tr("OpenAI-compatible server (workbench-cli serve) for other programs"), this);
    auto* form = new QFormLayout(setup);
    m_model = new QLabel(setup);
    m_model->setObjectName(QStringLiteral("serverModel"));
    m_model->setWordWrap(true);
    m_model->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(tr("Model"), m_model);
    m_host = new QLineEdit(QStringLiteral("127.0.0.1"), setup);
    m_host->setObjectName(QStringLiteral("serverHost"));
    m_hostNote = new QLabel(tr("127.0.0.1 answers this machine only. Other machines can reach the server only if this "
                               "is 0.0.0.0 (every network interface); then set an API key."),
                            setup);
    m_hostNote->setWordWrap(true);
    auto* hostCol = new QVBoxLayout();
    hostCol->addWidget(m_host);
    hostCol->addWidget(m_hostNote);
    form->addRow(tr("Host"), hostCol);
    m_port = new QSpinBox(setup);
    m_port->setObjectName(QStringLiteral("serverPort"));
    m_port->setRange(0, 65535);
    m_port->setValue(8080);
    m_port->setSpecialValueText(tr("0 (any free port)"));
    form->addRow(tr("Port"), m_port);
    m_apiKey = new QLineEdit(setup);
    m_apiKey->setObjectName(QStringLiteral("serverApiKey"));
    m_apiKey->setEchoMode(QLineEdit::Password);
    m_apiKey->setPlaceholderText(tr("optional: clients then send 'Authorization: Bearer KEY' on /v1/"));
    form->addRow(tr("API key"), m_apiKey);
    m_maxRunning = new QSpinBox(setup);
    m_maxRunning->setObjectName(QStringLiteral("serverMaxRunning"));
    m_maxRunning->setRange(1, 4096);
    m_maxRunning->setValue(32);
    m_maxRunning->setToolTip(tr("Sequences decoding together; more requests wait their turn."));
    form->addRow(tr("Max running sequences"), m_maxRunning);
    auto* buttons = new QHBoxLayout();
    m_start = new QPushButton(tr("Start"), setup);
    m_start->setObjectName(QStringLiteral("serverStart"));
    m_stop = new QPushButton(tr("Stop"), setup);
    m_stop->setObjectName(QStringLiteral("serverStop"));
    buttons->addWidget(m_start);
    buttons->addWidget(m_stop);
    buttons->addStretch(1);
    form->addRow(buttons);
    m_status = new QLabel(setup);
    m_status->setObjectName(QStringLiteral("serverStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(tr("Status"), m_status);
    layout->addWidget(setup);

    auto* address = new QGroupBox(tr("Address"), this);
    auto* addressCol = new QVBoxLayout(address);
    auto* urlRow = new QHBoxLayout();
    m_url = new QLineEdit(address);
    m_url->setObjectName(QStringLiteral("serverUrl"));
    m_url->setReadOnly(true);
    m_url->setPlaceholderText(tr("the URL, once the server listens"));
    m_copyUrl = new QPushButton(tr("Copy"), address);
    m_copyUrl->setObjectName(QStringLiteral("serverCopyUrl"));
    urlRow->addWidget(m_url, 1);
    urlRow->addWidget(m_copyUrl);
    addressCol->addLayout(urlRow);
    auto* curlRow = new QHBoxLayout();
    m_curl = new QPlainTextEdit(address);
    m_curl->setObjectName(QStringLiteral("serverCurl"));
    m_curl->setReadOnly(true);
    m_curl->setPlaceholderText(tr("A request to paste into a shell, once the server listens."));
    m_curl->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_curl->setMaximumHeight(110);
    m_copyCurl = new QPushButton(tr("Copy"), address);
    m_copyCurl->setObjectName(QStringLiteral("serverCopyCurl"));
    curlRow->addWidget(m_curl, 1);
    curlRow->addWidget(m_copyCurl, 0, Qt::AlignTop);
    addressCol->addLayout(curlRow);
    layout->addWidget(address);

    auto* live = new QGroupBox(tr("Live, from /metrics every second"), this);
    auto* liveForm = new QFormLayout(live);
    m_running = figureLabel(live, QStringLiteral("serverRunning"));
    m_waiting = figureLabel(live, QStringLiteral("serverWaiting"));
    m_completed = figureLabel(live, QStringLiteral("serverCompleted"));
    m_rate = figureLabel(live, QStringLiteral("serverTokensPerSecond"));
    m_kv = figureLabel(live, QStringLiteral("serverKv"));
    liveForm->addRow(tr("Requests running"), m_running);
    liveForm->addRow(tr("Requests waiting"), m_waiting);
    liveForm->addRow(tr("Requests completed"), m_completed);
    liveForm->addRow(tr("Generated tokens/s"), m_rate);
    liveForm->addRow(tr("KV cache in use"), m_kv);
    layout->addWidget(live);
    layout->addStretch(1);

    connect(m_start, &QPushButton::clicked, this, &ServerPage::start);
    connect(m_stop, &QPushButton::clicked, this, &ServerPage::stop);
    connect(m_copyUrl, &QPushButton::clicked, this, [this] { QGuiApplication::clipboard()->setText(m_url->text()); });
    connect(m_copyCurl, &QPushButton::clicked, this, [this] { QGuiApplication::clipboard()->setText(m_curl->toPlainText()); });
    connect(m_server, &ServerProcess::stateChanged, this, &ServerPage::onStateChanged);
    connect(m_server, &ServerProcess::listening, this, &ServerPage::onListening);
    connect(m_server, &ServerProcess::failed, this, [this](const QString& message) {
        m_failure = message;
        refresh();
    });
    connect(m_pollTimer, &QTimer::timeout, this, &ServerPage::poll);
    connect(m_net, &QNetworkAccessManager::finished, this, &ServerPage::onPolled);
    connect(m_chat, &EngineClient::loadStarted, this, &ServerPage::refresh);
    connect(m_chat, &EngineClient::modelLoaded, this, &ServerPage::refresh);
    connect(m_chat, &EngineClient::loadFailed, this, &ServerPage::refresh);
    refresh();
}

// The server process is a child of m_server; its destructor stops it. Stop polling first so no
// reply arrives into a half-destroyed page.
ServerPage::~ServerPage() {
    m_pollTimer->stop();
    m_net->disconnect(this);
}

QString ServerPage::curlExample(const QString& url, const QString& apiKey, const QString& modelName) {
    // Written out rather than as a QJsonObject, which would sort the keys: "model" reads best first.
    const QString name = QString::fromUtf8(QJsonDocument(QJsonArray{modelName}).toJson(QJsonDocument::Compact)).mid(1).chopped(1);
    const QString body =
        QStringLiteral("{\"model\":%1,\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}],\"max_tokens\":64}").arg(name);
    QStringList lines{QStringLiteral("curl %1 \\").arg(shellQuote(url + QStringLiteral("/v1/chat/completions"))),
                      QStringLiteral("  -H 'Content-Type: application/json' \\")};
    if (!apiKey.isEmpty()) lines << QStringLiteral("  -H %1 \\").arg(shellQuote(QStringLiteral("Authorization: Bearer ") + apiKey));
    lines << QStringLiteral("  -d %1").arg(shellQuote(body));
    return lines.join(QLatin1Char('\n'));
}

QString ServerPage::statusText() const { return m_status->text(); }
QString ServerPage::urlText() const { return m_url->text(); }
QString ServerPage::curlText() const { return m_curl->toPlainText(); }
QString ServerPage::completedText() const { return m_completed->text(); }

QString ServerPage::startBlocker() const {
    if (m_program.isEmpty())
        return tr("workbench-cli was not found next to this program (%1), so the server cannot start.")
            .arg(QCoreApplication::applicationDirPath());
    if (m_chat->isLoading()) return tr("A model is loading in the chat; the server starts once it is loaded.");
    if (!m_chat->isLoaded())
        return tr("Load a model in the chat first (File → Open, Ctrl+O): the server runs the chat's model.");
    return {};
}

void ServerPage::start() {
    if (m_server->isRunning() || !startBlocker().isEmpty()) return;
    // The chat's model with the chat's load settings, so both answer alike.
    const workbench::EngineConfig& c = m_chat->config();
    ServerProcess::Options o;
    o.program = m_program;
    o.modelPath = QString::fromStdString(m_chat->modelInfo()->path);
    o.host = m_host->text().trimmed().isEmpty() ? QStringLiteral("127.0.0.1") : m_host->text().trimmed();
    o.port = m_port->value();
    o.apiKey = m_apiKey->text();
    o.maxRunning = m_maxRunning->value();
    o.threads = c.n_threads;
    o.contextLength = c.n_ctx;
    o.attention = QString::fromStdString(c.attention);
    o.kvTypes = QString::fromStdString(c.kv_types);
    o.weightType = QString::fromStdString(c.weight_type);
    m_failure.clear();
    m_servedKey = o.apiKey;
    m_servedModel = o.modelPath;
    m_lastFigures.reset();
    m_tokensPerSecond.reset();
    for (QLabel* l : {m_running, m_waiting, m_completed, m_rate, m_kv}) l->setText(kDash);
    m_server->start(o);
    refresh();
}

void ServerPage::stop() { m_server->stop(); }

void ServerPage::onStateChanged(ServerProcess::State state) {
    if (state == ServerProcess::State::Stopped) {
        m_pollTimer->stop();
        m_url->clear();
        m_curl->clear();
    }
    if (state == ServerProcess::State::Serving) updateCurl();  // the server's own name for the model
    refresh();
}

void ServerPage::onListening(const QString& url) {
    m_url->setText(url);
    updateCurl();
    m_pollTimer->start();
    poll();
    refresh();
}

void ServerPage::updateCurl() {
    const QString name = m_server->modelName().isEmpty() ? fileStem(QString::fromStdString(m_chat->config().model_path))
                                                         : m_server->modelName();
    m_curl->setPlainText(curlExample(m_server->url(), m_servedKey, name));
}

void ServerPage::refresh() {
    const ServerProcess::State state = m_server->state();
    const bool stopped = state == ServerProcess::State::Stopped;
    const QString blocker = startBlocker();
    m_start->setEnabled(stopped && blocker.isEmpty());
    m_stop->setEnabled(state == ServerProcess::State::Loading || state == ServerProcess::State::Serving);
    for (QWidget* w : {static_cast<QWidget*>(m_host), static_cast<QWidget*>(m_port), static_cast<QWidget*>(m_apiKey),
                       static_cast<QWidget*>(m_maxRunning)})
        w->setEnabled(stopped);
    m_copyUrl->setEnabled(!m_url->text().isEmpty());
    m_copyCurl->setEnabled(!m_curl->toPlainText().isEmpty());
    const QString chatModel = m_chat->isLoaded() && m_chat->modelInfo() ? QString::fromStdString(m_chat->modelInfo()->path) : QString();
    if (!stopped && chatModel != m_servedModel)
        m_model->setText(tr("%1 (the chat has since loaded another model: Stop, then Start to serve it)").arg(m_servedModel));
    else if (!stopped || !chatModel.isEmpty()) m_model->setText(stopped ? chatModel : m_servedModel);
    else m_model->setText(tr("none: the server runs the model the chat has loaded"));

    QString status;
    bool error = false;
    switch (state) {
    case ServerProcess::State::Loading: status = tr("Loading…"); break;
    case ServerProcess::State::Serving: status = tr("Serving at %1").arg(m_server->url()); break;
    case ServerProcess::State::Stopping: status = tr("Stopping…"); break;
    case ServerProcess::State::Stopped:
        if (!m_failure.isEmpty()) {
            status = m_failure;
            error = true;
        }
        if (!blocker.isEmpty()) status += (status.isEmpty() ? QString() : QStringLiteral("\n")) + blocker;
        if (status.isEmpty()) status = tr("Stopped.");
        break;
    }
    m_status->setText(status);
    m_status->setStyleSheet(error ? QStringLiteral("color:#b02020") : QString());
}

void ServerPage::poll() {
    if (m_pending || m_server->url().isEmpty()) return;
    QUrl url(m_server->url() + QStringLiteral("/metrics"));
    // A server on every interface is reached here through loopback.
    if (url.host() == QLatin1String("0.0.0.0")) url.setHost(QStringLiteral("127.0.0.1"));
    if (!url.isValid()) return;
    QNetworkRequest request(url);
    request.setTransferTimeout(kPollMs * 3);
    m_pending = m_net->get(request);
}

void ServerPage::onPolled(QNetworkReply* reply) {
    reply->deleteLater();
    if (reply != m_pending) return;
    m_pending = nullptr;
    // A poll that fails (the server stopping, a timeout) leaves the last figures standing.
    if (reply->error() != QNetworkReply::NoError || m_server->state() == ServerProcess::State::Stopped) return;
    const servermetrics::Figures f = servermetrics::parseFigures(QString::fromUtf8(reply->readAll()));
    if (m_lastFigures) m_tokensPerSecond = servermetrics::tokensPerSecond(*m_lastFigures, f, m_lastPollClock.nsecsElapsed() / 1e9);
    m_lastFigures = f;
    m_lastPollClock.start();
    showFigures(f);
    emit figuresUpdated();
}

void ServerPage::showFigures(const servermetrics::Figures& f) {
    m_running->setText(number(f.running));
    m_waiting->setText(number(f.waiting));
    m_completed->setText(number(f.completed));
    m_rate->setText(m_tokensPerSecond ? QString::number(*m_tokensPerSecond, 'f', 1) : kDash);
    QString kv = f.kvBytes ? fmt::bytes(*f.kvBytes) : kDash;
    if (f.kvFraction) kv += tr(" (%1% of the pool)").arg(*f.kvFraction * 100.0, 0, 'f', 1);
    m_kv->setText(kv);
}
