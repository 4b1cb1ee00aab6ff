#include "ui/compare/compare_table.h"

#include <QHeaderView>

#include "ui/compare/compare_remote.h"
#include "ui/format.h"

namespace {

struct RowSpec {
    const char* label;
    bool lowerIsBetter;
    std::optional<double> CompareFigures::*field;
};

// The rows in display order; "better" decides the highlight.
const RowSpec kRows[CompareTable::RowCount] = {
    {"TTFT (ms)", true, &CompareFigures::ttftMs},
    {"TPOT (ms)", true, &CompareFigures::tpotMs},
    {"ITL p50 (ms)", true, &CompareFigures::itlP50Ms},
    {"ITL p90 (ms)", true, &CompareFigures::itlP90Ms},
    {"Decode tok/s", false, &CompareFigures::decodeTokS},
    {"Drafts accepted", false, &CompareFigures::acceptance},
    {"KV bytes at end", true, &CompareFigures::kvBytes},
    {"KV bytes read / token", true, &CompareFigures::kvReadPerToken},
    {"Perplexity", true, &CompareFigures::perplexity},
    {"ΔPPL vs baseline (%)", true, &CompareFigures::deltaPplPct},
    {"KL vs baseline", true, &CompareFigures::klMean},
    {"Top-1 agreement", false, &CompareFigures::top1},
    {"Retrieval (passkey, multi-key)", false, &CompareFigures::retrieval},
};

QString format(int row, double v) {
    switch (row) {
    case CompareTable::KvBytes:
    case CompareTable::KvRead: return fmt::bytes(v);
    case CompareTable::DeltaPpl: return QStringLiteral("%1%2").arg(v >= 0 ? QStringLiteral("+") : QString()).arg(v, 0, 'f', 2);
    case CompareTable::Kl: return QString::number(v, 'f', 5);
    case CompareTable::Acceptance:
    case CompareTable::Retrieval:
    case CompareTable::Top1: return QStringLiteral("%1%").arg(100 * v, 0, 'f', 1);
    case CompareTable::Perplexity: return QString::number(v, 'f', 3);
    default: return QString::number(v, 'f', v >= 100 ? 0 : 1);
    }
}

}  // namespace

CompareFigures CompareFigures::named(const QString& name) {
    CompareFigures f;
    f.name = name;
    return f;
}

CompareFigures CompareFigures::fromRun(const QString& name, const workbench::RunRecord& run) {
    CompareFigures f;
    f.name = name;
    f.ttftMs = run.ttft_ms;
    if (run.decode_tok_s && *run.decode_tok_s > 0) f.tpotMs = 1000.0 / *run.decode_tok_s;
    f.itlP50Ms = run.itl_ms_p50;
    f.itlP90Ms = run.itl_ms_p90;
    f.decodeTokS = run.decode_tok_s;
    f.acceptance = run.acceptance_rate();
    // A server's cache is its own: the 0 a remote run stores means "not reported", not "empty".
    f.remote = run.provenance.backend == "remote";
    if (f.remote) return f;
    f.kvBytes = static_cast<double>(run.kv_bytes);
    if (run.kv_bytes_read_per_token) f.kvReadPerToken = static_cast<double>(run.kv_bytes_read_per_token);
    return f;
}

CompareFigures CompareFigures::fromRuns(const QString& name, const std::vector<workbench::RunRecord>& runs) {
    CompareFigures mean = named(name);
    if (runs.empty()) return mean;
    std::vector<CompareFigures> each;
    for (const workbench::RunRecord& run : runs) each.push_back(fromRun(name, run));
    mean.remote = each.front().remote;
    for (std::optional<double> CompareFigures::*field :
         {&CompareFigures::ttftMs, &CompareFigures::tpotMs, &CompareFigures::itlP50Ms, &CompareFigures::itlP90Ms,
          &CompareFigures::decodeTokS, &CompareFigures::acceptance, &CompareFigures::kvBytes, &CompareFigures::kvReadPerToken}) {
        double sum = 0;
        int n = 0;
        for (const CompareFigures& f : each)
            if (f.*field) {
                sum += *(f.*field);
                ++n;
            }
        if (n > 0) mean.*field = sum / n;
    }
    return mean;
}

void CompareFigures::setQuality(const workbench::EvaluationRecord& e, std::optional<double> baselinePerplexity) {
    perplexity = e.perplexity;
    klMean = e.kl_mean;
    top1 = e.top1_agreement;
    retrieval = e.retrieval_accuracy;
    if (e.perplexity && baselinePerplexity && *baselinePerplexity > 0)
        deltaPplPct = (*e.perplexity / *baselinePerplexity - 1.0) * 100.0;
}

CompareTable::CompareTable(QWidget* parent) : QTableWidget(parent) {
    setObjectName(QStringLiteral("compareMetrics"));
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    setRowCount(RowCount);
    QStringList labels;
    for (const RowSpec& r : kRows) labels << tr(r.label);
    setVerticalHeaderLabels(labels);
}

bool CompareTable::hasQuality() const {
    for (const CompareFigures& c : m_columns)
        if (c.perplexity) return true;
    return false;
}

void CompareTable::setFigures(const QList<CompareFigures>& columns) {
    m_columns = columns;
    setColumnCount(static_cast<int>(columns.size()));
    // Short headers keep the numbers readable; the full configuration is the tooltip.
    for (int col = 0; col < columns.size(); ++col) {
        auto* header = new QTableWidgetItem(QStringLiteral("#%1").arg(col + 1));
        header->setToolTip(columns[col].name);
        setHorizontalHeaderItem(col, header);
    }
    m_best.clear();
    for (int row = 0; row < RowCount; ++row) {
        const RowSpec& spec = kRows[row];
        int best = -1;
        int distinct = 0;
        for (int col = 0; col < columns.size(); ++col) {
            const std::optional<double>& v = columns[col].*spec.field;
            if (!v) continue;
            if (best < 0) {
                best = col;
                continue;
            }
            const double b = *(columns[best].*spec.field);
            if (*v != b) ++distinct;
            if (spec.lowerIsBetter ? *v < b : *v > b) best = col;
        }
        if (distinct == 0) best = -1;  // nothing to pick between
        m_best.append(best);
        for (int col = 0; col < columns.size(); ++col) {
            const std::optional<double>& v = columns[col].*spec.field;
            QString text = v ? format(row, *v) : QStringLiteral("—");
            if (!v && columns[col].remote)
                text = row >= Perplexity ? compareremote::notAvailable()
                       : row == KvBytes || row == KvRead ? compareremote::notReported() : text;
            auto* item = new QTableWidgetItem(text);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (col == best) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
                item->setBackground(QColor(0xd8, 0xf0, 0xd8));
            }
            setItem(row, col, item);
        }
        // The quality rows stay hidden until an evaluation fills them, the acceptance row unless a column drafted.
        const bool anyDrafted = std::any_of(columns.begin(), columns.end(), [](const CompareFigures& c) { return c.acceptance.has_value(); });
        setRowHidden(row, (row >= Perplexity && !hasQuality()) || (row == Acceptance && !anyDrafted));
    }
}
