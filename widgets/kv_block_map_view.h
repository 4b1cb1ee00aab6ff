// The KV block map: one row per model layer, one column per block of tokens, each cell coloured
// by what that block is to that layer right now (live, shared with another sequence, evicted by
// a sliding window, pooled by compression, skipped by top-k in the last step, borrowed from
// another layer). A picture of where a variant's memory savings come from. Plain data in: the
// cell states as small integers in the order of KvBlockCell.
#pragma once

#include <QVector>
#include <QWidget>

enum class KvBlockCell : quint8 { empty, live, shared, evicted, compressed, skipped, borrowed };

class KvBlockMapView : public QWidget {
    Q_OBJECT
public:
    explicit KvBlockMapView(QWidget* parent = nullptr);

    // cells: [layers][blocks] row-major. A size mismatch clears the map.
    void setMap(int layers, int blocks, int blockTokens, const QVector<KvBlockCell>& cells);
    void clear();

    int layers() const { return m_layers; }
    int blocks() const { return m_blocks; }
    KvBlockCell cell(int layer, int block) const;
    // "layer 3, block 5 (tokens 80–95): evicted by the sliding window"
    QString describe(int layer, int block) const;
    // On a dark palette (`dark`) the empty and evicted greys are dimmed so filled cells stand out.
    static QColor colorOf(KvBlockCell c, bool dark = false);
    static QString nameOf(KvBlockCell c);
    // The cell under a widget position, or {-1, -1}.
    QPoint cellAt(const QPoint& pos) const;
    QSize sizeHint() const override { return {480, 260}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;   // tooltips

private:
    QRect gridRect() const;
    int m_layers = 0, m_blocks = 0, m_blockTokens = 16;
    QVector<KvBlockCell> m_cells;
};
