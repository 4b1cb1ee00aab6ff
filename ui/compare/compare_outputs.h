// The Compare page's output columns: one per configuration, each showing one prompt's output at
// a time, and a menu above them that picks the prompt (hidden for a single prompt). It keeps
// every cell's text, the one streaming included, so switching prompts redraws the columns from
// it. GUI thread only.
#pragma once

#include <QList>
#include <QWidget>

class QComboBox;
class QLabel;
class TokenStreamView;

class CompareOutputs : public QWidget {
    Q_OBJECT
public:
    CompareOutputs(int maxColumns, QWidget* parent = nullptr);

    // Empties every cell: `titles` (rich text) name the columns shown, `prompts` fill the menu.
    void reset(const QStringList& titles, const QStringList& prompts);
    void beginStream(int prompt, int column);
    void appendStream(int prompt, int column, const QString& text);
    void finish(int prompt, int column, const QString& text, const QString& footer);
    void fail(int prompt, int column, const QString& message);

    void showPrompt(int prompt);
    int shownPrompt() const { return m_shown; }
    int promptCount() const { return static_cast<int>(m_prompts.size()); }
    QComboBox* promptMenu() const { return m_menu; }
    TokenStreamView* view(int column) const { return m_views.value(column); }

signals:
    void shownPromptChanged(int prompt);

private:
    struct Cell {
        enum class State { Empty, Streaming, Done, Failed } state = State::Empty;
        QString text, footer;
    };
    Cell* cell(int prompt, int column);
    void redraw(int column);

    QComboBox* m_menu = nullptr;
    QList<QLabel*> m_titles;
    QList<TokenStreamView*> m_views;
    QStringList m_prompts;
    QList<QList<Cell>> m_cells;  // [prompt][column]
    int m_columns = 0;
    int m_shown = 0;
};
