#include "ui/pages/metrics_panel.h"

#include <QHBoxLayout>
#include <QStackedWidget>
#include <QTabWidget>

#include "widgets/kv_block_map_view.h"
#include "widgets/kv_memory_chart.h"
#include "widgets/roofline_plot.h"
#include "widgets/server_kv_chart.h"
#include "widgets/token_rate_chart.h"
#include "widgets/turn_latency_chart.h"

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent) {
    // Two tabs: the time series, and the pictures of the cache and the hardware.
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("metricsTabs"));
    m_tabs->setDocumentMode(true);
    outer->addWidget(m_tabs);

    auto* charts = new QWidget(m_tabs);
    auto* layout = new QHBoxLayout(charts);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_kvStack = new QStackedWidget(charts);
    m_kv = new KvMemoryChart(m_kvStack);
    m_serverKv = new ServerKvChart(m_kvStack);
    m_serverKv->setObjectName(QStringLiteral("serverKvChart"));
    m_kvStack->addWidget(m_kv);
    m_kvStack->addWidget(m_serverKv);
    m_turns = new TurnLatencyChart(charts);
    m_rate = new TokenRateChart(charts);
    layout->addWidget(m_kvStack, 3);
    layout->addWidget(m_turns, 2);
    layout->addWidget(m_rate, 3);
    m_tabs->addTab(charts, tr("Live charts"));

    auto* pictures = new QWidget(m_tabs);
    auto* pictureLayout = new QHBoxLayout(pictures);
    pictureLayout->setContentsMargins(0, 0, 0, 0);
    pictureLayout->setSpacing(4);
    m_blockMap = new KvBlockMapView(pictures);
    m_blockMap->setToolTip(tr("Each row a layer, each column a block of tokens: what the KV cache holds and reads now"));
    m_roofline = new RooflinePlot(pictures);
    pictureLayout->addWidget(m_blockMap, 1);
    pictureLayout->addWidget(m_roofline, 1);
    m_tabs->addTab(pictures, tr("KV block map · roofline"));
}

void MetricsPanel::showServerKv(bool remote, const QString& serverDescription) {
    m_serverKv->clear();
    m_serverKv->setCaption(remote ? tr("KV cache in use at %1").arg(serverDescription) : tr("Server KV cache in use"));
    m_kvStack->setCurrentWidget(remote ? static_cast<QWidget*>(m_serverKv) : static_cast<QWidget*>(m_kv));
}

void MetricsPanel::addServerKv(double secondsSinceConnected, double fraction) { m_serverKv->appendPoint(secondsSinceConnected, fraction); }

void MetricsPanel::showBlockMap(const BlockMapSnapshot& map) {
    QVector<KvBlockCell> cells;
    cells.reserve(map.cells.size());
    for (quint8 c : map.cells) cells.append(static_cast<KvBlockCell>(c));   // the engine's states, same order
    m_blockMap->setMap(map.layers, map.blocks, map.blockTokens, cells);
}

void MetricsPanel::showRoofline(const workbench::Engine::RooflineSnapshot& roofline, bool activeExperts) {
    // A mixture of experts reads only the experts its tokens chose: the matmuls' bytes are those.
    const QString matmuls = activeExperts ? tr("matmuls (active experts)") : tr("matmuls");
    auto dots = [&](const std::optional<workbench::StepRoofline>& step, const QString& when) {
        QList<RooflineDot> out;
        if (!step) return out;
        for (auto [part, p] : {std::pair{matmuls, &step->matmul}, {tr("attention"), &step->attention}, {tr("indexer"), &step->index}})
            if (p->bytes > 0 && p->seconds > 0)
                out.append({QStringLiteral("%1 · %2 (%3 tokens)").arg(when, part).arg(step->n_tokens), p->ops / p->bytes, p->ops / p->seconds / 1e9});
        return out;
    };
    m_roofline->setPoints(dots(roofline.prefill, tr("prompt")), dots(roofline.decode, tr("decode")));
}

void MetricsPanel::setCeilings(const MachineCeilings& c, bool quantizedWeights) {
    // Quantized weights run the int8 kernels; float weights the FMA ones.
    m_roofline->setCeilings(c.bandwidthGbS, quantizedWeights ? c.int8Gops : c.fp32Gflops,
                            quantizedWeights ? tr("int8") : tr("fp32"));
}

// The rate chart's time is time spent generating: each reply starts where the last one ended, so
// minutes of reading between turns neither stretch the axis nor draw a long line across it.
void MetricsPanel::beginReply() {
    m_replyStartSeconds = m_generatingSeconds;
    m_turnShown = false;
}

void MetricsPanel::addSamples(const QList<TokenSample>& samples) {
    QList<KvChartSample> kv;
    QList<TokenRateSample> rate;
    kv.reserve(samples.size());
    for (const TokenSample& s : samples) {
        // A remote server's pieces carry no KV bytes (its cache is not ours to read): no point.
        if (s.kvBytesAllocated > 0)
            kv.append({static_cast<double>(s.nTokensContext), static_cast<double>(s.kvBytesInUse),
                       static_cast<double>(s.kvBytesFull), static_cast<double>(s.kvBytesAllocated)});
        // The first piece of a reply waited for the prefill: not a decode gap, but the turn's
        // time to first token, shown at once (the reply's end corrects it to the engine's figure).
        if (!s.firstOfReply) rate.append({m_replyStartSeconds + s.msSinceRequest / 1000.0, s.gapMs});
        else if (!m_turnShown) {
            m_turns->addTurn(s.msSinceRequest);
            m_turnShown = true;
        }
    }
    m_kv->appendSamples(kv);
    m_rate->appendSamples(rate);
}

void MetricsPanel::endReply(const ReplySummary& summary) {
    if (summary.metrics.n_generated > 0) {
        if (m_turnShown) m_turns->setLastTurn(summary.metrics.ttft_ms);
        else m_turns->addTurn(summary.metrics.ttft_ms);
    }
    m_turnShown = false;
    m_rate->endReply();
    m_generatingSeconds = m_replyStartSeconds + summary.metrics.total_ms / 1000.0;
}

void MetricsPanel::clearAll() {
    m_kv->clear();
    m_blockMap->clear();
    m_turns->clear();
    m_rate->clear();
    m_generatingSeconds = 0;
    m_replyStartSeconds = 0;
}

void MetricsPanel::clearKv() { m_kv->clear(); }

void MetricsPanel::continueAfterTurns(int n) { m_turns->clear(n + 1); }
