#include "widgets/token_stream_view.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextDocumentFragment>

namespace {

// Markdown's code blocks and inline code as monospace, whatever the importer chose.
void monospaceCode(QTextDocument& doc) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        const bool code = b.blockFormat().hasProperty(QTextFormat::BlockCodeFence) ||
                          b.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage);
        if (!code) continue;
        QTextCursor c(b);
        c.select(QTextCursor::BlockUnderCursor);
        QTextCharFormat f;
        f.setFontFamilies({mono.family()});
        f.setFontFixedPitch(true);
        c.mergeCharFormat(f);
        QTextBlockFormat bf;
        bf.setBackground(QColor(0xf3, 0xf3, 0xf3));
        c.mergeBlockFormat(bf);
    }
}

}  // namespace

TokenStreamView::TokenStreamView(QWidget* parent) : QTextBrowser(parent) {
    setOpenExternalLinks(true);
    setReadOnly(true);
    document()->setDocumentMargin(10);
}

void TokenStreamView::addMessage(Role role, const QString& text, const QString& footer) {
    m_entries.append({role, text, footer});
    if (m_streaming) {
        // Keep the stream last: render the new entry before it.
        render();
        return;
    }
    QTextCursor c(document());
    c.movePosition(QTextCursor::End);
    renderEntry(c, m_entries.last());
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void TokenStreamView::beginStream() {
    m_streaming = true;
    m_streamText.clear();
    QTextCursor c(document());
    c.movePosition(QTextCursor::End);
    insertHeader(c, Role::Assistant);
}

void TokenStreamView::appendStream(const QString& chunk) {
    if (!m_streaming || chunk.isEmpty()) return;
    m_streamText += chunk;
    QScrollBar* bar = verticalScrollBar();
    const bool atBottom = bar->value() >= bar->maximum() - 4;
    QTextCursor c(document());
    c.movePosition(QTextCursor::End);
    c.insertText(chunk, QTextCharFormat());
    // Follow the stream unless the reader scrolled up to look at something.
    if (atBottom) bar->setValue(bar->maximum());
}

void TokenStreamView::finishStream(const QString& finalText, const QString& footer) {
    if (!m_streaming) return;
    m_streaming = false;
    m_streamText.clear();
    m_entries.append({Role::Assistant, finalText, footer});
    // The streamed plain text gives way to the rendered message. Rendering the whole transcript
    // again is the simplest exact way (a few hundred messages at most; once per reply, never per
    // token).
    render();
}

void TokenStreamView::abortStream() {
    if (!m_streaming) return;
    m_streaming = false;
    m_streamText.clear();
    render();
}

void TokenStreamView::removeFrom(int index) {
    while (m_entries.size() > std::max(0, index)) m_entries.removeLast();
    render();
}

void TokenStreamView::clearMessages() {
    m_entries.clear();
    m_streaming = false;
    m_streamText.clear();
    render();
}

void TokenStreamView::render() {
    document()->clear();
    QTextCursor c(document());
    for (const Entry& e : m_entries) renderEntry(c, e);
    if (m_streaming) {
        insertHeader(c, Role::Assistant);
        c.insertText(m_streamText, QTextCharFormat());
    }
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void TokenStreamView::insertHeader(QTextCursor& c, Role role) {
    if (c.position() > 0) c.insertBlock(QTextBlockFormat(), QTextCharFormat());
    QTextBlockFormat bf;
    bf.setTopMargin(c.position() > 0 ? 10 : 0);
    c.setBlockFormat(bf);
    QTextCharFormat f;
    f.setFontWeight(QFont::Bold);
    QString label;
    switch (role) {
    case Role::User: label = tr("You"); f.setForeground(QColor(0x1f, 0x5f, 0xa8)); break;
    case Role::Assistant: label = tr("Assistant"); f.setForeground(QColor(0x2d, 0x7d, 0x2d)); break;
    case Role::Note: label = tr("Note"); f.setForeground(QColor(0x70, 0x70, 0x70)); break;
    case Role::Error: label = tr("Error"); f.setForeground(QColor(0xb0, 0x20, 0x20)); break;
    }
    c.insertText(label, f);
    c.insertBlock(QTextBlockFormat(), QTextCharFormat());
}

void TokenStreamView::renderEntry(QTextCursor& c, const Entry& e) {
    insertHeader(c, e.role);
    if (e.role == Role::Assistant || e.role == Role::User) {
        QTextDocument md;
        md.setDefaultFont(document()->defaultFont());
        md.setMarkdown(e.text);
        monospaceCode(md);
        c.insertFragment(QTextDocumentFragment(&md));
    } else {
        QTextCharFormat f;
        if (e.role == Role::Error) f.setForeground(QColor(0xb0, 0x20, 0x20));
        else f.setForeground(QColor(0x60, 0x60, 0x60));
        c.insertText(e.text, f);
    }
    if (!e.footer.isEmpty()) {
        c.insertBlock(QTextBlockFormat(), QTextCharFormat());
        QTextCharFormat f;
        f.setForeground(QColor(0x80, 0x80, 0x80));
        f.setFontPointSize(std::max(7.0, document()->defaultFont().pointSizeF() * 0.85));
        c.insertText(e.footer, f);
    }
}
