// A chat transcript that streams: finished messages are rendered as Markdown (code blocks in a
// monospace font), the reply being generated grows as plain text at the end, chunk by chunk,
// and is rendered as Markdown once it finishes. Each message may carry a footer line (metrics).
// Plain strings in, nothing engine-specific.
#pragma once

#include <QList>
#include <QTextBrowser>

class TokenStreamView : public QTextBrowser {
    Q_OBJECT
public:
    enum class Role { User, Assistant, Note, Error };

    explicit TokenStreamView(QWidget* parent = nullptr);

    void addMessage(Role role, const QString& text, const QString& footer = {});
    // Starts an assistant message that grows with appendStream() until finishStream().
    void beginStream();
    void appendStream(const QString& chunk);
    void finishStream(const QString& finalText, const QString& footer);
    // Drops the message being streamed (its request failed).
    void abortStream();
    bool isStreaming() const { return m_streaming; }
    // Drops message `index` and every later one (regenerate, edit and resend).
    void removeFrom(int index);
    void clearMessages();

    int messageCount() const { return m_entries.size(); }
    QString streamText() const { return m_streamText; }
    QString footerOf(int index) const { return m_entries.value(index).footer; }
    QString textOf(int index) const { return m_entries.value(index).text; }

private:
    struct Entry {
        Role role;
        QString text;
        QString footer;
    };
    void render();
    void renderEntry(QTextCursor& cursor, const Entry& entry);
    void insertHeader(QTextCursor& cursor, Role role);

    QList<Entry> m_entries;
    QString m_streamText;
    bool m_streaming = false;
};
