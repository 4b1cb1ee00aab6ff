// A chat transcript that streams. Messages render as Markdown (widgets/markdown_html: CommonMark
// with tables, code highlighted by language), the reply being generated too, re-rendered as it
// grows (at most every kStreamRenderMs), so an open code fence shows as code, never as ```. Each
// message has a Copy link beside its role and each code block one above it; each message may
// carry a footer line (metrics). A reply may carry the model's thinking — shown as it streams,
// then folded into a "Thinking" line that opens and closes on a click — and tool calls, each a
// block of its own (name and arguments); a tool's result is a message of its own. Plain strings
// in, nothing engine-specific. Its colours
// follow its palette: on a dark palette (the dark theme) code, links, labels and footers switch.
// The view follows the end of the transcript (a streaming reply stays in sight) while it is at the
// bottom; scrolled up, it stays put and a "Jump to latest" button brings it back.
#pragma once

#include <QList>
#include <QStringList>
#include <QTextBrowser>
#include <QTimer>

class QToolButton;

class TokenStreamView : public QTextBrowser {
    Q_OBJECT
public:
    enum class Role { User, Assistant, Tool, Note, Error };   // Tool: a tool's result, returned to the model
    static constexpr int kStreamRenderMs = 50;

    explicit TokenStreamView(QWidget* parent = nullptr);

    // The transcript's own colours over the palette's text on base, for a light or dark palette.
    struct Colors {
        QColor codeBackground, codeHead, codeHeadText, inlineCode, copyLink, link, footer, note, user, assistant, error;
    };
    static Colors colors(bool dark);
    bool isDark() const;

    void addMessage(Role role, const QString& text, const QString& footer = {});
    struct ToolCall {
        QString name, arguments;
    };
    // An assistant message with its thinking (folded) and tool calls (a stored conversation).
    void addReply(const QString& text, const QString& thinking, const QList<ToolCall>& calls, const QString& footer = {});
    // Starts an assistant message that grows with appendStream() until finishStream().
    void beginStream();
    void appendStream(const QString& chunk);
    // The streamed reply's thinking and its tool calls (arguments: JSON text), kept with it at the end.
    void appendThinking(const QString& chunk);
    void addToolCall(const QString& name, const QString& arguments);
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
    QString thinkingOf(int index) const { return m_entries.value(index).thinking; }
    bool thinkingShown(int index) const { return m_entries.value(index).thinkingOpen; }
    int toolCallCount(int index) const { return static_cast<int>(m_entries.value(index).toolCalls.size()); }
    // Opens or folds message `index`'s thinking (what its "Thinking" link does).
    void toggleThinking(int index);
    // Code block `block` of message `index` (the stream's is messageCount()), as its Copy link copies it.
    QString codeBlockOf(int index, int block) const;
    // What a link in the transcript does: copy a message or a code block, or open a web link.
    void followLink(const QUrl& url);
    // Marks every occurrence of these words (case-insensitive) and scrolls to the first; kept
    // across re-renders until set again (empty: none). Returns the number of marks.
    int highlightWords(const QStringList& words);
    int highlightCount() const { return static_cast<int>(extraSelections().size()); }
    // Whether the view keeps the transcript's end in sight (it is at the bottom, or was brought back).
    bool isFollowing() const { return m_follow; }
    void jumpToLatest();

signals:
    void copied(const QString& text);

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Entry {
        Role role;
        QString text;
        QString footer;
        QStringList codeBlocks;
        QString thinking;
        QList<ToolCall> toolCalls;
        bool thinkingOpen = false;
    };
    // Thinking (open or as a folded link) and tool calls of an assistant message.
    void appendEntry(Entry entry);
    void renderThinking(QTextCursor& cursor, const QString& thinking, bool open, int index);
    void renderToolCalls(QTextCursor& cursor, const QList<ToolCall>& calls);
    void render();
    void applyColors();
    void renderEntry(QTextCursor& cursor, Entry& entry, int index);
    void insertHeader(QTextCursor& cursor, Role role, int index);
    void renderStreamTail();
    void renderStreamBody();   // the streamed reply from m_streamStart on
    // Changes the document without the reader's scroll position or following changing; then the
    // end is brought into view if following, else the position kept.
    template <class Edit> void editKeepingPlace(Edit edit);
    void scrollMoved();
    void placeJumpButton();

    QList<Entry> m_entries;
    QString m_streamText;
    QString m_streamThinking;
    QList<ToolCall> m_streamCalls;
    QStringList m_streamCodeBlocks;
    QStringList m_highlightWords;
    void applyHighlights(bool scrollToFirst);
    int m_streamStart = 0;       // where the streamed reply's body begins in the document
    bool m_streaming = false;
    QTimer m_streamRender;
    Colors m_colors = colors(false);
    bool m_dark = false;  // the palette m_colors were chosen for
    bool m_follow = true;
    bool m_placing = false;  // the view itself moves the scroll bar: not the reader
    QToolButton* m_jump = nullptr;
};
