// Painting and hit-testing for AccuracyHeatmap: fixed cell sizes from the font, panels left to
// right with their titles above.
#include "widgets/accuracy_heatmap.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace {
constexpr int kRowLabel = 48, kTitle = 22, kHeader = 18, kGap = 24, kMargin = 6;
}

double HeatmapGrid::accuracy(int row, int column) const {
    const int at = row * static_cast<int>(columns.size()) + column;
    return at >= 0 && at < trials.size() && trials[at] > 0 ? static_cast<double>(correct[at]) / trials[at] : -1.0;
}

AccuracyHeatmap::AccuracyHeatmap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void AccuracyHeatmap::setPanels(const QList<HeatmapGrid>& panels) {
    m_panels.clear();
    for (const HeatmapGrid& g : panels) {
        const qsizetype cells = g.rows.size() * g.columns.size();
        if (cells > 0 && g.trials.size() == cells && g.correct.size() == cells) m_panels.push_back(g);
    }
    updateGeometry();
    update();
}

int AccuracyHeatmap::cellWidth() const { return fontMetrics().horizontalAdvance(QStringLiteral("0.00")) + 18; }
int AccuracyHeatmap::cellHeight() const { return fontMetrics().height() + 10; }
int AccuracyHeatmap::panelWidth(int i) const {
    const HeatmapGrid& g = m_panels[i];
    return std::max(kRowLabel + static_cast<int>(g.columns.size()) * cellWidth(), fontMetrics().horizontalAdvance(g.title) + 4);
}

QSize AccuracyHeatmap::sizeHint() const {
    int w = kMargin, rows = 1;
    for (int i = 0; i < m_panels.size(); ++i) {
        w += panelWidth(i) + kGap;
        rows = std::max(rows, static_cast<int>(m_panels[i].rows.size()));
    }
    return {std::max(w, 200), kMargin + kTitle + kHeader + rows * cellHeight() + kMargin};
}

QRect AccuracyHeatmap::cellRect(int panel, int row, int column) const {
    int x = kMargin;
    for (int i = 0; i < panel; ++i) x += panelWidth(i) + kGap;
    return {x + kRowLabel + column * cellWidth(), kMargin + kTitle + kHeader + row * cellHeight(), cellWidth() - 2, cellHeight() - 2};
}

AccuracyHeatmap::Hit AccuracyHeatmap::cellAt(const QPoint& pos) const {
    for (int i = 0; i < m_panels.size(); ++i)
        for (int r = 0; r < m_panels[i].rows.size(); ++r)
            for (int c = 0; c < m_panels[i].columns.size(); ++c)
                if (cellRect(i, r, c).contains(pos)) return {i, r, c};
    return {};
}

QString AccuracyHeatmap::describe(int panel, int row, int column) const {
    if (panel < 0 || panel >= m_panels.size()) return {};
    const HeatmapGrid& g = m_panels[panel];
    const int at = row * static_cast<int>(g.columns.size()) + column;
    if (row < 0 || column < 0 || row >= g.rows.size() || column >= g.columns.size()) return {};
    const QString where = g.columns[column] == QStringLiteral("whole") ? tr("the whole context") : tr("depth %1").arg(g.columns[column]);
    if (g.trials[at] == 0) return tr("%1 tokens, %2: not measured").arg(g.rows[row], where);
    return tr("%1 tokens, %2: %3 of %4 found (%5)")
        .arg(g.rows[row], where)
        .arg(g.correct[at])
        .arg(g.trials[at])
        .arg(g.accuracy(row, column), 0, 'f', 2);
}

QColor AccuracyHeatmap::colorOf(double a) {
    if (a < 0) return QColor(0xdd, 0xdd, 0xdd);
    a = std::clamp(a, 0.0, 1.0);
    const QColor low(215, 48, 39), mid(254, 224, 139), high(26, 152, 80);
    const QColor& from = a < 0.5 ? low : mid;
    const QColor& to = a < 0.5 ? mid : high;
    const double f = a < 0.5 ? a * 2 : (a - 0.5) * 2;
    return QColor::fromRgbF(static_cast<float>(from.redF() + f * (to.redF() - from.redF())), static_cast<float>(from.greenF() + f * (to.greenF() - from.greenF())),
                            static_cast<float>(from.blueF() + f * (to.blueF() - from.blueF())));
}

void AccuracyHeatmap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const QColor text = palette().color(QPalette::Text);
    if (m_panels.isEmpty()) {
        p.setPen(text);
        p.drawText(rect(), Qt::AlignCenter, tr("No retrieval measured for this configuration"));
        return;
    }
    int x = kMargin;
    for (int i = 0; i < m_panels.size(); ++i) {
        const HeatmapGrid& g = m_panels[i];
        p.setPen(text);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRect(x, kMargin, panelWidth(i), kTitle), Qt::AlignLeft | Qt::AlignVCenter, g.title);
        p.setFont(font());
        for (int c = 0; c < g.columns.size(); ++c) {
            const QRect cell = cellRect(i, 0, c);
            p.drawText(QRect(cell.left(), kMargin + kTitle, cell.width(), kHeader), Qt::AlignCenter, g.columns[c]);
        }
        for (int r = 0; r < g.rows.size(); ++r) {
            const QRect first = cellRect(i, r, 0);
            p.setPen(text);
            p.drawText(QRect(x, first.top(), kRowLabel - 6, first.height()), Qt::AlignRight | Qt::AlignVCenter, g.rows[r]);
            for (int c = 0; c < g.columns.size(); ++c) {
                const QRect cell = cellRect(i, r, c);
                const double a = g.accuracy(r, c);
                const QColor fill = colorOf(a);
                p.fillRect(cell, fill);
                if (a < 0) continue;
                // Dark text on the light middle of the scale, white on its ends.
                p.setPen(fill.lightness() > 150 ? QColor(20, 20, 20) : QColor(Qt::white));
                p.drawText(cell, Qt::AlignCenter, QString::number(a, 'f', 2));
            }
        }
        x += panelWidth(i) + kGap;
    }
}

bool AccuracyHeatmap::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(e);
        const Hit hit = cellAt(help->pos());
        if (hit.panel >= 0) {
            QToolTip::showText(help->globalPos(), describe(hit.panel, hit.row, hit.column), this);
            return true;
        }   // elsewhere: the widget's own tooltip
    }
    return QWidget::event(e);
}
