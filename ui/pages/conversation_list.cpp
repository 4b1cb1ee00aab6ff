#include "ui/pages/conversation_list.h"

#include <QDateTime>
#include <QInputDialog>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/bridge/store_client.h"

namespace {
constexpr int kIdRole = Qt::UserRole;
constexpr int kShown = 200;  // the newest; History lists them all
}  // namespace

ConversationList::ConversationList(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    setObjectName(QStringLiteral("conversationList"));
    auto* col = new QVBoxLayout(this);
    col->setContentsMargins(6, 6, 0, 6);
    auto* newChat = new QPushButton(tr("New chat"), this);
    newChat->setObjectName(QStringLiteral("conversationNewChat"));
    connect(newChat, &QPushButton::clicked, this, &ConversationList::newChatRequested);
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("conversationSearch"));
    m_search->setPlaceholderText(tr("Search conversations"));
    m_search->setClearButtonEnabled(true);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("conversationItems"));
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    m_list->setWordWrap(false);   // a title line and a date line, elided to the width
    m_list->setTextElideMode(Qt::ElideRight);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setToolTip(tr("Click to continue a conversation; right-click to rename or delete it."));
    col->addWidget(newChat);
    col->addWidget(m_search);
    col->addWidget(m_list, 1);
    setMaximumWidth(320);

    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(250);
    connect(m_searchDelay, &QTimer::timeout, this, &ConversationList::refresh);
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_list, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        const qint64 id = item->data(kIdRole).toLongLong();
        if (id != m_current) emit continueRequested(id);
    });
    connect(m_list, &QListWidget::customContextMenuRequested, this, &ConversationList::showMenu);
    connect(m_store, &StoreClient::opened, this, &ConversationList::refresh);
}

void ConversationList::refresh() {
    if (!m_store->isOpen()) return;
    workbench::SessionFilter filter;
    filter.include_comparisons = false;
    filter.search_text = m_search->text().trimmed().toStdString();
    filter.limit = kShown;
    m_store->call<std::vector<workbench::SessionSummary>>(
        [filter](workbench::Store& s) { return s.list_sessions(filter); }, this,
        [this](const workbench::Result<std::vector<workbench::SessionSummary>>& result) {
            m_list->clear();
            if (!result.ok()) {
                m_list->addItem(QString::fromStdString(result.status().message()));
                return;
            }
            for (const workbench::SessionSummary& s : *result) {
                if (s.n_turns == 0 && s.id != m_current) continue;  // a new chat not yet written to
                const QString title = s.title.empty() ? tr("(no messages yet)") : QString::fromStdString(s.title);
                const QString when = QDateTime::fromMSecsSinceEpoch(s.updated_unix_ms).toString(QStringLiteral("d MMM, HH:mm"));
                auto* item = new QListWidgetItem(QStringLiteral("%1\n%2").arg(title.left(60), when), m_list);
                item->setData(kIdRole, QVariant::fromValue<qint64>(s.id));
                item->setToolTip(title);
                if (s.id == m_current) {
                    QFont bold = item->font();
                    bold.setBold(true);
                    item->setFont(bold);
                }
            }
        });
}

void ConversationList::setCurrentSession(qint64 sessionId) {
    m_current = sessionId;
    refresh();
}

void ConversationList::showMenu(const QPoint& at) {
    QListWidgetItem* item = m_list->itemAt(at);
    if (!item || !item->data(kIdRole).isValid()) return;
    const qint64 id = item->data(kIdRole).toLongLong();
    const QString title = item->toolTip();
    QMenu menu(this);
    menu.addAction(tr("Rename…"), this, [this, id, title] {
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Rename the conversation"), tr("Title:"), QLineEdit::Normal, title, &ok);
        if (ok && !name.trimmed().isEmpty()) renameSession(id, name.trimmed());
    });
    menu.addAction(tr("Delete…"), this, [this, id, title] {
        if (QMessageBox::question(this, tr("Delete the conversation"),
                                  tr("Delete \"%1\" with its messages and runs? This cannot be undone.").arg(title),
                                  QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes)
            deleteSession(id);
    });
    menu.exec(m_list->viewport()->mapToGlobal(at));
}

void ConversationList::renameSession(qint64 sessionId, const QString& title) {
    m_store->call<bool>(
        [sessionId, t = title.toStdString()](workbench::Store& s) -> workbench::Result<bool> {
            if (auto st = s.set_session_title(sessionId, t); !st.ok()) return st;
            if (auto st = s.flush(); !st.ok()) return st;
            return true;
        },
        this, [this](const workbench::Result<bool>&) { refresh(); });
}

void ConversationList::deleteSession(qint64 sessionId) {
    m_store->call<bool>(
        [sessionId](workbench::Store& s) -> workbench::Result<bool> {
            if (auto st = s.delete_session(sessionId); !st.ok()) return st;
            return true;
        },
        this, [this, sessionId](const workbench::Result<bool>& result) {
            emit deleted(sessionId, result.ok());
            refresh();
        });
}
