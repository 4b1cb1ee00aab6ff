// Painting the block map: cells scale to fill the widget (at least 1 px each), a legend row with
// each state's count sits under the grid, and a tooltip names the cell under the mouse.
#include "widgets/kv_block_map_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <array>

namespace {

constexpr int kLegendHeight = 22;
constexpr int kAxisWidth = 28;

}  // namespace

KvBlockMapView::KvBlockMapView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(200, 120);
    setAccessibleName(tr("KV block map"));
}

void KvBlockMapView::setMap(int layers, int blocks, int blockTokens, const QVector<KvBlockCell>& cells) {
    if (layers < 0 || blocks < 0 || cells.size() != static_cast<qsizetype>(layers) * blocks) {
        clear();
        return;
    }
    m_layers = layers;
    m_blocks = blocks;
    m_blockTokens = blockTokens > 0 ? blockTokens : 16;
    m_cells = cells;
    update();
}

void KvBlockMapView::clear() {
    m_layers = m_blocks = 0;
    m_cells.clear();
    update();
}

KvBlockCell KvBlockMapView::cell(int layer, int block) const {
    if (layer < 0 || layer >= m_layers || block < 0 || block >= m_blocks) return KvBlockCell::empty;
    return m_cells[layer * m_blocks + block];
}

QColor KvBlockMapView::colorOf(KvBlockCell c, bool dark) {
    switch (c) {
    case KvBlockCell::live: return QColor(0x2e, 0x7d, 0x32);        // green: held and read
    case KvBlockCell::shared: return QColor(0x15, 0x65, 0xc0);      // blue: one copy, several sequences
    case KvBlockCell::evicted: return dark ? QColor(0x75, 0x75, 0x75) : QColor(0xbd, 0xbd, 0xbd);  // grey: gone
    case KvBlockCell::compressed: return QColor(0x8e, 0x24, 0xaa);  // purple: pooled
    case KvBlockCell::skipped: return QColor(0xf9, 0xa8, 0x25);     // amber: held, not read
    case KvBlockCell::borrowed: return QColor(0x90, 0xca, 0xf9);    // light blue: another layer's
    case KvBlockCell::empty: break;
    }
    return dark ? QColor(0x3a, 0x3a, 0x3a) : QColor(0xf5, 0xf5, 0xf5);
}

QString KvBlockMapView::nameOf(KvBlockCell c) {
    switch (c) {
    case KvBlockCell::live: return tr("live");
    case KvBlockCell::shared: return tr("shared");
    case KvBlockCell::evicted: return tr("evicted");
    case KvBlockCell::compressed: return tr("compressed");
    case KvBlockCell::skipped: return tr("skipped by top-k");
    case KvBlockCell::borrowed: return tr("reads another layer");
    case KvBlockCell::empty: break;
    }
    return tr("empty");
}

QString KvBlockMapView::describe(int layer, int block) const {
    const KvBlockCell c = cell(layer, block);
    static const char* why[] = {"not used", "held and read by the last query", "held once, shared with another sequence",
                                "evicted by the sliding window", "pooled into compressed entries", "held, but top-k did not read it",
                                "this layer keeps no KV: it reads another layer's"};
    return tr("layer %1, block %2 (tokens %3–%4): %5")
        .arg(layer)
        .arg(block)
        .arg(block * m_blockTokens)
        .arg((block + 1) * m_blockTokens - 1)
        .arg(QString::fromLatin1(why[static_cast<int>(c)]));
}

QRect KvBlockMapView::gridRect() const {
    return QRect(kAxisWidth, 4, std::max(1, width() - kAxisWidth - 4), std::max(1, height() - kLegendHeight - 8));
}

QPoint KvBlockMapView::cellAt(const QPoint& pos) const {
    const QRect g = gridRect();
    if (m_layers == 0 || m_blocks == 0 || !g.contains(pos)) return {-1, -1};
    const int block = (pos.x() - g.left()) * m_blocks / g.width();
    const int layer = (pos.y() - g.top()) * m_layers / g.height();
    return {std::min(block, m_blocks - 1), std::min(layer, m_layers - 1)};
}

void KvBlockMapView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    const QRect g = gridRect();
    p.setPen(palette().color(QPalette::Text));
    if (m_layers == 0 || m_blocks == 0) {
        p.drawText(rect(), Qt::AlignCenter, tr("No tokens in the cache yet"));
        return;
    }
    std::array<int, 7> counts{};
    for (int il = 0; il < m_layers; ++il) {
        const int y0 = g.top() + il * g.height() / m_layers, y1 = g.top() + (il + 1) * g.height() / m_layers;
        for (int b = 0; b < m_blocks; ++b) {
            const KvBlockCell c = m_cells[il * m_blocks + b];
            ++counts[static_cast<size_t>(c)];
            const int x0 = g.left() + b * g.width() / m_blocks, x1 = g.left() + (b + 1) * g.width() / m_blocks;
            // A 1 px gap between cells when they are large enough to afford it.
            const int gap = (x1 - x0 > 4 && y1 - y0 > 4) ? 1 : 0;
            p.fillRect(QRect(x0, y0, std::max(1, x1 - x0 - gap), std::max(1, y1 - y0 - gap)), colorOf(c, dark));
        }
    }
    // Layer axis: first and last layer.
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    p.setFont(small);
    p.drawText(QRect(0, g.top(), kAxisWidth - 4, 14), Qt::AlignRight | Qt::AlignTop, QStringLiteral("0"));
    p.drawText(QRect(0, g.bottom() - 14, kAxisWidth - 4, 14), Qt::AlignRight | Qt::AlignBottom, QString::number(m_layers - 1));
    // Legend: only the states present, with their share of cells.
    int x = g.left();
    const int y = height() - kLegendHeight + 4;
    const double total = static_cast<double>(m_cells.size());
    for (int s = 1; s < 7; ++s) {
        if (counts[static_cast<size_t>(s)] == 0) continue;
        const KvBlockCell c = static_cast<KvBlockCell>(s);
        p.fillRect(QRect(x, y + 3, 10, 10), colorOf(c, dark));
        const QString label = QStringLiteral("%1 %2%").arg(nameOf(c)).arg(100.0 * counts[static_cast<size_t>(s)] / total, 0, 'f', 0);
        p.drawText(QRect(x + 14, y, 200, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
        x += 14 + p.fontMetrics().horizontalAdvance(label) + 12;
    }
}

bool KvBlockMapView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(e);
        const QPoint at = cellAt(help->pos());
        if (at.x() >= 0) QToolTip::showText(help->globalPos(), describe(at.y(), at.x()), this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}
