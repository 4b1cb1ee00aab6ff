#include "widgets/token_stream_view.h"

#include <QClipboard>
#include <QDesktopServices>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextDocument>
#include <QToolButton>
#include <QUrl>
#include <algorithm>

#include "widgets/markdown_html.h"

namespace {

// Code on a grey a step off the background, with a stronger head line; inline code on the same.
QString transcriptStyleSheet(const TokenStreamView::Colors& c) {
    return QStringLiteral("td.code { background-color: %1; font-family: monospace; }"
                          "td.code-head { background-color: %2; color: %3; font-size: small; }"
                          "code { background-color: %4; font-family: monospace; }"
                          "pre { font-family: monospace; margin: 0; }"
                          "table.md { border-collapse: collapse; }"
                          "a { color: %5; }"
                          "a.copy { color: %6; text-decoration: none; font-size: small; }")
        .arg(c.codeBackground.name(), c.codeHead.name(), c.codeHeadText.name(), c.inlineCode.name(), c.link.name(),
             c.copyLink.name());
}

QString copyCodePrefix(int index) { return QStringLiteral("copy-code:%1.").arg(index); }

}  // namespace

TokenStreamView::TokenStreamView(QWidget* parent) : QTextBrowser(parent) {
    setOpenLinks(false);  // followLink decides: copy links stay here, web links go to the browser
    setReadOnly(true);
    document()->setDocumentMargin(10);
    applyColors();
    connect(this, &QTextBrowser::anchorClicked, this, &TokenStreamView::followLink);
    m_streamRender.setSingleShot(true);
    m_streamRender.setInterval(kStreamRenderMs);
    connect(&m_streamRender, &QTimer::timeout, this, &TokenStreamView::renderStreamTail);
    m_jump = new QToolButton(viewport());
    m_jump->setObjectName(QStringLiteral("jumpToLatestButton"));
    m_jump->setText(tr("Jump to latest ↓"));
    m_jump->setToolTip(tr("Scroll to the newest message and follow the reply as it streams"));
    m_jump->setCursor(Qt::PointingHandCursor);
    m_jump->hide();
    connect(m_jump, &QToolButton::clicked, this, &TokenStreamView::jumpToLatest);
    // The reader's scrolling decides whether the view follows; the document growing (a range
    // change) keeps a following view at its end.
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &TokenStreamView::scrollMoved);
    connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this] {
        if (m_follow && !m_placing) jumpToLatest();
        else placeJumpButton();
    });
}

void TokenStreamView::scrollMoved() {
    if (m_placing) return;
    m_follow = verticalScrollBar()->value() >= verticalScrollBar()->maximum() - 4;
    placeJumpButton();
}

void TokenStreamView::jumpToLatest() {
    m_placing = true;
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
    m_placing = false;
    m_follow = true;
    placeJumpButton();
}

void TokenStreamView::placeJumpButton() {
    const QScrollBar* bar = verticalScrollBar();
    const bool show = !m_follow && bar->maximum() > 0 && bar->value() < bar->maximum() - 4;
    if (show) {
        m_jump->adjustSize();
        m_jump->move(viewport()->width() - m_jump->width() - 12, viewport()->height() - m_jump->height() - 12);
        m_jump->raise();
    }
    m_jump->setVisible(show);
}

void TokenStreamView::resizeEvent(QResizeEvent* event) {
    QTextBrowser::resizeEvent(event);
    placeJumpButton();
}

template <class Edit>
void TokenStreamView::editKeepingPlace(Edit edit) {
    const int kept = verticalScrollBar()->value();
    m_placing = true;
    edit();
    if (!m_follow) verticalScrollBar()->setValue(kept);
    m_placing = false;
    if (m_follow) jumpToLatest();
    else placeJumpButton();
}

TokenStreamView::Colors TokenStreamView::colors(bool dark) {
    // Each reads at 4.5:1 or more on the view's base (white, or the dark theme's #1e1f22) and the
    // code colours on their own backgrounds; the tests check them with the WCAG formula.
    if (dark)
        return {QColor(0x2a, 0x2d, 0x33), QColor(0x36, 0x3a, 0x41), QColor(0xc8, 0xc8, 0xc8), QColor(0x36, 0x3a, 0x41),
                QColor(0xa8, 0xa8, 0xa8), QColor(0x8a, 0xb4, 0xf8), QColor(0xa0, 0xa0, 0xa0), QColor(0xb4, 0xb4, 0xb4),
                QColor(0x7f, 0xb0, 0xff), QColor(0x7c, 0xcf, 0x7c), QColor(0xff, 0x7b, 0x7b)};
    return {QColor(0xf4, 0xf4, 0xf4), QColor(0xe6, 0xe6, 0xe6), QColor(0x55, 0x55, 0x55), QColor(0xee, 0xee, 0xee),
            QColor(0x5f, 0x5f, 0x5f), QColor(0x1a, 0x5f, 0xb4), QColor(0x6b, 0x6b, 0x6b), QColor(0x60, 0x60, 0x60),
            QColor(0x1f, 0x5f, 0xa8), QColor(0x2d, 0x7d, 0x2d), QColor(0xb0, 0x20, 0x20)};
}

bool TokenStreamView::isDark() const { return palette().color(QPalette::Base).lightness() < 128; }

void TokenStreamView::applyColors() {
    m_dark = isDark();
    m_colors = colors(m_dark);
    document()->setDefaultStyleSheet(transcriptStyleSheet(m_colors));
}

void TokenStreamView::changeEvent(QEvent* event) {
    QTextBrowser::changeEvent(event);
    if (event->type() != QEvent::PaletteChange) return;
    // The style sheet applies to HTML as it is inserted: the transcript is drawn again with it.
    if (m_dark == isDark()) return;
    applyColors();
    render();
}

QString TokenStreamView::codeBlockOf(int index, int block) const {
    const QStringList& blocks = index == m_entries.size() && m_streaming ? m_streamCodeBlocks : m_entries.value(index).codeBlocks;
    return blocks.value(block);
}

void TokenStreamView::toggleThinking(int index) {
    if (index < 0 || index >= m_entries.size()) return;
    m_entries[index].thinkingOpen = !m_entries[index].thinkingOpen;
    const int scroll = verticalScrollBar()->value();
    render();
    verticalScrollBar()->setValue(scroll);   // the reader stays where they clicked
}

void TokenStreamView::followLink(const QUrl& url) {
    QString text;
    if (url.scheme() == QLatin1String("toggle-thinking")) {
        toggleThinking(url.path().toInt());
        return;
    }
    if (url.scheme() == QLatin1String("copy-message")) {
        text = textOf(url.path().toInt());
    } else if (url.scheme() == QLatin1String("copy-code")) {
        const QStringList parts = url.path().split('.');
        text = codeBlockOf(parts.value(0).toInt(), parts.value(1).toInt());
    } else {
        if (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https") || url.scheme() == QLatin1String("mailto"))
            QDesktopServices::openUrl(url);
        return;
    }
    QGuiApplication::clipboard()->setText(text);
    emit copied(text);
}

int TokenStreamView::highlightWords(const QStringList& words) {
    m_highlightWords.clear();
    for (const QString& w : words)
        if (!w.trimmed().isEmpty()) m_highlightWords << w.trimmed();
    applyHighlights(true);
    return highlightCount();
}

void TokenStreamView::applyHighlights(bool scrollToFirst) {
    // Extra selections colour the text without touching the document, so copying a message
    // still copies its text alone.
    QList<QTextEdit::ExtraSelection> marks;
    QTextCharFormat mark;
    mark.setBackground(QColor(0xff, 0xe0, 0x66));
    mark.setForeground(Qt::black);
    for (const QString& word : m_highlightWords)
        for (QTextCursor c = document()->find(word); !c.isNull(); c = document()->find(word, c))
            marks.append({c, mark});
    std::sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) { return a.cursor.position() < b.cursor.position(); });
    setExtraSelections(marks);
    if (scrollToFirst && !marks.isEmpty()) {
        setTextCursor(marks.first().cursor);
        ensureCursorVisible();
    }
}

void TokenStreamView::addMessage(Role role, const QString& text, const QString& footer) { appendEntry({role, text, footer, {}}); }

void TokenStreamView::appendEntry(Entry entry) {
    m_entries.append(std::move(entry));
    if (m_streaming) {
        // Keep the stream last: render the new entry before it.
        render();
        return;
    }
    QTextCursor c(document());
    c.movePosition(QTextCursor::End);
    m_placing = true;
    renderEntry(c, m_entries.last(), static_cast<int>(m_entries.size() - 1));
    m_placing = false;
    jumpToLatest();   // a new message is shown, and the view follows from it
}

void TokenStreamView::addReply(const QString& text, const QString& thinking, const QList<ToolCall>& calls, const QString& footer) {
    appendEntry({Role::Assistant, text, footer, {}, thinking, calls});
}

void TokenStreamView::beginStream() {
    m_streaming = true;
    m_streamText.clear();
    m_streamThinking.clear();
    m_streamCalls.clear();
    m_streamCodeBlocks.clear();
    editKeepingPlace([this] {
        QTextCursor c(document());
        c.movePosition(QTextCursor::End);
        insertHeader(c, Role::Assistant, -1);
        m_streamStart = c.position();
    });
}

void TokenStreamView::appendStream(const QString& chunk) {
    if (!m_streaming || chunk.isEmpty()) return;
    m_streamText += chunk;
    // Rendering Markdown per token would cost a whole reply's parse per token; a few times a
    // second reads as live.
    if (!m_streamRender.isActive()) m_streamRender.start();
}

void TokenStreamView::appendThinking(const QString& chunk) {
    if (!m_streaming || chunk.isEmpty()) return;
    m_streamThinking += chunk;
    if (!m_streamRender.isActive()) m_streamRender.start();
}

void TokenStreamView::addToolCall(const QString& name, const QString& arguments) {
    if (!m_streaming) return;
    m_streamCalls.append({name, arguments});
    if (!m_streamRender.isActive()) m_streamRender.start();
}

void TokenStreamView::renderThinking(QTextCursor& c, const QString& thinking, bool open, int index) {
    if (thinking.trimmed().isEmpty()) return;
    const qsizetype words = thinking.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts).size();
    const QString label = words == 1 ? tr("Thinking · 1 word") : tr("Thinking · %1 words").arg(words);
    if (index >= 0) {
        c.insertHtml(QStringLiteral("<a class=\"copy\" href=\"toggle-thinking:%1\">%2 %3</a>")
                         .arg(index)
                         .arg(open ? QStringLiteral("▾") : QStringLiteral("▸"), label.toHtmlEscaped()));
    } else {
        QTextCharFormat f;
        f.setForeground(m_colors.note);
        c.insertText(tr("Thinking…"), f);
    }
    c.insertBlock(QTextBlockFormat(), QTextCharFormat());
    if (!open) return;
    QTextBlockFormat quote;
    quote.setLeftMargin(14);
    c.setBlockFormat(quote);
    QTextCharFormat f;
    f.setForeground(m_colors.note);
    f.setFontItalic(true);
    c.insertText(thinking.trimmed(), f);
    c.insertBlock(QTextBlockFormat(), QTextCharFormat());
    c.setBlockFormat(QTextBlockFormat());
}

void TokenStreamView::renderToolCalls(QTextCursor& c, const QList<ToolCall>& calls) {
    for (const ToolCall& call : calls) {
        QString args = call.arguments;
        if (const QJsonDocument doc = QJsonDocument::fromJson(call.arguments.toUtf8()); doc.isObject())
            args = QString::fromUtf8(doc.toJson(QJsonDocument::Indented)).trimmed();
        const QString md = tr("**Tool call** `%1`").arg(call.name) + QStringLiteral("\n\n```json\n") + args + QStringLiteral("\n```\n");
        c.insertHtml(markdownToHtml(md, QStringLiteral("copy-call:"), m_colors.codeBackground).html);
        c.insertBlock(QTextBlockFormat(), QTextCharFormat());
    }
}

void TokenStreamView::renderStreamTail() {
    if (!m_streaming) return;
    editKeepingPlace([this] { renderStreamBody(); });
}

void TokenStreamView::renderStreamBody() {
    QTextCursor c(document());
    c.setPosition(m_streamStart);
    c.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    c.removeSelectedText();
    // The thinking shows as it comes; once the answer begins it folds to its line.
    renderThinking(c, m_streamThinking, m_streamText.isEmpty() && m_streamCalls.isEmpty(), -1);
    const MarkdownHtml md = markdownToHtml(m_streamText, copyCodePrefix(static_cast<int>(m_entries.size())), m_colors.codeBackground);
    m_streamCodeBlocks = md.codeBlocks;
    c.insertHtml(md.html);
    if (!m_streamCalls.isEmpty()) {
        c.insertBlock(QTextBlockFormat(), QTextCharFormat());
        renderToolCalls(c, m_streamCalls);
    }
}

void TokenStreamView::finishStream(const QString& finalText, const QString& footer) {
    if (!m_streaming) return;
    m_streaming = false;
    m_streamRender.stop();
    Entry e{Role::Assistant, finalText, footer, {}, m_streamThinking, m_streamCalls};
    m_streamText.clear();
    m_streamThinking.clear();
    m_streamCalls.clear();
    m_streamCodeBlocks.clear();
    m_entries.append(std::move(e));
    // Rendering the whole transcript again is the simplest exact way (a few hundred messages at
    // most; once per reply, never per token).
    render();
}

void TokenStreamView::abortStream() {
    if (!m_streaming) return;
    m_streaming = false;
    m_streamRender.stop();
    m_streamText.clear();
    m_streamThinking.clear();
    m_streamCalls.clear();
    m_streamCodeBlocks.clear();
    render();
}

void TokenStreamView::removeFrom(int index) {
    while (m_entries.size() > std::max(0, index)) m_entries.removeLast();
    m_follow = true;   // edit or regenerate: the new end is where the reader looks
    render();
}

void TokenStreamView::clearMessages() {
    m_entries.clear();
    m_follow = true;
    m_streaming = false;
    m_streamRender.stop();
    m_streamText.clear();
    m_streamThinking.clear();
    m_streamCalls.clear();
    m_streamCodeBlocks.clear();
    render();
}

void TokenStreamView::render() {
    editKeepingPlace([this] {
        document()->clear();
        QTextCursor c(document());
        for (int i = 0; i < m_entries.size(); ++i) renderEntry(c, m_entries[i], i);
        if (m_streaming) {
            insertHeader(c, Role::Assistant, -1);
            m_streamStart = c.position();
            renderStreamBody();
        }
    });
    if (!m_highlightWords.isEmpty()) applyHighlights(false);
}

void TokenStreamView::insertHeader(QTextCursor& c, Role role, int index) {
    if (c.position() > 0) c.insertBlock(QTextBlockFormat(), QTextCharFormat());
    QTextBlockFormat bf;
    bf.setTopMargin(c.position() > 0 ? 10 : 0);
    c.setBlockFormat(bf);
    QTextCharFormat f;
    f.setFontWeight(QFont::Bold);
    QString label;
    switch (role) {
    case Role::User: label = tr("You"); f.setForeground(m_colors.user); break;
    case Role::Assistant: label = tr("Assistant"); f.setForeground(m_colors.assistant); break;
    case Role::Tool: label = tr("Tool result"); f.setForeground(m_colors.assistant); break;
    case Role::Note: label = tr("Note"); f.setForeground(m_colors.note); break;
    case Role::Error: label = tr("Error"); f.setForeground(m_colors.error); break;
    }
    c.insertText(label, f);
    if (index >= 0 && (role == Role::User || role == Role::Assistant)) {
        c.insertText(QStringLiteral("   "), QTextCharFormat());
        c.insertHtml(QStringLiteral("<a class=\"copy\" href=\"copy-message:%1\">%2</a>").arg(index).arg(tr("Copy")));
    }
    c.insertBlock(QTextBlockFormat(), QTextCharFormat());
}

void TokenStreamView::renderEntry(QTextCursor& c, Entry& e, int index) {
    insertHeader(c, e.role, index);
    if (e.role == Role::Assistant || e.role == Role::User || e.role == Role::Tool) {
        renderThinking(c, e.thinking, e.thinkingOpen, index);
        const MarkdownHtml md = markdownToHtml(e.text, copyCodePrefix(index), m_colors.codeBackground);
        e.codeBlocks = md.codeBlocks;
        c.insertHtml(md.html);
        if (!e.toolCalls.isEmpty()) {
            c.insertBlock(QTextBlockFormat(), QTextCharFormat());
            renderToolCalls(c, e.toolCalls);
        }
    } else {
        QTextCharFormat f;
        f.setForeground(e.role == Role::Error ? m_colors.error : m_colors.note);
        c.insertText(e.text, f);
    }
    if (!e.footer.isEmpty()) {
        c.insertBlock(QTextBlockFormat(), QTextCharFormat());
        QTextCharFormat f;
        f.setForeground(m_colors.footer);
        f.setFontPointSize(std::max(7.0, document()->defaultFont().pointSizeF() * 0.85));
        c.insertText(e.footer, f);
    }
}
