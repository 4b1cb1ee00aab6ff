#include "ui/history/comparison_list.h"

#include <QComboBox>
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

namespace {

QString configurationName(const workbench::ConfigurationRecord& c) {
    // A remote server's row (backend "remote"): its kind and model, as the Compare page names it.
    if (c.backend == "remote")
        return QStringLiteral("remote: %1 · %2").arg(QString::fromStdString(c.variant), QString::fromStdString(c.model));
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
    m_promptMenu = new QComboBox(right);
    m_promptMenu->setObjectName(QStringLiteral("savedComparisonPrompt"));
    m_promptMenu->setVisible(false);
    connect(m_promptMenu, &QComboBox::currentIndexChanged, this, &ComparisonList::showPrompt);
    col->addWidget(m_promptMenu);
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
QString ComparisonList::promptText() const { return m_prompt->text(); }

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
            m_loaded = *result;
            const LoadedComparison& c = *m_loaded;
            QList<CompareFigures> figures;
            for (size_t column = 0; column < c.configurations.size(); ++column) {
                const workbench::ConfigurationRecord& config = c.configurations[column];
                const QString name = configurationName(config);
                std::vector<workbench::RunRecord> runs;
                for (const auto& row : c.runs)
                    if (row[column]) runs.push_back(*row[column]);
                const QString error = QString::fromStdString(c.errors[column]);
                CompareFigures f = runs.empty() ? CompareFigures::named(name + (error.isEmpty() ? tr(" (no run)") : tr(" (failed: %1)").arg(error)))
                                                : CompareFigures::fromRuns(name + (error.isEmpty() ? QString() : tr(" (some prompts failed: %1)").arg(error)), runs);
                auto evaluation = c.evaluationsByConfiguration.find(config.id);
                if (evaluation != c.evaluationsByConfiguration.end())
                    f.setQuality(evaluation->second, comparisons::baselinePerplexity(evaluation->second));
                figures.append(f);
            }
            m_table->setFigures(figures);
            {
                const QSignalBlocker block(m_promptMenu);
                m_promptMenu->clear();
                for (size_t p = 0; p < c.prompts.size(); ++p) {
                    const QString prompt = QString::fromStdString(c.prompts[p]);
                    m_promptMenu->addItem(tr("Prompt %1 of %2: %3")
                                              .arg(p + 1)
                                              .arg(c.prompts.size())
                                              .arg(prompt.section(QLatin1Char('\n'), 0, 0).left(80)));
                }
                m_promptMenu->setCurrentIndex(0);
            }
            m_promptMenu->setVisible(c.prompts.size() > 1);
            showPrompt(0);
            emit comparisonShown(comparisonId);
        });
}

void ComparisonList::showPrompt(int prompt) {
    if (!m_loaded || prompt < 0 || prompt >= static_cast<int>(m_loaded->prompts.size())) return;
    const LoadedComparison& c = *m_loaded;
    const size_t p = static_cast<size_t>(prompt);
    m_prompt->setText(tr("<b>Prompt</b>: %1").arg(QString::fromStdString(c.prompts[p]).toHtmlEscaped()));
    QString outputs;
    for (size_t column = 0; column < c.configurations.size(); ++column) {
        const std::optional<std::string>& output = c.outputs[p][column];
        outputs += QStringLiteral("## %1\n\n%2\n\n")
                       .arg(configurationName(c.configurations[column]),
                            output ? QString::fromStdString(*output)
                                   : c.errors[column].empty() ? tr("(no output)")
                                                              : tr("(failed: %1)").arg(QString::fromStdString(c.errors[column])));
    }
    m_outputs->setMarkdown(outputs);
}
