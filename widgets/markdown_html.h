// Chat Markdown as HTML for a QTextBrowser: CommonMark with GitHub's tables, strikethrough and
// autolinks (cmark-gfm), fenced code highlighted by GNU source-highlight for the fence's language.
// Raw HTML in the text is shown as text, never interpreted. An unclosed fence (a reply still
// streaming) renders as a code block to the end, so raw ``` never shows.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

struct MarkdownHtml {
    QString html;
    QStringList codeBlocks;  // each code block's text, in order: what its Copy link copies
};

// `copyLinkPrefix` + index is the href of each code block's Copy link ("copy-code:3"). With a
// valid `codeBackground` the highlighter's colours are adjusted to read on it (a dark theme's).
MarkdownHtml markdownToHtml(const QString& markdown, const QString& copyLinkPrefix, const QColor& codeBackground = {});

// The source-highlight language file for a fence's info string ("cpp" → "cpp.lang"), or empty
// when none matches (the block is then shown unhighlighted).
QString highlightLanguageFor(const QString& fenceInfo);
