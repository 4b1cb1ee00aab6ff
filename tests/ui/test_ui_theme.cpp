// The theme switch on the real main window (no model needed): WORKBENCH_THEME=dark gives a dark
// window, charts and transcript whose text passes WCAG's 4.5:1; View → Theme → Light restyles a
// chart that already exists; the choice persists across windows; without a settings portal
// (no session bus here) System resolves to Light quietly.
#include <QAction>
#include <QChart>
#include <QAbstractAxis>
#include <QRegularExpression>
#include <QSettings>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/theme.h"
#include "widgets/contrast.h"
#include "widgets/markdown_html.h"
#include "widgets/metric_chart_view.h"
#include "widgets/token_stream_view.h"

namespace {

MetricChartView* firstChart(MainWindow& w) {
    const auto charts = w.findChildren<MetricChartView*>();
    return charts.isEmpty() ? nullptr : charts.first();
}

// The chart as drawn: a corner pixel is its background (the title is centred, axes inset).
QColor chartBackground(MetricChartView* chart) { return chart->grab().toImage().pixelColor(3, 3); }

QColor axisLabelColor(MetricChartView* chart) {
    const auto axes = chart->chart()->axes();
    return axes.isEmpty() ? QColor() : axes.first()->labelsBrush().color();
}

// Every colour the transcript draws text in, against what it is drawn on, reads at 4.5:1.
void checkTranscriptColors(TokenStreamView* view, bool dark) {
    QCOMPARE(view->isDark(), dark);
    const QColor base = view->palette().color(QPalette::Base), text = view->palette().color(QPalette::Text);
    const TokenStreamView::Colors c = TokenStreamView::colors(dark);
    const QList<std::tuple<const char*, QColor, QColor>> pairs = {
        {"text", text, base}, {"footer", c.footer, base}, {"note", c.note, base}, {"user", c.user, base},
        {"assistant", c.assistant, base}, {"error", c.error, base}, {"link", c.link, base},
        {"copy link", c.copyLink, base}, {"copy link on code head", c.copyLink, c.codeHead},
        {"code head", c.codeHeadText, c.codeHead}, {"code", text, c.codeBackground}, {"inline code", text, c.inlineCode}};
    for (const auto& [what, fg, bg] : pairs)
        QVERIFY2(contrastRatio(fg, bg) >= 4.5, qPrintable(QStringLiteral("%1: %2 on %3 is %4:1")
                                                              .arg(what, fg.name(), bg.name()).arg(contrastRatio(fg, bg))));
    // source-highlight's own colours (keywords, strings, comments) on the code background.
    const MarkdownHtml md = markdownToHtml(QStringLiteral("```cpp\n#include <x>\nint main() { return \"s\"[0] + 1; } // c\n```"),
                                           QStringLiteral("c:"), c.codeBackground);
    static const QRegularExpression font(QStringLiteral("color=\"(#[0-9A-Fa-f]{6})\""));
    int seen = 0;
    for (auto it = font.globalMatch(md.html); it.hasNext(); ++seen) {
        const QColor fg(it.next().captured(1));
        QVERIFY2(contrastRatio(fg, c.codeBackground) >= 4.5, qPrintable(fg.name() + " on " + c.codeBackground.name()));
    }
    QVERIFY(seen > 0);
}

}  // namespace

class TestUiTheme : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // No session bus, so no portal, whatever the machine running the tests has.
        qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/wb-test-bus");
    }

    void darkFromEnvironment() {
        qputenv("WORKBENCH_THEME", "dark");
        MainWindow w;
        w.show();
        QVERIFY(w.theme()->isDark());
        QVERIFY(w.palette().color(QPalette::Window).lightness() < 80);
        QVERIFY(w.palette().color(QPalette::WindowText).lightness() > 180);
        MetricChartView* chart = firstChart(w);
        QVERIFY(chart);
        QCOMPARE(chart->chart()->theme(), QChart::ChartThemeDark);
        const QColor bg = chartBackground(chart);
        QVERIFY2(bg.lightness() < 80, qPrintable(bg.name()));
        QVERIFY2(contrastRatio(axisLabelColor(chart), bg) >= 4.5, qPrintable(axisLabelColor(chart).name() + " on " + bg.name()));
        checkTranscriptColors(w.chatPage()->transcript(), true);
    }

    void menuSwitchToLightRestylesChart() {
        qputenv("WORKBENCH_THEME", "dark");
        MainWindow w;
        w.show();
        MetricChartView* chart = firstChart(w);
        QVERIFY(chart && chart->isDark());
        auto* light = w.findChild<QAction*>(QStringLiteral("themeLight"));
        QVERIFY(light);
        light->trigger();
        QVERIFY(light->isChecked());
        QVERIFY(!w.theme()->isDark());
        QVERIFY(w.palette().color(QPalette::Window).lightness() > 180);
        QCOMPARE(chart->chart()->theme(), QChart::ChartThemeLight);
        const QColor bg = chartBackground(chart);
        QVERIFY2(bg.lightness() > 200, qPrintable(bg.name()));
        QVERIFY(contrastRatio(axisLabelColor(chart), bg) >= 4.5);
        checkTranscriptColors(w.chatPage()->transcript(), false);
    }

    void choicePersistsAcrossWindows() {
        qunsetenv("WORKBENCH_THEME");
        {
            MainWindow w;  // the previous test chose Light
            QCOMPARE(w.theme()->mode(), ThemeController::Mode::Light);
            QVERIFY(w.findChild<QAction*>(QStringLiteral("themeLight"))->isChecked());
            w.findChild<QAction*>(QStringLiteral("themeDark"))->trigger();
        }
        QCOMPARE(QSettings().value(QStringLiteral("view/theme")).toString(), QStringLiteral("dark"));
        MainWindow w;
        QCOMPARE(w.theme()->mode(), ThemeController::Mode::Dark);
        QVERIFY(w.theme()->isDark());
        QVERIFY(w.findChild<QAction*>(QStringLiteral("themeDark"))->isChecked());
        QVERIFY(firstChart(w)->isDark());
    }

    void systemWithoutPortalIsLight() {
        qunsetenv("WORKBENCH_THEME");
        QVERIFY(!ThemeController::portalPrefersDark().has_value());
        MainWindow w;  // starts dark (the previous test's choice)
        QVERIFY(w.theme()->isDark());
        w.findChild<QAction*>(QStringLiteral("themeSystem"))->trigger();
        QCOMPARE(w.theme()->mode(), ThemeController::Mode::System);
        QVERIFY(!w.theme()->isDark());
        QVERIFY(!QApplication::activeModalWidget());  // no error shown
        QCOMPARE(QSettings().value(QStringLiteral("view/theme")).toString(), QStringLiteral("system"));
    }
};

WB_UI_TEST_MAIN(TestUiTheme, false)
#include "test_ui_theme.moc"
