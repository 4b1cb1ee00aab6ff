// The Chat page's tool turns (see chat_page.h): the tools offered, the calls waiting for their
// results, a result sent back as a `tool` message, and how the next reply is read.
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <algorithm>

#include "ui/pages/chat_page.h"
#include "ui/pages/tool_result_bar.h"
#include "ui/pages/tools_dialog.h"
#include "widgets/token_stream_view.h"

void ChatPage::sendToolResult(const QString& text) {
    const workbench::ToolCall call = m_pendingCalls.takeFirst();
    workbench::ChatMessage result{"tool", text.toStdString()};
    result.tool_call_id = call.id;
    m_viewIndex.append(m_view->messageCount());
    m_history.push_back(result);
    addTurnToView(result);
    showPendingCall();
    // Every call answered: the model reads the results and goes on.
    if (m_pendingCalls.isEmpty()) startReply();
}

void ChatPage::restorePendingCalls() {
    size_t first = m_history.size();
    while (first > 0 && m_history[first - 1].role == "tool") --first;
    if (first == m_history.size() || first == 0) return;
    const std::vector<workbench::ToolCall> calls = m_history[first - 1].tool_calls;
    m_input->setPlainText(QString::fromStdString(m_history[first].content));   // the first call's result
    truncateHistory(static_cast<int>(first));
    m_pendingCalls = QList<workbench::ToolCall>(calls.begin(), calls.end());
    showPendingCall();
}

namespace {

// The name of the call `id` answers, from the assistant turns before it.
QString calledName(const ChatHistory& history, const std::string& id) {
    for (auto it = history.rbegin(); it != history.rend(); ++it)
        for (const workbench::ToolCall& c : it->tool_calls)
            if (c.id == id) return QString::fromStdString(c.name);
    return QStringLiteral("tool");
}

// Text shown verbatim as a Markdown code block: a fence longer than any run of backticks in it.
QString fenced(const QString& text) {
    int longest = 0, run = 0;
    for (QChar ch : text) {
        run = ch == QLatin1Char('`') ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    const QString fence(std::max(3, longest + 1), QLatin1Char('`'));
    return fence + QLatin1Char('\n') + text + QLatin1Char('\n') + fence;
}

}  // namespace

void ChatPage::addTurnToView(const workbench::ChatMessage& m) {
    const QString text = QString::fromStdString(m.content);
    if (m.role == "tool")
        m_view->addMessage(TokenStreamView::Role::Tool, tr("`%1` returned:").arg(calledName(m_history, m.tool_call_id)) +
                                                             QStringLiteral("\n\n") + fenced(text));
    else
        m_view->addMessage(TokenStreamView::Role::User, text);
}

void ChatPage::onReplyForm(const ReplyForm& form) {
    m_replyForm = form;
    m_replyReader = std::make_unique<workbench::ChatReplyStream>(form.format, form.toolsOffered, form.thinkingOpen);
    m_replyAnswer.clear();
    m_replyThinking.clear();
    m_replyCalls.clear();
    m_replyParted = false;
}

void ChatPage::editTools() {
    ToolsDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted) updateToolsButton();
}

void ChatPage::updateToolsButton() {
    const int n = ToolsDialog::offeredCount();
    m_tools->setText(n > 0 ? tr("Tools (%1)…").arg(n) : tr("Tools…"));
}

void ChatPage::showPendingCall() {
    if (m_pendingCalls.isEmpty()) {
        m_toolBar->setVisible(false);
        m_input->setPlaceholderText(tr("Message (Enter sends, Shift+Enter starts a new line)"));
        return;
    }
    const workbench::ToolCall& c = m_pendingCalls.first();
    m_toolBar->showCall(QString::fromStdString(c.name), QString::fromStdString(c.arguments), static_cast<int>(m_pendingCalls.size()));
    m_input->setPlaceholderText(tr("The result of %1 (Enter sends it to the model)").arg(QString::fromStdString(c.name)));
}
