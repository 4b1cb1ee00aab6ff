#include "ui/pages/metrics_panel.h"

#include <QHBoxLayout>

#include "widgets/kv_memory_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/turn_latency_chart.h"

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_kv = new KvMemoryChart(this);
    m_turns = new TurnLatencyChart(this);
    m_rate = new TokenRateChart(this);
    layout->addWidget(m_kv, 3);
    layout->addWidget(m_turns, 2);
    layout->addWidget(m_rate, 3);
    m_session.start();
}

void MetricsPanel::beginReply() { m_replyStartSeconds = m_session.elapsed() / 1000.0; }

void MetricsPanel::addSamples(const QList<TokenSample>& samples) {
    QList<KvChartSample> kv;
    QList<TokenRateSample> rate;
    kv.reserve(samples.size());
    for (const TokenSample& s : samples) {
        kv.append({static_cast<double>(s.nTokensContext), static_cast<double>(s.kvBytesInUse),
                   static_cast<double>(s.kvBytesFull), static_cast<double>(s.kvBytesAllocated)});
        // The first piece of a reply waited for the prefill: not a decode gap.
        if (!s.firstOfReply) rate.append({m_replyStartSeconds + s.msSinceRequest / 1000.0, s.gapMs});
    }
    m_kv->appendSamples(kv);
    m_rate->appendSamples(rate);
}

void MetricsPanel::endReply(const ReplySummary& summary) {
    if (summary.metrics.n_generated > 0) m_turns->addTurn(summary.metrics.ttft_ms);
    m_rate->endReply();
}

void MetricsPanel::clearAll() {
    m_kv->clear();
    m_turns->clear();
    m_rate->clear();
    m_session.restart();
    m_replyStartSeconds = 0;
}

void MetricsPanel::clearKv() { m_kv->clear(); }
