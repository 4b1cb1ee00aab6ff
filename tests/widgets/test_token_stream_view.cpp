// The chat transcript's Markdown (cmark-gfm, code highlighted by source-highlight) and its copy
// links, offscreen: fenced code is highlighted by its language and never shows its fences, not
// even while a reply streams with the fence still open; a paragraph before a code block stays
// plain text; inline code is monospace; raw HTML shows as text; Copy links copy the message or
// the code block.
#include <QClipboard>
#include <QGuiApplication>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextTable>

#include "widgets/markdown_html.h"
#include "widgets/token_stream_view.h"

namespace {

// The block holding `text`, or an invalid block.
QTextBlock blockWith(const QTextDocument& doc, const QString& text) {
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next())
        if (b.text().contains(text)) return b;
    return {};
}

bool insideTable(const QTextDocument& doc, const QTextBlock& block) {
    QTextCursor c(const_cast<QTextDocument*>(&doc));
    c.setPosition(block.position());
    return c.currentTable() != nullptr;
}

}  // namespace

class TestTokenStreamView : public QObject {
    Q_OBJECT
private slots:
    void code_is_highlighted_by_its_language() {
        const MarkdownHtml md = markdownToHtml(QStringLiteral("Intro line.\n\n```cpp\nint main() { return 0; }\n```\n"), "copy-code:0.");
        QCOMPARE(md.codeBlocks, QStringList{QStringLiteral("int main() { return 0; }")});
        QVERIFY2(md.html.contains("<font color="), qPrintable(md.html));  // source-highlight's spans
        QVERIFY(!md.html.contains("```"));
        QVERIFY(md.html.contains("href=\"copy-code:0.0\""));
        QVERIFY(!highlightLanguageFor("cpp").isEmpty());
        QVERIFY(!highlightLanguageFor("Python").isEmpty());
        QVERIFY(highlightLanguageFor("no-such-language").isEmpty());
        // An unknown language is still a code block, just not coloured.
        const MarkdownHtml plain = markdownToHtml(QStringLiteral("```no-such-language\na < b\n```"), "copy-code:0.");
        QCOMPARE(plain.codeBlocks, QStringList{QStringLiteral("a < b")});
        QVERIFY(plain.html.contains("a &lt; b") && !plain.html.contains("<font color="));
    }

    void raw_html_is_text_and_tables_render() {
        const MarkdownHtml md = markdownToHtml(QStringLiteral("<script>alert(1)</script>\n\nsay <b>hi</b>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"), "c:");
        QVERIFY2(!md.html.contains("<script>") && md.html.contains("&lt;script&gt;"), qPrintable(md.html));
        QVERIFY(!md.html.contains("<b>hi</b>"));
        QVERIFY(md.html.contains("<table>") && md.html.contains("<td>2</td>"));
    }

    void paragraph_before_code_stays_plain_and_inline_code_is_monospace() {
        TokenStreamView view;
        view.addMessage(TokenStreamView::Role::Assistant, QStringLiteral("Use `std::vector` here:\n\n```python\nprint('hi')\n```"));
        const QTextDocument& doc = *view.document();
        const QTextBlock intro = blockWith(doc, "here:");
        QVERIFY(intro.isValid());
        QVERIFY(!insideTable(doc, intro));  // the code's box starts after the paragraph
        const QTextBlock code = blockWith(doc, "print('hi')");
        QVERIFY(code.isValid());
        QVERIFY(insideTable(doc, code));
        QVERIFY(!doc.toPlainText().contains("```"));
        bool monospaceInline = false;
        for (auto it = intro.begin(); !it.atEnd(); ++it)
            if (it.fragment().text().contains("std::vector"))
                monospaceInline = it.fragment().charFormat().fontFixedPitch() ||
                                  it.fragment().charFormat().fontFamilies().toStringList().join(',').contains("mono", Qt::CaseInsensitive);
        QVERIFY(monospaceInline);
    }

    void a_streaming_reply_never_shows_an_open_fence() {
        TokenStreamView view;
        view.addMessage(TokenStreamView::Role::User, QStringLiteral("Print hi"));
        view.beginStream();
        view.appendStream(QStringLiteral("Here:\n```python\nprint("));
        view.appendStream(QStringLiteral("'hi')"));
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("print('hi')"), 2000);
        QVERIFY(!view.document()->toPlainText().contains("```"));
        QCOMPARE(view.codeBlockOf(view.messageCount(), 0), QStringLiteral("print('hi')"));
        QVERIFY(insideTable(*view.document(), blockWith(*view.document(), "print('hi')")));
        view.finishStream(QStringLiteral("Here:\n```python\nprint('hi')\n```"), QStringLiteral("5 tokens"));
        QVERIFY(!view.isStreaming());
        QCOMPARE(view.codeBlockOf(1, 0), QStringLiteral("print('hi')"));
        QVERIFY(view.document()->toPlainText().contains("5 tokens"));
    }

    // Thinking shows while it streams, folds to its line once the answer begins and at the end,
    // and opens again on its link; a tool call is a block of its own with its arguments.
    void thinking_folds_and_tool_calls_show_as_calls() {
        TokenStreamView view;
        view.addMessage(TokenStreamView::Role::User, QStringLiteral("Weather?"));
        view.beginStream();
        view.appendThinking(QStringLiteral("The user wants the weather in Paris."));
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("wants the weather"), 2000);
        view.appendStream(QStringLiteral("Let me check."));
        view.addToolCall(QStringLiteral("get_weather"), QStringLiteral("{\"city\":\"Paris\"}"));
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("get_weather"), 2000);
        QVERIFY(!view.document()->toPlainText().contains("wants the weather"));   // folded once the answer began
        view.finishStream(QStringLiteral("Let me check."), QStringLiteral("12 tokens"));
        QCOMPARE(view.thinkingOf(1), QStringLiteral("The user wants the weather in Paris."));
        QCOMPARE(view.toolCallCount(1), 1);
        QCOMPARE(view.textOf(1), QStringLiteral("Let me check."));   // Copy copies the answer
        const QString folded = view.document()->toPlainText();
        QVERIFY(folded.contains("Thinking · 7 words"));
        QVERIFY(!folded.contains("wants the weather"));
        QVERIFY(folded.contains("\"city\": \"Paris\""));   // the arguments, indented JSON
        view.followLink(QUrl(QStringLiteral("toggle-thinking:1")));
        QVERIFY(view.thinkingShown(1));
        QVERIFY(view.document()->toPlainText().contains("wants the weather"));
        view.followLink(QUrl(QStringLiteral("toggle-thinking:1")));
        QVERIFY(!view.document()->toPlainText().contains("wants the weather"));
    }

    // In a transcript long enough to scroll, a streaming reply stays in sight while the view is
    // at the bottom; once the reader scrolls up it stays where they put it, and "Jump to latest"
    // brings the view back down and following again.
    void the_stream_is_followed_until_the_reader_scrolls_up() {
        TokenStreamView view;
        view.resize(500, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (int i = 0; i < 12; ++i) view.addMessage(i % 2 ? TokenStreamView::Role::Assistant : TokenStreamView::Role::User, QStringLiteral("Message %1 with some words in it.").arg(i));
        QScrollBar* bar = view.verticalScrollBar();
        QVERIFY(bar->maximum() > 0);
        QCOMPARE(bar->value(), bar->maximum());
        QWidget* jump = view.findChild<QWidget*>(QStringLiteral("jumpToLatestButton"));
        QVERIFY(jump);
        QVERIFY(!jump->isVisible());
        view.beginStream();
        for (int line = 0; line < 20; ++line) {
            view.appendStream(QStringLiteral("Line %1 of a long reply.\n\n").arg(line));
            QTest::qWait(TokenStreamView::kStreamRenderMs + 10);
        }
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("Line 19"), 2000);
        QTRY_COMPARE_WITH_TIMEOUT(bar->value(), bar->maximum(), 1000);
        QVERIFY(!jump->isVisible());

        // The reader scrolls up: the view stays there while the reply grows, and the button shows.
        bar->triggerAction(QAbstractSlider::SliderPageStepSub);
        const int kept = bar->value();
        QVERIFY(kept < bar->maximum());
        QTRY_VERIFY_WITH_TIMEOUT(jump->isVisible(), 1000);
        for (int line = 20; line < 30; ++line) {
            view.appendStream(QStringLiteral("Line %1 of a long reply.\n\n").arg(line));
            QTest::qWait(TokenStreamView::kStreamRenderMs + 10);
        }
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("Line 29"), 2000);
        QCOMPARE(bar->value(), kept);

        // Jump to latest: at the bottom, and the stream followed again.
        QTest::mouseClick(jump, Qt::LeftButton);
        QCOMPARE(bar->value(), bar->maximum());
        QTRY_VERIFY_WITH_TIMEOUT(!jump->isVisible(), 1000);
        for (int line = 30; line < 40; ++line) {
            view.appendStream(QStringLiteral("Line %1 of a long reply.\n\n").arg(line));
            QTest::qWait(TokenStreamView::kStreamRenderMs + 10);
        }
        QTRY_VERIFY_WITH_TIMEOUT(view.document()->toPlainText().contains("Line 39"), 2000);
        QTRY_COMPARE_WITH_TIMEOUT(bar->value(), bar->maximum(), 1000);
        view.finishStream(view.document()->toPlainText(), QString());
        QCOMPARE(bar->value(), bar->maximum());
    }

    void copy_links_copy_the_message_and_the_code() {
        TokenStreamView view;
        const QString reply = QStringLiteral("Two blocks:\n\n```\nfirst\n```\n\n```sh\necho second\n```");
        view.addMessage(TokenStreamView::Role::Assistant, reply);
        QSignalSpy copied(&view, &TokenStreamView::copied);
        view.followLink(QUrl(QStringLiteral("copy-code:0.1")));
        view.followLink(QUrl(QStringLiteral("copy-message:0")));
        QCOMPARE(copied.count(), 2);
        QCOMPARE(copied.at(0).at(0).toString(), QStringLiteral("echo second"));
        QCOMPARE(copied.at(1).at(0).toString(), reply);
        QCOMPARE(QGuiApplication::clipboard()->text(), reply);
        // The links are in the document, where a click reaches followLink.
        QString html = view.document()->toHtml();
        QVERIFY(html.contains("copy-message:0") && html.contains("copy-code:0.0") && html.contains("copy-code:0.1"));
    }
};

QTEST_MAIN(TestTokenStreamView)
#include "test_token_stream_view.moc"
