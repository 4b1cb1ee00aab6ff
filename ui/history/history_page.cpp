#include "ui/history/history_page.h"

#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/bridge/store_client.h"
#include "ui/history/comparison_list.h"
#include "ui/history/sweep_list.h"
#include "ui/history/session_detail.h"
#include "ui/models/session_table_model.h"
#include "widgets/token_stream_view.h"

namespace {

// The date filter's choices: days back from now (0: any time).
constexpr int kDateDays[] = {0, 1, 7, 30};

// Writes `text` to `path`; the reason when it cannot.
QString writeFile(const QString& path, const std::string& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return f.errorString();
    if (f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) return f.errorString();
    return {};
}

}  // namespace

HistoryPage::HistoryPage(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("historyTabs"));
    m_tabs->addTab(buildSessionsTab(), tr("Sessions"));
    m_comparisons = new ComparisonList(store, m_tabs);
    m_tabs->addTab(m_comparisons, tr("Comparisons"));
    m_sweeps = new SweepList(store, m_tabs);
    m_tabs->addTab(m_sweeps, tr("Sweeps"));
    layout->addWidget(m_tabs);
    connect(m_store, &StoreClient::opened, this, &HistoryPage::refresh);
}

QWidget* HistoryPage::buildSessionsTab() {
    auto* tab = new QWidget(this);
    auto* layout = new QVBoxLayout(tab);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* filters = new QHBoxLayout();
    m_search = new QLineEdit(tab);
    m_search->setObjectName(QStringLiteral("historySearch"));
    m_search->setPlaceholderText(tr("Search the messages (every word must appear in one message)"));
    m_search->setClearButtonEnabled(true);
    m_model = new QComboBox(tab);
    m_model->setObjectName(QStringLiteral("historyModelFilter"));
    m_variant = new QComboBox(tab);
    m_variant->setObjectName(QStringLiteral("historyVariantFilter"));
    m_date = new QComboBox(tab);
    m_date->setObjectName(QStringLiteral("historyDateFilter"));
    m_date->addItems({tr("any time"), tr("today"), tr("last 7 days"), tr("last 30 days")});
    for (QComboBox* c : {m_model, m_variant}) {
        c->addItem(c == m_model ? tr("any model") : tr("any variant"), QString());
        c->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    }
    filters->addWidget(m_search, 1);
    filters->addWidget(m_model);
    filters->addWidget(m_variant);
    filters->addWidget(m_date);
    layout->addLayout(filters);

    // Typing runs a search per pause, not per key.
    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(250);
    connect(m_searchDelay, &QTimer::timeout, this, &HistoryPage::refresh);
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_search, &QLineEdit::textChanged, this, &HistoryPage::markSearchedWords);
    for (QComboBox* c : {m_model, m_variant, m_date})
        connect(c, &QComboBox::activated, this, &HistoryPage::refresh);

    // The table on top at full width (the title needs it), the selected session below.
    auto* split = new QSplitter(Qt::Vertical, tab);
    auto* left = new QWidget(split);
    auto* leftCol = new QVBoxLayout(left);
    leftCol->setContentsMargins(0, 0, 0, 0);
    m_sessions = new SessionTableModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_sessions);
    m_proxy->setSortRole(SessionTableModel::SortRole);
    m_table = new QTableView(left);
    m_table->setObjectName(QStringLiteral("historyTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SessionTableModel::Date, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    QHeaderView* header = m_table->horizontalHeader();
    for (int c : {SessionTableModel::Date, SessionTableModel::Turns, SessionTableModel::Tokens, SessionTableModel::DecodeSpeed})
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(SessionTableModel::Title, QHeaderView::Stretch);
    // The title says most: model and configuration get what is left (their tooltips and the
    // detail header say them in full).
    header->resizeSection(SessionTableModel::Model, 110);
    header->resizeSection(SessionTableModel::Configuration, 120);
    m_table->setWordWrap(false);
    leftCol->addWidget(m_table, 1);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &HistoryPage::onSelectionChanged);
    connect(m_table, &QTableView::doubleClicked, this, [this] {
        if (selectedSessionId()) emit continueRequested(selectedSessionId());
    });

    auto* buttons = new QHBoxLayout();
    m_continue = new QPushButton(tr("Continue"), left);
    m_continue->setObjectName(QStringLiteral("historyContinue"));
    m_continue->setToolTip(tr("Reopen it in the chat with its configuration (reloading the model if it differs); "
                              "new turns are recorded into this session."));
    m_delete = new QPushButton(tr("Delete…"), left);
    m_delete->setObjectName(QStringLiteral("historyDelete"));
    m_export = new QPushButton(tr("Export"), left);
    m_export->setObjectName(QStringLiteral("historyExport"));
    auto* menu = new QMenu(m_export);
    menu->addAction(tr("Session as JSON…"), this, [this] { askExport(ExportKind::Json); });
    menu->addAction(tr("Runs as CSV…"), this, [this] { askExport(ExportKind::RunsCsv); });
    menu->addAction(tr("Samples as CSV…"), this, [this] { askExport(ExportKind::SamplesCsv); });
    menu->addAction(tr("Transcript as Markdown…"), this, [this] { askExport(ExportKind::Markdown); });
    m_export->setMenu(menu);
    auto* reload = new QPushButton(tr("Refresh"), left);
    connect(reload, &QPushButton::clicked, this, &HistoryPage::refresh);
    connect(m_continue, &QPushButton::clicked, this, [this] {
        if (selectedSessionId()) emit continueRequested(selectedSessionId());
    });
    connect(m_delete, &QPushButton::clicked, this, &HistoryPage::askDelete);
    for (QPushButton* b : {m_continue, m_delete, m_export}) buttons->addWidget(b);
    buttons->addStretch(1);
    buttons->addWidget(reload);
    leftCol->addLayout(buttons);
    m_status = new QLabel(left);
    m_status->setObjectName(QStringLiteral("historyStatus"));
    m_status->setWordWrap(true);
    leftCol->addWidget(m_status);

    m_detail = new SessionDetail(split);
    split->addWidget(left);
    split->addWidget(m_detail);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    updateButtons();
    return tab;
}

void HistoryPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refresh();  // sessions recorded since the page was last shown
}

QString HistoryPage::statusText() const { return m_status->text(); }

workbench::SessionFilter HistoryPage::currentFilter() const {
    workbench::SessionFilter f;
    f.search_text = m_search->text().trimmed().toStdString();
    f.model = m_model->currentData().toString().toStdString();
    f.variant = m_variant->currentData().toString().toStdString();
    f.include_comparisons = false;  // they have their own tab
    const int days = kDateDays[std::clamp(m_date->currentIndex(), 0, 3)];
    if (days > 0) {
        const QDateTime from = QDateTime(QDate::currentDate().addDays(1 - days), QTime(0, 0));
        f.created_from_unix_ms = from.toMSecsSinceEpoch();
    }
    return f;
}

void HistoryPage::refresh() {
    if (!m_store->isOpen()) {
        m_status->setText(m_store->offReason().isEmpty() ? tr("Opening the history…")
                                                         : tr("History is off: %1").arg(m_store->offReason()));
        return;
    }
    loadFilterChoices();
    const int generation = ++m_listGeneration;
    const workbench::SessionFilter filter = currentFilter();
    m_store->call<std::vector<workbench::SessionSummary>>(
        [filter](workbench::Store& s) { return s.list_sessions(filter); }, this,
        [this, generation](const workbench::Result<std::vector<workbench::SessionSummary>>& result) {
            if (generation != m_listGeneration) return;
            if (!result.ok()) {
                m_status->setText(QString::fromStdString(result.status().message()));
                emit listLoaded(0);
                return;
            }
            const workbench::RowId keep = selectedSessionId() ? selectedSessionId() : m_shownId;
            // The session on show grew or changed since it was read (a turn recorded meanwhile):
            // read it again rather than keep showing the old figures.
            if (m_shownId) {
                const int before = m_sessions->rowOf(m_shownId);
                const auto now = std::find_if(result->begin(), result->end(), [&](const auto& s) { return s.id == m_shownId; });
                const workbench::SessionSummary* was = before >= 0 ? m_sessions->sessionAt(before) : nullptr;
                if (was && now != result->end() &&
                    (was->updated_unix_ms != now->updated_unix_ms || was->n_turns != now->n_turns ||
                     was->n_tokens_generated != now->n_tokens_generated || was->n_configurations != now->n_configurations))
                    m_shownId = 0;
            }
            m_sessions->setSessions(*result);
            m_status->setText(tr("%n session(s) in %1", nullptr, static_cast<int>(result->size())).arg(m_store->path()));
            if (keep && m_sessions->rowOf(keep) >= 0) selectSession(keep);
            updateButtons();
            emit listLoaded(static_cast<int>(result->size()));
        });
}

void HistoryPage::loadFilterChoices() {
    m_store->call<std::vector<workbench::ConfigurationRecord>>(
        [](workbench::Store& s) { return s.list_configurations(); }, this,
        [this](const workbench::Result<std::vector<workbench::ConfigurationRecord>>& result) {
            if (!result.ok()) return;
            QSet<QString> models, variants;
            for (const auto& c : *result) {
                models.insert(QString::fromStdString(c.model));
                variants.insert(QString::fromStdString(c.variant));
            }
            // Refill keeping the choice: the first entry is "any".
            auto refill = [](QComboBox* combo, QSet<QString> values) {
                const QString current = combo->currentData().toString();
                for (int i = 1; i < combo->count(); ++i) values.insert(combo->itemData(i).toString());
                QStringList sorted(values.begin(), values.end());
                sorted.sort();
                while (combo->count() > 1) combo->removeItem(1);
                for (const QString& v : sorted) combo->addItem(v, v);
                combo->setCurrentIndex(std::max(0, combo->findData(current)));
            };
            refill(m_model, models);
            refill(m_variant, variants);
        });
}

workbench::RowId HistoryPage::selectedSessionId() const {
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) return 0;
    return rows.first().data(SessionTableModel::IdRole).toLongLong();
}

void HistoryPage::selectSession(workbench::RowId sessionId) {
    const int row = m_sessions->rowOf(sessionId);
    if (row < 0) return;
    const QModelIndex index = m_proxy->mapFromSource(m_sessions->index(row, 0));
    if (selectedSessionId() == sessionId && m_shownId == sessionId) return;
    m_table->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(index);
}

void HistoryPage::markSearchedWords() {
    // The words searched for, marked where they occur in the session on show.
    m_detail->transcript()->highlightWords(m_search->text().split(QLatin1Char(' '), Qt::SkipEmptyParts));
}

void HistoryPage::onSelectionChanged() {
    updateButtons();
    const workbench::RowId id = selectedSessionId();
    if (!id || id == m_shownId) return;
    const int generation = ++m_detailGeneration;
    m_store->call<SessionData>([id](workbench::Store& s) { return SessionData::load(s, id); }, this,
                               [this, id, generation](const workbench::Result<SessionData>& result) {
                                   if (generation != m_detailGeneration) return;
                                   if (!result.ok()) {
                                       m_detail->clear(QString::fromStdString(result.status().message()));
                                       return;
                                   }
                                   m_shownId = id;
                                   m_detail->showSession(*result);
                                   markSearchedWords();
                                   emit sessionShown(id);
                               });
}

void HistoryPage::updateButtons() {
    const bool any = selectedSessionId() != 0;
    for (QPushButton* b : {m_continue, m_delete, m_export}) b->setEnabled(any);
}

void HistoryPage::askExport(ExportKind kind) {
    const workbench::RowId id = selectedSessionId();
    if (!id) return;
    static const char* const kSuffix[] = {"json", "runs.csv", "samples.csv", "md"};
    static const char* const kFilter[] = {"JSON (*.json)", "CSV (*.csv)", "CSV (*.csv)", "Markdown (*.md)"};
    const int k = static_cast<int>(kind);
    const QString suggested = QStringLiteral("session-%1.%2").arg(id).arg(QString::fromLatin1(kSuffix[k]));
    const QString path = QFileDialog::getSaveFileName(this, tr("Export the session"), suggested, tr(kFilter[k]));
    if (!path.isEmpty()) exportSession(id, kind, path);
}

void HistoryPage::exportSession(workbench::RowId sessionId, ExportKind kind, const QString& path) {
    m_store->call<bool>(
        [sessionId, kind, path](workbench::Store& s) -> workbench::Result<bool> {
            workbench::Result<std::string> text = kind == ExportKind::Json       ? s.export_session_json(sessionId)
                                                  : kind == ExportKind::RunsCsv  ? s.export_runs_csv(sessionId)
                                                  : kind == ExportKind::SamplesCsv ? s.export_samples_csv(sessionId)
                                                                                 : s.export_session_markdown(sessionId);
            if (!text.ok()) return text.status();
            const QString failure = writeFile(path, *text);
            if (!failure.isEmpty())
                return workbench::error(workbench::StatusCode::io_error, (path + QStringLiteral(": ") + failure).toStdString());
            return true;
        },
        this, [this, path](const workbench::Result<bool>& result) {
            const QString message = result.ok() ? tr("Exported to %1").arg(path)
                                                : QString::fromStdString(result.status().message());
            m_status->setText(message);
            emit exported(path, result.ok(), message);
        });
}

void HistoryPage::askDelete() {
    const workbench::RowId id = selectedSessionId();
    if (!id) return;
    const auto* s = m_sessions->sessionAt(m_sessions->rowOf(id));
    const QString title = s ? QString::fromStdString(s->title).left(80) : QString::number(id);
    if (QMessageBox::question(this, tr("Delete the session"),
                              tr("Delete \"%1\" with its messages, runs and samples? This cannot be undone.").arg(title),
                              QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Yes)
        return;
    deleteSession(id);
}

void HistoryPage::deleteSession(workbench::RowId sessionId) {
    m_store->call<bool>(
        [sessionId](workbench::Store& s) -> workbench::Result<bool> {
            if (auto st = s.delete_session(sessionId); !st.ok()) return st;
            return true;
        },
        this, [this, sessionId](const workbench::Result<bool>& result) {
            m_status->setText(result.ok() ? tr("Deleted session %1.").arg(sessionId)
                                          : QString::fromStdString(result.status().message()));
            if (result.ok() && m_shownId == sessionId) {
                m_shownId = 0;
                m_detail->clear();
            }
            emit deleted(sessionId, result.ok());
            refresh();
        });
}
