#include "widgets/markdown_html.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <srchilite/instances.h>
#include <srchilite/langmap.h>
#include <srchilite/sourcehighlight.h>

#include "widgets/contrast.h"

#include <QRegularExpression>

#include <memory>
#include <sstream>
#include <vector>

namespace {

// One highlighter for the program: it loads each language's rules once and keeps them.
srchilite::SourceHighlight& highlighter() {
    static srchilite::SourceHighlight* instance = [] {
        auto* h = new srchilite::SourceHighlight("html.outlang");
        h->setGenerateEntireDoc(false);
        h->setGenerateVersion(false);
        return h;
    }();
    return *instance;
}

QString escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

// source-highlight's colours are chosen for white ("#0000FF" keywords, "#000000" functions):
// each is moved in lightness until it reads (4.5:1) on the code block's background.
QString readableColors(const QString& html, const QColor& background) {
    if (!background.isValid()) return html;
    static const QRegularExpression font(QStringLiteral("color=\"(#[0-9A-Fa-f]{6})\""));
    QString out;
    qsizetype last = 0;
    for (auto it = font.globalMatch(html); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += html.mid(last, m.capturedStart(1) - last);
        out += readableAgainst(QColor(m.captured(1)), background, 4.5).name();
        last = m.capturedEnd(1);
    }
    return out + html.mid(last);
}

// The code's HTML: source-highlight's <font>/<b>/<i> spans (which Qt's rich text reads) without
// its <pre><tt> wrapper, or the escaped text when the language is unknown or the rules fail.
QString highlightedCode(const std::string& code, const QString& fenceInfo, const QColor& background) {
    const QString lang = highlightLanguageFor(fenceInfo);
    if (lang.isEmpty()) return escaped(code);
    try {
        std::istringstream in(code);
        std::ostringstream out;
        highlighter().highlight(in, out, lang.toStdString());
        QString html = QString::fromStdString(out.str());
        // "<!-- Generator: ... -->\n<pre><tt>...</tt></pre>\n"
        const qsizetype open = html.indexOf(QStringLiteral("<tt>")), close = html.lastIndexOf(QStringLiteral("</tt>"));
        if (open < 0 || close < open) return escaped(code);
        html = html.mid(open + 4, close - open - 4);
        while (html.endsWith('\n')) html.chop(1);
        return readableColors(html, background);
    } catch (const std::exception&) {
        return escaped(code);
    }
}

void attach(cmark_parser* parser, const char* name) {
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name)) cmark_parser_attach_syntax_extension(parser, ext);
}

// Replaces `node` by an HTML block holding `html`.
void replaceWithHtml(cmark_node* node, const QString& html) {
    cmark_node* block = cmark_node_new(CMARK_NODE_HTML_BLOCK);
    cmark_node_set_literal(block, html.toUtf8().constData());
    cmark_node_replace(node, block);
    cmark_node_free(node);
}

}  // namespace

QString highlightLanguageFor(const QString& fenceInfo) {
    const QString lang = fenceInfo.section(' ', 0, 0).trimmed().toLower();
    if (lang.isEmpty()) return {};
    try {
        srchilite::LangMap* map = srchilite::Instances::getLangMap();
        map->open();
        const std::string file = map->getMappedFileName(lang.toStdString());
        return QString::fromStdString(file);
    } catch (const std::exception&) {
        return {};
    }
}

MarkdownHtml markdownToHtml(const QString& markdown, const QString& copyLinkPrefix, const QColor& codeBackground) {
    cmark_gfm_core_extensions_ensure_registered();
    const QByteArray utf8 = markdown.toUtf8();
    cmark_parser* parser = cmark_parser_new(CMARK_OPT_DEFAULT);
    for (const char* name : {"table", "strikethrough", "autolink"}) attach(parser, name);
    cmark_parser_feed(parser, utf8.constData(), static_cast<size_t>(utf8.size()));
    cmark_node* doc = cmark_parser_finish(parser);

    // Collect first, edit after: the iterator must not see nodes replaced under it.
    std::vector<cmark_node*> code, rawHtml;
    cmark_iter* iter = cmark_iter_new(doc);
    for (cmark_event_type ev; (ev = cmark_iter_next(iter)) != CMARK_EVENT_DONE;) {
        if (ev != CMARK_EVENT_ENTER) continue;
        cmark_node* node = cmark_iter_get_node(iter);
        const cmark_node_type type = cmark_node_get_type(node);
        if (type == CMARK_NODE_CODE_BLOCK) code.push_back(node);
        else if (type == CMARK_NODE_HTML_BLOCK || type == CMARK_NODE_HTML_INLINE) rawHtml.push_back(node);
    }
    cmark_iter_free(iter);

    MarkdownHtml out;
    // A model's (or a user's) HTML is text to read, not markup for our view.
    for (cmark_node* node : rawHtml) {
        const char* literal = cmark_node_get_literal(node);
        if (cmark_node_get_type(node) == CMARK_NODE_HTML_BLOCK) {
            cmark_node* para = cmark_node_new(CMARK_NODE_PARAGRAPH);
            cmark_node* text = cmark_node_new(CMARK_NODE_TEXT);
            cmark_node_set_literal(text, literal ? literal : "");
            cmark_node_append_child(para, text);
            cmark_node_replace(node, para);
        } else {
            cmark_node* text = cmark_node_new(CMARK_NODE_TEXT);
            cmark_node_set_literal(text, literal ? literal : "");
            cmark_node_replace(node, text);
        }
        cmark_node_free(node);
    }
    for (cmark_node* node : code) {
        const char* literal = cmark_node_get_literal(node);
        const char* info = cmark_node_get_fence_info(node);
        std::string text = literal ? literal : "";
        while (!text.empty() && text.back() == '\n') text.pop_back();
        const QString fence = QString::fromUtf8(info ? info : "");
        const int index = static_cast<int>(out.codeBlocks.size());
        out.codeBlocks << QString::fromStdString(text);
        const QString label = fence.section(' ', 0, 0).toHtmlEscaped();
        // A one-cell table: Qt's rich text gives a cell padding and a background, a <pre> neither.
        const QString html =
            QStringLiteral("<table width=\"100%\" cellspacing=\"0\" cellpadding=\"6\" class=\"code\">"
                           "<tr><td class=\"code-head\">%1<a class=\"copy\" href=\"%2%3\">Copy</a></td></tr>"
                           "<tr><td class=\"code\"><pre>%4</pre></td></tr></table>")
                .arg(label.isEmpty() ? QString() : label + QStringLiteral(" · "), copyLinkPrefix)
                .arg(index)
                .arg(highlightedCode(text, fence, codeBackground));
        replaceWithHtml(node, html);
    }

    cmark_llist* extensions = cmark_parser_get_syntax_extensions(parser);
    char* rendered = cmark_render_html(doc, CMARK_OPT_UNSAFE, extensions);
    out.html = QString::fromUtf8(rendered);
    free(rendered);
    cmark_node_free(doc);
    cmark_parser_free(parser);
    return out;
}
