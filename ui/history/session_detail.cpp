#include "ui/history/session_detail.h"

#include <algorithm>

#include <QDateTime>
#include <QGridLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/format.h"
#include "widgets/kv_memory_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/token_stream_view.h"
#include "widgets/turn_latency_chart.h"

workbench::Result<SessionData> SessionData::load(const workbench::Store& store, workbench::RowId sessionId) {
    SessionData data;
    auto session = store.load_session(sessionId);
    if (!session.ok()) return session.status();
    data.session = *session;
    if (data.session.configuration_id) {
        auto configuration = store.load_configuration(data.session.configuration_id);
        if (configuration.ok()) data.configuration = *configuration;
    }
    auto used = store.load_run_configurations(sessionId);
    if (!used.ok()) return used.status();
    for (workbench::ConfigurationRecord& c : *used) data.runConfigurations.emplace(c.id, std::move(c));
    auto messages = store.load_messages(sessionId);
    if (!messages.ok()) return messages.status();
    data.messages = std::move(messages).value();
    auto runs = store.load_runs(sessionId);
    if (!runs.ok()) return runs.status();
    data.runs = std::move(runs).value();
    for (const workbench::RunRecord& run : data.runs) {
        auto samples = store.load_samples(run.id);
        if (!samples.ok()) return samples.status();
        data.samples[run.id] = std::move(samples).value();
    }
    return data;
}

SessionDetail::SessionDetail(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("sessionHeader"));
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_header);
    auto* split = new QSplitter(Qt::Horizontal, this);
    m_view = new TokenStreamView(split);
    m_view->setObjectName(QStringLiteral("historyTranscript"));
    // The transcript is what people read: half the width, never a narrow column. The charts
    // share the other half, KV on top (its x axis is the longest), TTFT and decode below.
    m_view->setMinimumWidth(360);
    auto* charts = new QWidget(split);
    auto* grid = new QGridLayout(charts);
    grid->setContentsMargins(0, 0, 0, 0);
    m_kv = new KvMemoryChart(charts);
    m_turns = new TurnLatencyChart(charts);
    m_rate = new TokenRateChart(charts);
    grid->addWidget(m_kv, 0, 0, 1, 2);
    grid->addWidget(m_turns, 1, 0);
    grid->addWidget(m_rate, 1, 1);
    split->addWidget(m_view);
    split->addWidget(charts);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({1000, 1000});  // half and half from the start, not from the size hints
    layout->addWidget(split, 1);
    clear(tr("Select a session to read it and replay its charts."));
}

QString SessionDetail::runFooter(const workbench::RunRecord& run) {
    QStringList parts;
    parts << tr("%1 tokens").arg(run.n_tokens_generated);
    if (run.ttft_ms) parts << tr("TTFT %1 ms").arg(*run.ttft_ms, 0, 'f', 0);
    parts << (run.decode_tok_s ? tr("%1 tok/s").arg(*run.decode_tok_s, 0, 'f', 1) : tr("— tok/s"));
    if (run.itl_ms_p90) parts << tr("ITL p90 %1 ms").arg(*run.itl_ms_p90, 0, 'f', 1);
    parts << tr("prompt %1").arg(run.n_tokens_prompt);
    parts << tr("KV %1 (full %2)").arg(fmt::bytes(static_cast<double>(run.kv_bytes)),
                                       fmt::bytes(static_cast<double>(run.kv_bytes_full)));
    if (run.seed) parts << tr("seed %1").arg(*run.seed);
    parts << QString::fromStdString(run.stop_reason);
    return parts.join(QStringLiteral(" · "));
}

void SessionDetail::clear(const QString& message) {
    m_header->setText(message);
    m_view->clearMessages();
    m_kv->clear();
    m_turns->clear();
    m_rate->clear();
}

void SessionDetail::showSession(const SessionData& data) {
    clear();
    // The configuration the turns ran under (the session's first, for one recorded before runs
    // carried theirs); several: "mixed", and each reply's footer names its own.
    const bool mixed = data.runConfigurations.size() > 1;
    const workbench::ConfigurationRecord& c =
        data.runConfigurations.size() == 1 ? data.runConfigurations.begin()->second : data.configuration;
    const QString started = QDateTime::fromMSecsSinceEpoch(data.session.created_unix_ms).toString(Qt::ISODate);
    if (mixed)
        m_header->setText(tr("<b>Session %1</b> · %2 · mixed: its turns ran under %3 configurations (each reply names its own)")
                              .arg(data.session.id)
                              .arg(started)
                              .arg(data.runConfigurations.size()));
    else if (c.model.empty() && c.variant.empty())
        m_header->setText(tr("<b>Session %1</b> · %2 · no configuration recorded").arg(data.session.id).arg(started));
    else
        m_header->setText(tr("<b>Session %1</b> · %2 · %3 · attention %4 · KV %5 · weights %6")
                              .arg(data.session.id)
                              .arg(started, QString::fromStdString(c.model).toHtmlEscaped(),
                                   QString::fromStdString(c.variant).toHtmlEscaped(),
                                   QString::fromStdString(c.kv_dtype).toHtmlEscaped(),
                                   c.weight_type.empty() ? tr("as stored") : QString::fromStdString(c.weight_type)));
    auto footerOf = [&](const workbench::RunRecord& run) {
        QString footer = runFooter(run);
        const auto config = data.runConfigurations.find(run.configuration_id);
        if (mixed && config != data.runConfigurations.end())
            footer += QStringLiteral(" · ") + QString::fromStdString(workbench::configuration_label(config->second));
        return footer;
    };
    std::map<workbench::RowId, const workbench::RunRecord*> runs;
    for (const workbench::RunRecord& r : data.runs) runs[r.id] = &r;
    for (const workbench::MessageRecord& m : data.messages) {
        const QString text = QString::fromStdString(m.text);
        if (m.role == "user") m_view->addMessage(TokenStreamView::Role::User, text);
        else if (m.role == "assistant")
            m_view->addMessage(TokenStreamView::Role::Assistant, text,
                               runs.count(m.run_id) ? footerOf(*runs[m.run_id]) : QString());
        else m_view->addMessage(TokenStreamView::Role::Note, tr("system: %1").arg(text));
    }
    // The charts as the chat drew them: KV by tokens in context (the run's prompt + its index),
    // TTFT per turn, and decode speed over the time spent generating.
    double generatingS = 0;
    // A long session holds tens of thousands of samples; drawn one point each, the charts took
    // seconds of the GUI thread (painting costs per point). kReplayPoints a series, a few per pixel, draw the same picture.
    constexpr size_t kReplayPoints = 400;
    size_t total = 0;
    for (const auto& [id, samples] : data.samples) total += samples.size();
    const int stride = static_cast<int>(std::max<size_t>(1, (total + kReplayPoints - 1) / kReplayPoints));
    // One append per chart for the whole session: each append redraws its series and axes.
    QList<KvChartSample> kv;
    QList<TokenRateSample> rate;
    for (const workbench::RunRecord& run : data.runs) {
        if (run.ttft_ms) m_turns->addTurn(*run.ttft_ms);
        auto it = data.samples.find(run.id);
        if (it == data.samples.end()) continue;
        // Time spent generating, as the live chart counts it: each reply starts where the last
        // ended, the minutes of reading between turns left out.
        const double offsetS = generatingS;
        const double lastMs = it->second.empty() ? 0.0 : it->second.back().t_ms;
        generatingS += std::max(lastMs, run.finished_unix_ms > run.started_unix_ms ? double(run.finished_unix_ms - run.started_unix_ms) : 0.0) / 1000.0;
        const std::vector<workbench::MetricSample>& samples = it->second;
        const qsizetype replyStart = rate.size();
        for (size_t i = 0; i < samples.size(); ++i) {
            const workbench::MetricSample& s = samples[i];
            if (i % static_cast<size_t>(stride) == 0 || i + 1 == samples.size())   // KV grows smoothly: every stride-th and the last
                kv.append({static_cast<double>(run.n_tokens_prompt + s.token_index), static_cast<double>(s.kv_bytes),
                           static_cast<double>(s.kv_bytes_full), 0});
            if (s.itl_ms) rate.append({offsetS + s.t_ms / 1000.0, *s.itl_ms});
        }
        if (rate.size() > replyStart) rate[replyStart].startsReply = true;
    }
    m_kv->appendSamples(kv);
    m_rate->appendSamples(rate, stride);
    m_rate->endReply();
}
