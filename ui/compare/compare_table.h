// The metrics table of a comparison: one column per configuration, one row per figure (TTFT,
// TPOT, ITL p50/p90, decode speed, speculative decoding's draft acceptance when a column drafted, KV bytes at the end, KV bytes read per token, and after an
// evaluation PPL, ΔPPL, KL, top-1, retrieval accuracy), the best value of each row in bold on green. A remote server's
// column has speed figures only: its KV rows say "not reported", its quality rows "not available
// for a remote". Used by the Compare page and by History's saved comparisons. Plain numbers in;
// GUI thread only.
#pragma once

#include <QTableWidget>
#include <optional>
#include <vector>

#include "workbench/store.h"

struct CompareFigures {
    QString name;  // the column header: the configuration in short
    std::optional<double> ttftMs, tpotMs, itlP50Ms, itlP90Ms, decodeTokS, acceptance, kvBytes, kvReadPerToken;
    std::optional<double> perplexity, deltaPplPct, klMean, top1, retrieval;
    bool remote = false;  // a remote server's column (runs with provenance backend "remote")

    // A column with no figures yet.
    static CompareFigures named(const QString& name);
    // The run's figures (TPOT from its decode speed).
    static CompareFigures fromRun(const QString& name, const workbench::RunRecord& run);
    // Over several prompts: each figure the mean of the runs that have it (ITL percentiles too:
    // the mean of each prompt's percentile). One run gives fromRun's figures exactly.
    static CompareFigures fromRuns(const QString& name, const std::vector<workbench::RunRecord>& runs);
    void setQuality(const workbench::EvaluationRecord& evaluation, std::optional<double> baselinePerplexity);
};

class CompareTable : public QTableWidget {
    Q_OBJECT
public:
    enum Row { Ttft, Tpot, ItlP50, ItlP90, DecodeSpeed, Acceptance, KvBytes, KvRead, Perplexity, DeltaPpl, Kl, Top1, Retrieval, RowCount };

    explicit CompareTable(QWidget* parent = nullptr);

    void setFigures(const QList<CompareFigures>& columns);
    // The column whose value is best in `row`; -1 when the row is empty or all equal.
    int bestColumn(Row row) const { return m_best.value(row, -1); }
    bool hasQuality() const;

private:
    QList<CompareFigures> m_columns;
    QList<int> m_best;
};
