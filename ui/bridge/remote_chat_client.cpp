// A remote server as the chat's backend (see the header): wbremote's streamed completion on a
// worker thread, handed back to the GUI thread as queued calls; /metrics polled by Qt Network.
#include "ui/bridge/remote_chat_client.h"

#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <vector>

#include "remote/openai_client.h"
#include "ui/pages/server_metrics_text.h"

namespace {

constexpr int kBatchMs = 40;    // as the local engine's worker: text reaches the view in batches
constexpr int kPollMs = 1000;

wbremote::RemoteEndpoint endpointOf(const QString& url, const QString& apiKey) {
    wbremote::RemoteEndpoint e;
    e.base_url = url.trimmed().toStdString();
    e.api_key = apiKey.toStdString();
    return e;
}

QString s(const std::string& text) { return QString::fromStdString(text); }

}  // namespace

struct RemoteOutcome {
    wbremote::RemoteCompletion completion;
    bool cancelled = false;
};

// ---- RemoteProbe ----

RemoteProbe::RemoteProbe(QObject* parent) : QObject(parent) { qRegisterMetaType<RemoteProbeResult>(); }

RemoteProbe::~RemoteProbe() {
    if (m_thread.joinable()) m_thread.join();
}

bool RemoteProbe::start(const QString& url, const QString& apiKey) {
    if (m_running) return false;
    if (m_thread.joinable()) m_thread.join();  // the last probe's thread, already past its result
    m_running = true;
    m_thread = std::thread([this, endpoint = endpointOf(url, apiKey)] {
        RemoteProbeResult r;
        auto models = wbremote::list_models(endpoint);
        if (!models.ok()) {
            r.error = s(models.status().message());
        } else {
            r.ok = true;
            for (const wbremote::RemoteModel& m : *models) {
                r.models << s(m.id);
                r.maxModelLens << m.max_model_len;
            }
            r.serverKind = QString::fromLatin1(wbremote::server_kind_name(wbremote::detect_server_kind(endpoint, *models)));
        }
        // Posted to this object's (the GUI) thread; the destructor joins before it could go.
        QMetaObject::invokeMethod(this, [this, r] {
            m_running = false;
            emit finished(r);
        }, Qt::QueuedConnection);
    });
    return true;
}

// ---- RemoteChatClient ----

RemoteChatClient::RemoteChatClient(QObject* parent) : ChatBackend(parent) {
    registerEngineTypes();
    m_net = new QNetworkAccessManager(this);
    // A server on this machine or the LAN: a proxy from the environment must not carry the polls.
    m_net->setProxy(QNetworkProxy::NoProxy);
    connect(m_net, &QNetworkAccessManager::finished, this, &RemoteChatClient::onPolled);
    m_pollTimer = new QTimer(this);
    m_pollTimer->setInterval(kPollMs);
    connect(m_pollTimer, &QTimer::timeout, this, &RemoteChatClient::pollMetrics);
}

RemoteChatClient::~RemoteChatClient() {
    m_pollTimer->stop();
    m_net->disconnect(this);
    stop();
    if (m_thread.joinable()) m_thread.join();
}

void RemoteChatClient::setTarget(const RemoteTarget& target) { m_target = target; }

QString RemoteChatClient::description() const {
    return tr("%1 at %2").arg(m_target.serverKind.isEmpty() ? QStringLiteral("unknown") : m_target.serverKind,
                              m_target.url);
}

QString RemoteChatClient::metricsUrl(const QString& baseUrl) {
    QString root = baseUrl.trimmed();
    while (root.endsWith(QLatin1Char('/'))) root.chop(1);
    if (root.endsWith(QLatin1String("/v1"))) root.chop(3);
    return root + QStringLiteral("/metrics");
}

bool RemoteChatClient::sendChat(const ChatHistory& messages, const workbench::GenerationRequest& request, const ToolOffer& tools) {
    if (!isReady() || m_generating) return false;
    workbench::Json toolsJson;
    if (!tools.json.isEmpty()) {
        auto parsed = workbench::parse_json(tools.json.toStdString());
        if (parsed.ok()) toolsJson = std::move(*parsed);
    }
    if (m_thread.joinable()) m_thread.join();  // the last reply's thread, already past its result
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_generating = true;
    m_seed = request.sampling.seed;
    m_kvPeak.reset();
    emit busyChanged(true);

    wbremote::RemoteRequest remote;
    remote.model = m_target.model.toStdString();
    remote.messages = messages;
    remote.generation = request;
    remote.tools = toolsJson;
    remote.tool_required = tools.required;
    // The stream comes back in one form whatever the server's model (wbremote: thinking in
    // <think>, calls as Hermes blocks), so it is read as such.
    ReplyForm form;
    form.format.think_tags = true;
    form.toolsOffered = toolsJson.is_array() && !toolsJson.empty();
    emit replyFormKnown(form);
    m_thread = std::thread([this, endpoint = endpointOf(m_target.url, m_target.apiKey), remote, cancel = m_cancel] {
        QString pendingText;
        QList<TokenSample> pendingSamples;
        double lastFlushMs = 0, lastPieceMs = 0;
        bool first = true;
        auto flush = [&] {
            if (pendingText.isEmpty() && pendingSamples.isEmpty()) return;
            QMetaObject::invokeMethod(this, [this, text = pendingText, samples = pendingSamples] {
                if (!text.isEmpty()) emit tokensArrived(text);
                if (!samples.isEmpty()) emit samplesArrived(samples);
            }, Qt::QueuedConnection);
            pendingText.clear();
            pendingSamples.clear();
        };
        // One sample per piece of text, timed at its arrival (a server sends about a token per
        // event); the cache is the server's, so the KV fields stay 0.
        auto onText = [&](std::string_view text, double tMs) {
            pendingText += QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
            TokenSample sample;
            sample.msSinceRequest = tMs;
            sample.firstOfReply = first;
            if (!first) sample.gapMs = tMs - lastPieceMs;
            first = false;
            lastPieceMs = tMs;
            pendingSamples.append(sample);
            if (tMs - lastFlushMs >= kBatchMs) {
                flush();
                lastFlushMs = tMs;
            }
        };
        RemoteOutcome outcome;
        outcome.completion = wbremote::stream_completion(endpoint, remote, onText, cancel.get());
        outcome.cancelled = cancel->load();
        flush();
        QMetaObject::invokeMethod(this, [this, outcome] { finishReply(outcome); }, Qt::QueuedConnection);
    });
    // The KV figure now, then every second while the reply streams.
    pollMetrics();
    m_pollTimer->start();
    return true;
}

void RemoteChatClient::stop() {
    if (m_cancel) m_cancel->store(true);
}

void RemoteChatClient::finishReply(const RemoteOutcome& outcome) {
    const wbremote::RemoteCompletion& c = outcome.completion;
    m_generating = false;
    m_cancel.reset();
    m_pollTimer->stop();
    emit busyChanged(false);

    // No reply to keep: an HTTP error (401, 404, 429, 5xx), a refused connection, a stream that
    // broke before its first word. A stopped reply is kept even when empty, as the local one is.
    if (!c.ok && !outcome.cancelled && (!c.partial || c.text.empty())) {
        emit replyFailed(tr("The server (%1) did not answer: %2").arg(description(), s(c.error)));
        return;
    }
    ReplySummary summary;
    summary.text = s(c.text);
    summary.seed = m_seed;
    const workbench::RequestMetrics& m = c.metrics;
    workbench::GenerationMetrics& g = summary.metrics;
    g.n_prompt_tokens = m.n_prompt_tokens;
    g.n_generated = m.n_output_tokens;
    g.ttft_ms = m.ttft_ms;
    if (m.tpot_ms && *m.tpot_ms > 0) g.decode_tok_s = 1000.0 / *m.tpot_ms;
    if (m.itl.n > 0) g.itl_ms_p50 = m.itl.p50, g.itl_ms_p90 = m.itl.p90, g.itl_ms_p99 = m.itl.p99;
    g.total_ms = m.e2e_ms;
    g.n_context_tokens = m.n_prompt_tokens + m.n_output_tokens;
    if (outcome.cancelled) {
        summary.stopReason = workbench::StopReason::cancelled;
        summary.stopReasonName = QStringLiteral("cancelled");
    } else {
        // OpenAI's "length" is our max_tokens; "stop" covers both an end token and a stop string.
        summary.stopReason = c.finish_reason == "length" ? workbench::StopReason::max_tokens
                                                         : workbench::StopReason::end_of_generation;
        summary.stopReasonName = c.finish_reason.empty() ? QStringLiteral("cut off") : s(c.finish_reason);
    }
    ReplySummary::Remote remote;
    remote.where = description() + (m_target.model.isEmpty() ? QString() : tr(", model %1").arg(m_target.model));
    remote.kvFraction = m_kvPeak;
    if (c.partial && !outcome.cancelled) remote.cutOff = s(c.error);
    summary.remote = remote;
    emit replyFinished(summary);
}

void RemoteChatClient::pollMetrics() {
    if (m_pendingPoll || m_target.url.isEmpty()) return;
    const QUrl url(metricsUrl(m_target.url));
    if (!url.isValid()) return;
    QNetworkRequest request(url);
    if (!m_target.apiKey.isEmpty()) request.setRawHeader("Authorization", "Bearer " + m_target.apiKey.toUtf8());
    request.setTransferTimeout(kPollMs * 3);
    m_pendingPoll = m_net->get(request);
}

void RemoteChatClient::onPolled(QNetworkReply* reply) {
    reply->deleteLater();
    if (reply != m_pendingPoll) return;
    m_pendingPoll = nullptr;
    // A server without /metrics (or one that fails it) does not report its KV; a poll answered
    // after the reply ended belongs to no reply.
    if (!m_generating) return;
    const auto fraction = reply->error() == QNetworkReply::NoError
                              ? servermetrics::kvUsageFraction(QString::fromUtf8(reply->readAll()))
                              : std::nullopt;
    if (fraction) m_kvPeak = std::max(m_kvPeak.value_or(0.0), *fraction);
    emit kvUsageChanged(fraction.has_value(), fraction.value_or(0.0));
}
