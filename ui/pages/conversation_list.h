// The chat's conversations beside it, as desktop chat apps keep them: the stored chat sessions
// (comparisons left out), newest first, with a search over their messages; a click continues
// one (as History → Continue does); its menu renames or deletes it. Reads and writes go through
// the StoreClient's thread.
#pragma once

#include <QWidget>

class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QTimer;
class StoreClient;

class ConversationList : public QWidget {
    Q_OBJECT
public:
    explicit ConversationList(StoreClient* store, QWidget* parent = nullptr);

    // Reloads the list (after a turn is recorded, a session deleted elsewhere, the store opened).
    void refresh();
    // The session the chat records into, shown in bold (0: none yet).
    void setCurrentSession(qint64 sessionId);
    QListWidget* list() const { return m_list; }
    // Narrower than its buttons would like: beside the chat in a small window it gives way first.
    QSize minimumSizeHint() const override { return {72, 120}; }
    void renameSession(qint64 sessionId, const QString& title);
    void deleteSession(qint64 sessionId);

signals:
    void continueRequested(qint64 sessionId);
    void newChatRequested();
    void deleted(qint64 sessionId, bool ok);

private:
    void showMenu(const QPoint& at);
    StoreClient* m_store;
    QLineEdit* m_search = nullptr;
    QListWidget* m_list = nullptr;
    QTimer* m_searchDelay = nullptr;
    qint64 m_current = 0;
};
