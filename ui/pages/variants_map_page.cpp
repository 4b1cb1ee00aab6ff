#include "ui/pages/variants_map_page.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "ui/format.h"
#include "ui/pages/retrieval_heatmap_grid.h"
#include "ui/pages/sweep_panel.h"
#include "widgets/accuracy_heatmap.h"
#include "widgets/variants_scatter.h"
#include "workbench/pareto.h"

namespace {
enum Measure { DeltaPpl, Kl, Top1, Retrieval };

std::optional<double> number(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(QLatin1String(key));
    return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
}
}  // namespace

VariantsMapPage::VariantsMapPage(EngineClient* chat, StoreClient* store, QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("variantsMapPage"));
    auto* layout = new QVBoxLayout(this);
    if (chat) {
        m_sweep = new SweepPanel(chat, store, this);
        layout->addWidget(m_sweep);
        connect(m_sweep, &SweepPanel::started, this, [this](const QString& title) {
            m_rows.clear();
            m_failed = 0;
            m_title = title;
            m_selected = -1;
            m_open->setEnabled(false);
            refresh();
        });
        connect(m_sweep, &SweepPanel::rowMeasured, this, &VariantsMapPage::appendRow);
        connect(m_sweep, &SweepPanel::finished, this, [this] { m_open->setEnabled(true); });
        connect(m_sweep, &SweepPanel::statusChanged, this, [this](const QString& text) { m_status->setText(text); });
    }
    auto* bar = new QHBoxLayout();
    m_open = new QPushButton(tr("Open sweep…"), this);
    m_open->setObjectName(QStringLiteral("variantsOpen"));
    m_open->setToolTip(tr("A sweep's rows: workbench-cli sweep --preset standard [--retrieval] -o sweep.jsonl"));
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a sweep"), QString(), tr("Sweep rows (*.jsonl);;All files (*)"));
        if (!path.isEmpty()) loadSweep(path);
    });
    bar->addWidget(m_open);
    bar->addWidget(new QLabel(tr("Quality:"), this));
    m_quality = new QComboBox(this);
    m_quality->setObjectName(QStringLiteral("variantsQuality"));
    m_quality->addItem(tr("ΔPPL vs full attention (%)"), DeltaPpl);
    m_quality->addItem(tr("KL vs full attention"), Kl);
    m_quality->addItem(tr("Top-1 agreement"), Top1);
    m_quality->addItem(tr("Retrieval accuracy"), Retrieval);
    connect(m_quality, &QComboBox::currentIndexChanged, this, &VariantsMapPage::refresh);
    bar->addWidget(m_quality);
    m_status = new QLabel(tr("Run a sweep, or open a sweep's rows (workbench-cli sweep -o FILE), to draw the map."), this);
    m_status->setObjectName(QStringLiteral("variantsStatus"));
    m_status->setWordWrap(true);
    bar->addWidget(m_status, 1);
    layout->addLayout(bar);
    m_scatter = new VariantsScatter(this);
    m_scatter->setMinimumHeight(360);
    layout->addWidget(m_scatter, 1);
    auto* selected = new QHBoxLayout();
    m_details = new QLabel(tr("Click a point to select its configuration."), this);
    m_details->setObjectName(QStringLiteral("variantsDetails"));
    m_details->setTextFormat(Qt::RichText);
    m_details->setWordWrap(true);
    selected->addWidget(m_details, 1);
    m_loadInChat = new QPushButton(tr("Load in Chat"), this);
    m_loadInChat->setObjectName(QStringLiteral("variantsLoadInChat"));
    m_addToCompare = new QPushButton(tr("Add to Compare"), this);
    m_addToCompare->setObjectName(QStringLiteral("variantsAddToCompare"));
    for (QPushButton* b : {m_loadInChat, m_addToCompare}) {
        b->setEnabled(false);
        selected->addWidget(b);
    }
    connect(m_loadInChat, &QPushButton::clicked, this, [this] {
        if (m_selected >= 0) emit loadInChatRequested(m_rows[m_selected].attention, m_rows[m_selected].kvTypes, m_rows[m_selected].weights);
    });
    connect(m_addToCompare, &QPushButton::clicked, this, [this] {
        if (m_selected >= 0) emit addToCompareRequested(m_rows[m_selected].attention, m_rows[m_selected].kvTypes, m_rows[m_selected].weights);
    });
    layout->addLayout(selected);
    m_heatmap = new AccuracyHeatmap(this);
    m_heatmap->setObjectName(QStringLiteral("variantsHeatmap"));
    m_heatmap->setToolTip(tr("Retrieval accuracy by prompt length and depth, beside full attention's on the same prompts"));
    m_heatmap->hide();
    layout->addWidget(m_heatmap);
    connect(m_scatter, &VariantsScatter::pointClicked, this, [this](int point) { selectRow(m_drawn.value(point, -1)); });
}

bool VariantsMapPage::loadSweep(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_status->setText(tr("Cannot read %1: %2").arg(path, file.errorString()));
        return false;
    }
    QList<QByteArray> lines;
    while (!file.atEnd()) lines.append(file.readLine());
    return setRows(QFileInfo(path).fileName(), lines);
}

bool VariantsMapPage::showRows(const QString& title, const QStringList& rows) {
    if (m_sweep && m_sweep->isRunning()) {   // its rows are filling the map
        m_status->setText(tr("A sweep is running: stop it to open %1.").arg(title));
        return false;
    }
    QList<QByteArray> lines;
    for (const QString& row : rows) lines.append(row.toUtf8());
    return setRows(title, lines);
}

bool VariantsMapPage::setRows(const QString& title, const QList<QByteArray>& lines) {
    QList<Row> rows;
    int failed = 0;
    for (int line = 1; line <= lines.size(); ++line) {
        const QByteArray text = lines[line - 1].trimmed();
        if (text.isEmpty()) continue;
        const QJsonDocument doc = QJsonDocument::fromJson(text);
        if (!doc.isObject()) {
            m_status->setText(tr("%1, line %2: not a sweep row (one JSON object a line, as sweep -o writes)").arg(title).arg(line));
            return false;
        }
        if (std::optional<Row> r = parseRow(doc.object())) rows.append(*r);
        else ++failed;
    }
    if (rows.isEmpty()) {
        m_status->setText(tr("%1 has no measured row (%2 failed).").arg(title).arg(failed));
        return false;
    }
    m_rows = rows;
    m_failed = failed;
    m_title = title;
    m_selected = -1;
    showCount();
    const bool anyRetrieval = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.retrieval.has_value(); });
    if (!anyRetrieval && m_quality->currentData().toInt() == Retrieval) m_quality->setCurrentIndex(0);
    refresh();
    return true;
}

std::optional<VariantsMapPage::Row> VariantsMapPage::parseRow(const QJsonObject& o) {
    if (o.value(QStringLiteral("status")).toString() != QStringLiteral("ok")) return std::nullopt;
    Row r;
    r.config = o.value(QStringLiteral("config")).toString();
    r.attention = o.value(QStringLiteral("attention")).toString();
    r.kvTypes = o.value(QStringLiteral("kv_type")).toString();
    r.weightsShown = o.value(QStringLiteral("weights")).toString();
    // Weights converted at load only when the row asked (else the file's, shown as their type).
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("--weights\\s+(\\S+)")).match(r.config);
    if (m.hasMatch()) r.weights = m.captured(1);
    r.kvBytes = o.value(QStringLiteral("kv_bytes")).toDouble();
    r.deltaPpl = number(o, "delta_ppl_pct");
    r.kl = number(o, "kl");
    r.top1 = number(o, "top1");
    r.retrieval = number(o, "retrieval_accuracy");
    r.decodeTokS = number(o, "decode_tok_s");
    r.prefillTokS = number(o, "prefill_tok_s");
    r.decodeMs = number(o, "decode_ms");
    r.decodeMsPredicted = number(o, "decode_ms_predicted");
    r.label = r.config.isEmpty() ? r.attention : r.config;
    if (o.value(QStringLiteral("backend")).toString() == QStringLiteral("remote")) {
        r.remote = true;
        r.remoteUrl = o.value(QStringLiteral("base_url")).toString();
        r.kvMeasuredPeak = number(o, "kv_bytes_measured_peak");
        r.label = tr("%1 server%2 · KV %3")
                      .arg(o.value(QStringLiteral("server")).toString(),
                           r.attention == QStringLiteral("full") ? QString() : QStringLiteral(" · ") + r.attention, r.kvTypes);
    }
    r.retrievalGrid = retrievalHeatmapGrid(r.label, o.value(QStringLiteral("retrieval_cells")));
    return r;
}

void VariantsMapPage::appendRow(const QString& json) {
    const QJsonDocument doc = QJsonDocument::fromJson(json.toUtf8());
    if (std::optional<Row> r = parseRow(doc.object())) m_rows.append(*r);
    else ++m_failed;
    showCount();
    refresh();
}

void VariantsMapPage::showCount() {
    m_status->setText(tr("%1: %2 configurations%3").arg(m_title).arg(m_rows.size())
                          .arg(m_failed ? tr(" (%1 failed rows not drawn)").arg(m_failed) : QString()));
}

std::optional<double> VariantsMapPage::quality(const Row& row) const {
    switch (m_quality->currentData().toInt()) {
        case Kl: return row.kl;
        case Top1: return row.top1 ? std::optional<double>(*row.top1 * 100) : std::nullopt;
        case Retrieval: return row.retrieval ? std::optional<double>(*row.retrieval * 100) : std::nullopt;
        default: return row.deltaPpl;
    }
}

void VariantsMapPage::refresh() {
    const int measure = m_quality->currentData().toInt();
    const bool higherIsBetter = measure == Top1 || measure == Retrieval;
    QList<ScatterPoint> points;
    std::vector<double> cost, value;
    m_drawn.clear();
    for (int i = 0; i < m_rows.size(); ++i) {
        const Row& r = m_rows[i];
        const std::optional<double> q = quality(r);
        if (!q || r.kvBytes <= 0) continue;
        ScatterPoint p;
        p.label = r.label;
        p.kvBytes = r.kvBytes;
        p.quality = *q;
        p.decodeTokS = r.decodeTokS;
        // The figures the row has (a remote row has retrieval alone).
        QStringList figures = {tr("KV %1").arg(fmt::bytes(r.kvBytes))};
        if (r.deltaPpl) figures << tr("ΔPPL %1 %").arg(*r.deltaPpl, 0, 'f', 2);
        if (r.kl) figures << tr("KL %1").arg(*r.kl, 0, 'f', 4);
        if (r.top1) figures << tr("top-1 %1 %").arg(*r.top1 * 100, 0, 'f', 1);
        if (r.retrieval) figures << tr("retrieval %1 %").arg(*r.retrieval * 100, 0, 'f', 0);
        if (r.decodeTokS) figures << tr("decode %1 tok/s").arg(*r.decodeTokS, 0, 'f', 1);
        if (r.kvMeasuredPeak) figures << tr("its /metrics peak %1").arg(fmt::bytes(*r.kvMeasuredPeak));
        if (r.remote) figures << tr("remote, %1").arg(r.remoteUrl);
        p.details = figures.join(QStringLiteral(" · "));
        // What the bytes allow beside what was measured: a variant slower than its bytes shows it.
        if (r.decodeMs && r.decodeMsPredicted && *r.decodeMsPredicted > 0)
            p.details += tr(" (%1 ms a token; its bytes predict %2 ms: %3×)")
                             .arg(*r.decodeMs, 0, 'f', 2)
                             .arg(*r.decodeMsPredicted, 0, 'f', 2)
                             .arg(*r.decodeMs / *r.decodeMsPredicted, 0, 'f', 2);
        points.append(p);
        cost.push_back(p.kvBytes);
        value.push_back(p.quality);
        m_drawn.append(i);
    }
    QList<int> front;
    for (size_t i : workbench::pareto_front(cost, value, higherIsBetter)) front.append(static_cast<int>(i));
    // A broken configuration sits on the axis's edge (its figure in the tooltip), not stretching it.
    if (const std::optional<double> cap = workbench::quality_axis_cap(value, higherIsBetter))
        for (ScatterPoint& p : points)
            if (higherIsBetter ? p.quality < *cap : p.quality > *cap) {
                p.details += tr(" · drawn at the axis's edge (%1)").arg(p.quality, 0, 'g', 6);
                p.quality = *cap;
            }
    m_scatter->setPoints(points, front, m_quality->currentText() + (higherIsBetter ? tr(" ↑ better") : tr(" ↓ better")));
    selectRow(m_selected);
}

void VariantsMapPage::selectRow(int index) {
    m_selected = index >= 0 && index < m_rows.size() ? index : -1;
    // A remote server's row has no local configuration to load.
    for (QPushButton* b : {m_loadInChat, m_addToCompare}) b->setEnabled(m_selected >= 0 && !m_rows[m_selected].remote);
    m_scatter->setSelected(static_cast<int>(m_drawn.indexOf(m_selected)));
    if (m_selected < 0) {
        m_details->setText(tr("Click a point to select its configuration."));
        m_heatmap->hide();
        return;
    }
    const Row& r = m_rows[m_selected];
    // The selection's retrieval beside full attention's (the sweep's first "full" row).
    QList<HeatmapGrid> panels;
    if (!r.retrievalGrid.rows.isEmpty()) {
        panels.append(r.retrievalGrid);
        for (const Row& other : m_rows)
            if (&other != &r && other.config == QStringLiteral("full") && !other.retrievalGrid.rows.isEmpty()) {
                panels.append(other.retrievalGrid);
                break;
            }
    }
    m_heatmap->setPanels(panels);
    m_heatmap->setVisible(!panels.isEmpty());
    if (r.remote) {
        const QString measured = r.kvMeasuredPeak ? tr(", its /metrics showed %1 at the peak").arg(fmt::bytes(*r.kvMeasuredPeak)) : QString();
        m_details->setText(tr("<b>%1</b> · KV %2 (predicted for its KV type%3) · %4: a remote server's row, measured through its API")
                               .arg(r.label.toHtmlEscaped(), fmt::bytes(r.kvBytes), measured, r.remoteUrl.toHtmlEscaped()));
        return;
    }
    m_details->setText(tr("<b>%1</b> · KV %2 · weights %3").arg(r.label.toHtmlEscaped(), fmt::bytes(r.kvBytes), r.weightsShown.toHtmlEscaped()));
}

QString VariantsMapPage::statusText() const { return m_status->text(); }
