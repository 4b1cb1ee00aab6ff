#include "ui/history/comparison_list.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/bridge/store_client.h"
#include "ui/compare/compare_table.h"
#include "ui/compare/comparison_store.h"

namespace {

QString configurationName(const workbench::ConfigurationRecord& c) {
    QString name = QStringLiteral("%1 · KV %2").arg(QString::fromStdString(c.variant), QString::fromStdString(c.kv_dtype));
    if (!c.weight_type.empty()) name += QStringLiteral(" · W %1").arg(QString::fromStdString(c.weight_type));
    return name;
}

}  // namespace

ComparisonList::ComparisonList(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* split = new QSplitter(Qt::Horizontal, this);
    m_list = new QListWidget(split);
    m_list->setObjectName(QStringLiteral("comparisonList"));
    auto* right = new QWidget(split);
    auto* col = new QVBoxLayout(right);
    col->setContentsMargins(0, 0, 0, 0);
    m_prompt = new QLabel(tr("Select a comparison."), right);
    m_prompt->setWordWrap(true);
    m_prompt->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table = new CompareTable(right);
    m_table->setObjectName(QStringLiteral("savedComparisonMetrics"));
    m_outputs = new QTextBrowser(right);
    m_outputs->setObjectName(QStringLiteral("savedComparisonOutputs"));
    col->addWidget(m_prompt);
    col->addWidget(m_table, 1);
    col->addWidget(m_outputs, 1);
    split->addWidget(m_list);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    layout->addWidget(split);
    connect(m_list, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item) showComparison(item->data(Qt::UserRole).toLongLong());
    });
    connect(m_store, &StoreClient::opened, this, &ComparisonList::refresh);
}

void ComparisonList::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refresh();
}

QString ComparisonList::outputsText() const { return m_outputs->toPlainText(); }

void ComparisonList::refresh() {
    if (!m_store->isOpen()) return;
    m_store->call<std::vector<workbench::ComparisonRecord>>(
        [](workbench::Store& s) { return s.list_comparisons(); }, this,
        [this](const workbench::Result<std::vector<workbench::ComparisonRecord>>& result) {
            if (!result.ok()) {
                m_prompt->setText(QString::fromStdString(result.status().message()));
                emit listLoaded(0);
                return;
            }
            const qint64 current = m_list->currentItem() ? m_list->currentItem()->data(Qt::UserRole).toLongLong() : 0;
            const QSignalBlocker block(m_list);
            m_list->clear();
            std::vector<workbench::ComparisonRecord> sorted = *result;
            std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
            for (const workbench::ComparisonRecord& c : sorted) {
                auto* item = new QListWidgetItem(
                    QStringLiteral("%1 · %2 configurations\n%3")
                        .arg(QDateTime::fromMSecsSinceEpoch(c.created_unix_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm")))
                        .arg(c.configuration_ids.size())
                        .arg(QString::fromStdString(c.name).left(80)),
                    m_list);
                item->setData(Qt::UserRole, QVariant::fromValue<qint64>(c.id));
                if (c.id == current) m_list->setCurrentItem(item);
            }
            emit listLoaded(m_list->count());
        });
}

void ComparisonList::showComparison(workbench::RowId comparisonId) {
    m_store->call<LoadedComparison>(
        [comparisonId](workbench::Store& s) { return comparisons::load(s, comparisonId); }, this,
        [this, comparisonId](const workbench::Result<LoadedComparison>& result) {
            if (!result.ok()) {
                m_prompt->setText(QString::fromStdString(result.status().message()));
                return;
            }
            const LoadedComparison& c = *result;
            m_prompt->setText(tr("<b>Prompt</b>: %1").arg(QString::fromStdString(c.record.prompt).toHtmlEscaped()));
            QList<CompareFigures> figures;
            QString outputs;
            for (const workbench::ConfigurationRecord& config : c.configurations) {
                const QString name = configurationName(config);
                auto run = c.runsByConfiguration.find(config.id);
                CompareFigures f = run != c.runsByConfiguration.end() ? CompareFigures::fromRun(name, run->second)
                                                                     : CompareFigures::named(name + tr(" (no run)"));
                auto evaluation = c.evaluationsByConfiguration.find(config.id);
                if (evaluation != c.evaluationsByConfiguration.end())
                    f.setQuality(evaluation->second, comparisons::baselinePerplexity(evaluation->second));
                figures.append(f);
                auto output = c.outputsByConfiguration.find(config.id);
                outputs += QStringLiteral("## %1\n\n%2\n\n").arg(name, output != c.outputsByConfiguration.end()
                                                                           ? QString::fromStdString(output->second)
                                                                           : tr("(no output)"));
            }
            m_table->setFigures(figures);
            m_outputs->setMarkdown(outputs);
            emit comparisonShown(comparisonId);
        });
}
