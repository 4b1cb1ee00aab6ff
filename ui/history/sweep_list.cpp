#include "ui/history/sweep_list.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/bridge/store_client.h"

namespace {

QString describe(const workbench::SweepRecord& s) {
    const QJsonObject settings = QJsonDocument::fromJson(QByteArray::fromStdString(s.settings)).object();
    QString line = QStringLiteral("%1 · %2 · %3\n")
                       .arg(QDateTime::fromMSecsSinceEpoch(s.created_unix_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                            QString::fromStdString(s.name), QString::fromStdString(s.model));
    line += QObject::tr("%1 rows").arg(s.n_rows);
    if (s.n_failed > 0) line += QObject::tr(" (%1 failed)").arg(s.n_failed);
    const int configurations = settings.value(QStringLiteral("configurations")).toInt();
    if (configurations > s.n_rows) line += QObject::tr(" of %1").arg(configurations);
    if (settings.contains(QStringLiteral("ctx"))) line += QObject::tr(" · %1 tokens").arg(settings.value(QStringLiteral("ctx")).toInt());
    if (settings.value(QStringLiteral("retrieval")).toBool()) line += QObject::tr(" · retrieval");
    return line;
}

}  // namespace

SweepList::SweepList(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("sweepHistoryList"));
    layout->addWidget(m_list, 1);
    auto* buttons = new QHBoxLayout();
    m_status = new QLabel(tr("Sweeps run on the Variants map page, or by workbench-cli sweep --db, are kept here."), this);
    m_status->setWordWrap(true);
    buttons->addWidget(m_status, 1);
    m_open = new QPushButton(tr("Open on the map"), this);
    m_open->setObjectName(QStringLiteral("sweepHistoryOpen"));
    m_delete = new QPushButton(tr("Delete"), this);
    m_delete->setObjectName(QStringLiteral("sweepHistoryDelete"));
    for (QPushButton* b : {m_open, m_delete}) {
        b->setEnabled(false);
        buttons->addWidget(b);
    }
    layout->addLayout(buttons);
    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        for (QPushButton* b : {m_open, m_delete}) b->setEnabled(row >= 0);
    });
    connect(m_list, &QListWidget::itemDoubleClicked, this, [this] { openSweep(currentId()); });
    connect(m_open, &QPushButton::clicked, this, [this] { openSweep(currentId()); });
    connect(m_delete, &QPushButton::clicked, this, [this] {
        if (currentId() == 0) return;
        if (QMessageBox::question(this, tr("Delete sweep"), tr("Delete this sweep? Its evaluations stay in the history.")) ==
            QMessageBox::Yes)
            deleteSweep(currentId());
    });
    connect(m_store, &StoreClient::opened, this, &SweepList::refresh);
}

void SweepList::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refresh();
}

QString SweepList::statusText() const { return m_status->text(); }

workbench::RowId SweepList::currentId() const {
    return m_list->currentItem() ? m_list->currentItem()->data(Qt::UserRole).toLongLong() : 0;
}

void SweepList::refresh() {
    if (!m_store->isOpen()) return;
    m_store->call<std::vector<workbench::SweepRecord>>(
        [](workbench::Store& s) { return s.list_sweeps(); }, this,
        [this](const workbench::Result<std::vector<workbench::SweepRecord>>& result) {
            if (!result.ok()) {
                m_status->setText(QString::fromStdString(result.status().message()));
                emit listLoaded(0);
                return;
            }
            const workbench::RowId current = currentId();
            const QSignalBlocker block(m_list);
            m_list->clear();
            for (const workbench::SweepRecord& s : *result) {
                auto* item = new QListWidgetItem(describe(s), m_list);
                item->setData(Qt::UserRole, static_cast<qlonglong>(s.id));
                if (s.id == current) m_list->setCurrentItem(item);
            }
            for (QPushButton* b : {m_open, m_delete}) b->setEnabled(m_list->currentRow() >= 0);
            emit listLoaded(static_cast<int>(result->size()));
        });
}

void SweepList::openSweep(workbench::RowId sweepId) {
    if (sweepId == 0 || !m_store->isOpen()) return;
    m_store->call<workbench::SweepRecord>(
        [sweepId](workbench::Store& s) { return s.load_sweep(sweepId); }, this,
        [this](const workbench::Result<workbench::SweepRecord>& sweep) {
            if (!sweep.ok()) {
                m_status->setText(QString::fromStdString(sweep.status().message()));
                return;
            }
            QStringList rows;
            for (const std::string& row : sweep->rows) rows.append(QString::fromStdString(row));
            const QString title = tr("%1 sweep of %2, %3")
                                      .arg(QString::fromStdString(sweep->name), QString::fromStdString(sweep->model),
                                           QDateTime::fromMSecsSinceEpoch(sweep->created_unix_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm")));
            emit sweepOpened(title, rows);
        });
}

void SweepList::deleteSweep(workbench::RowId sweepId) {
    m_store->call<bool>(
        [sweepId](workbench::Store& s) -> workbench::Result<bool> {
            WB_RETURN_IF_ERROR(s.delete_sweep(sweepId));
            return true;
        },
        this, [this](const workbench::Result<bool>& deleted) {
            m_status->setText(deleted.ok() ? tr("Sweep deleted.") : QString::fromStdString(deleted.status().message()));
            refresh();
        });
}
