#include "widgets/kv_memory_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

KvMemoryChart::KvMemoryChart(QWidget* parent) : MetricChartView(tr("KV cache vs context"), parent) {
    m_inUse = new QLineSeries(this);
    m_inUse->setName(tr("in use"));
    m_inUse->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
    m_full = new QLineSeries(this);
    m_full->setName(tr("full-attention equivalent"));
    m_full->setPen(QPen(QColor(0x99, 0x99, 0x99), 1.5, Qt::DashLine));
    m_allocated = new QLineSeries(this);
    m_allocated->setName(tr("pool"));
    m_allocated->setPen(QPen(QColor(0xd6, 0x27, 0x28), 1, Qt::DotLine));
    // Full attention's dashes are drawn over "in use": under full attention the two coincide.
    for (QLineSeries* s : {m_inUse, m_full, m_allocated}) chart()->addSeries(s);
    m_axisX = makeAxis(tr("tokens in context"), Qt::AlignBottom);
    m_axisY = makeAxis(tr("MiB"), Qt::AlignLeft);
    for (QLineSeries* s : {m_inUse, m_full, m_allocated}) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }    clear();  // the empty chart's ranges, as after New chat
}

void KvMemoryChart::appendSamples(const QList<KvChartSample>& samples) {
    if (samples.isEmpty()) return;
    QList<QPointF> inUse, full;
    inUse.reserve(samples.size());
    full.reserve(samples.size());
    for (const KvChartSample& s : samples) {
        inUse.append({s.tokens, s.bytesInUse / kMiB});
        full.append({s.tokens, s.bytesFull / kMiB});
        m_maxTokens = std::max(m_maxTokens, s.tokens);
        m_maxDataMiB = std::max({m_maxDataMiB, s.bytesInUse / kMiB, s.bytesFull / kMiB});
        m_allocatedMiB = s.bytesAllocated / kMiB;
    }
    appendDecimated(m_inUse, inUse);
    appendDecimated(m_full, full);
    growToFit(m_axisX, m_maxTokens, 16);
    updateAllocatedLine();
}

void KvMemoryChart::updateAllocatedLine() {
    // The pool is sized for the whole context, often 100× what a short chat holds; drawn on the
    // same scale it would flatten the lines that matter. It joins the scale only when close.
    // A replay from the history has no pool size (0): no line then.
    if (m_allocatedMiB <= 0) {
        growToFit(m_axisY, m_maxDataMiB, 0.1);
        m_allocated->clear();
        m_allocated->setName(tr("pool"));
        return;
    }
    const bool onScale = m_allocatedMiB <= m_maxDataMiB * 3;
    growToFit(m_axisY, onScale ? std::max(m_maxDataMiB, m_allocatedMiB) : m_maxDataMiB, 0.1);
    m_allocated->replace(QList<QPointF>{{0, m_allocatedMiB}, {m_axisX->max(), m_allocatedMiB}});
    m_allocated->setName(onScale ? tr("pool %1 MiB").arg(m_allocatedMiB, 0, 'f', 1)
                                 : tr("pool %1 MiB (off scale)").arg(m_allocatedMiB, 0, 'f', 1));
}

void KvMemoryChart::clear() {
    m_inUse->clear();
    m_full->clear();
    m_allocated->clear();
    m_maxTokens = m_maxDataMiB = 0;
    setNiceRange(m_axisX, 16);
    setNiceRange(m_axisY, 0.1);
    m_allocated->setName(tr("pool"));
}
