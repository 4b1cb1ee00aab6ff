#include "ui/compare/compare_outputs.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "widgets/token_stream_view.h"

CompareOutputs::CompareOutputs(int maxColumns, QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_menu = new QComboBox(this);
    m_menu->setObjectName(QStringLiteral("compareShownPrompt"));
    m_menu->setToolTip(tr("The prompt whose outputs the columns and the charts show; the table averages over all."));
    m_menu->setVisible(false);
    layout->addWidget(m_menu);
    auto* row = new QHBoxLayout();
    for (int i = 0; i < maxColumns; ++i) {
        auto* col = new QVBoxLayout();
        auto* title = new QLabel(this);
        title->setWordWrap(true);
        auto* view = new TokenStreamView(this);
        view->setObjectName(QStringLiteral("compareOutput%1").arg(i));
        col->addWidget(title);
        col->addWidget(view, 1);
        row->addLayout(col, 1);
        m_titles.append(title);
        m_views.append(view);
        title->setVisible(false);
        view->setVisible(false);
    }
    layout->addLayout(row, 1);
    connect(m_menu, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0 || index == m_shown) return;
        m_shown = index;
        for (int c = 0; c < m_columns; ++c) redraw(c);
        emit shownPromptChanged(index);
    });
}

void CompareOutputs::reset(const QStringList& titles, const QStringList& prompts) {
    m_columns = std::min(static_cast<int>(titles.size()), static_cast<int>(m_views.size()));
    m_prompts = prompts;
    m_cells = QList<QList<Cell>>(prompts.size(), QList<Cell>(m_columns));
    m_shown = 0;
    {
        const QSignalBlocker block(m_menu);
        m_menu->clear();
        for (int p = 0; p < prompts.size(); ++p) {
            const QString firstLine = prompts[p].section(QLatin1Char('\n'), 0, 0);
            m_menu->addItem(tr("Prompt %1 of %2: %3").arg(p + 1).arg(prompts.size()).arg(firstLine.left(80)));
            m_menu->setItemData(p, prompts[p], Qt::ToolTipRole);
        }
        m_menu->setCurrentIndex(0);
    }
    m_menu->setVisible(prompts.size() > 1);
    for (int c = 0; c < m_views.size(); ++c) {
        const bool used = c < m_columns;
        m_views[c]->clearMessages();
        m_views[c]->setVisible(used);
        m_titles[c]->setVisible(used);
        if (used) m_titles[c]->setText(titles[c]);
    }
}

CompareOutputs::Cell* CompareOutputs::cell(int prompt, int column) {
    if (prompt < 0 || prompt >= m_cells.size() || column < 0 || column >= m_columns) return nullptr;
    return &m_cells[prompt][column];
}

void CompareOutputs::beginStream(int prompt, int column) {
    Cell* c = cell(prompt, column);
    if (!c) return;
    *c = Cell{Cell::State::Streaming, {}, {}};
    if (prompt == m_shown) redraw(column);
}

void CompareOutputs::appendStream(int prompt, int column, const QString& text) {
    Cell* c = cell(prompt, column);
    if (!c || c->state != Cell::State::Streaming) return;
    c->text += text;
    if (prompt == m_shown) m_views[column]->appendStream(text);
}

void CompareOutputs::finish(int prompt, int column, const QString& text, const QString& footer) {
    Cell* c = cell(prompt, column);
    if (!c) return;
    *c = Cell{Cell::State::Done, text, footer};
    if (prompt == m_shown && m_views[column]->isStreaming()) m_views[column]->finishStream(text, footer);
    else if (prompt == m_shown) redraw(column);
}

void CompareOutputs::fail(int prompt, int column, const QString& message) {
    Cell* c = cell(prompt, column);
    if (!c) return;
    *c = Cell{Cell::State::Failed, message, {}};
    if (prompt == m_shown) redraw(column);
}

void CompareOutputs::showPrompt(int prompt) {
    if (prompt >= 0 && prompt < m_menu->count()) m_menu->setCurrentIndex(prompt);
}

void CompareOutputs::redraw(int column) {
    TokenStreamView* view = m_views[column];
    if (view->isStreaming()) view->abortStream();
    view->clearMessages();
    const Cell* c = cell(m_shown, column);
    if (!c) return;
    switch (c->state) {
    case Cell::State::Empty: break;
    case Cell::State::Streaming:
        view->beginStream();
        if (!c->text.isEmpty()) view->appendStream(c->text);
        break;
    case Cell::State::Done: view->addMessage(TokenStreamView::Role::Assistant, c->text, c->footer); break;
    case Cell::State::Failed: view->addMessage(TokenStreamView::Role::Error, c->text); break;
    }
}
