// The main window's stored conversations: History → Continue and the conversation list reopen a
// session in the chat (reloading its configuration when it differs), and the newest chat comes
// back once the first model has loaded.
#include <QSettings>

#include "ui/bridge/engine_client.h"
#include "ui/bridge/store_client.h"
#include "ui/history/history_recorder.h"
#include "ui/history/session_detail.h"
#include "ui/main_window.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/config_panel.h"
#include "workbench/backends.h"

namespace {

bool sameLoad(const workbench::EngineConfig& a, const workbench::EngineConfig& b) {
    return a.model_path == b.model_path && a.n_threads == b.n_threads && a.n_ctx == b.n_ctx &&
           a.weight_type == b.weight_type && a.attention == b.attention && a.kv_types == b.kv_types &&
           a.kv_budget_bytes == b.kv_budget_bytes && a.backend == b.backend;
}

}  // namespace

void MainWindow::continueSession(qint64 sessionId, bool keepLoaded) {
    if (m_client->isBusy()) {
        m_chat->addNote(tr("Wait for the running reply or load to end, then Continue."), true);
        emit sessionContinued(sessionId, false);
        return;
    }
    m_store->call<SessionData>(
        [sessionId](workbench::Store& s) { return SessionData::load(s, sessionId); }, this,
        [this, sessionId, keepLoaded](const workbench::Result<SessionData>& result) {
            if (!result.ok()) {
                m_chat->addNote(QString::fromStdString(result.status().message()), true);
                emit sessionContinued(sessionId, false);
                return;
            }
            PendingContinue pending{sessionId, {}};
            for (const workbench::MessageRecord& m : result->messages) {
                if (m.role != "user" && m.role != "assistant" && m.role != "tool") continue;
                workbench::ChatMessage turn = workbench::chat_message(m);
                // A regenerated reply follows the one it replaced (earlier versions kept both): the
                // conversation goes on from the newest.
                if (m.role == "assistant" && !pending.turns.empty() && pending.turns.back().role == "assistant")
                    pending.turns.back() = std::move(turn);
                else pending.turns.push_back(std::move(turn));
            }
            m_continue = pending;
            showPage(QStringLiteral("Chat"));
            auto parsed = workbench::engine_config_from_json(result->configuration.config_json);
            if (!parsed.ok()) {
                m_continue.reset();
                m_chat->addNote(tr("Session %1's configuration cannot be read: %2")
                                    .arg(sessionId)
                                    .arg(QString::fromStdString(parsed.status().message())),
                                true);
                emit sessionContinued(sessionId, false);
                return;
            }
            const workbench::EngineConfig stored = *parsed;
            if (stored.model_path.empty() || (m_client->isLoaded() && (keepLoaded || sameLoad(stored, m_client->config())))) {
                finishContinue();
                return;
            }
            // Its configuration differs from the loaded one: reload with it first.
            if (const workbench::Status backend = workbench::check_backend_available(stored.backend); !backend.ok()) {
                const bool loaded = m_client->isLoaded();
                m_chat->addNote(tr("Session %1 ran on %2, which cannot run here: %3%4")
                                    .arg(sessionId)
                                    .arg(QString::fromStdString(stored.backend).toUpper(), QString::fromStdString(backend.message()),
                                         loaded ? tr(" It continues with the loaded model.") : QString()),
                                true);
                if (loaded) {
                    finishContinue();
                } else {
                    m_continue.reset();
                    emit sessionContinued(sessionId, false);
                }
                return;
            }
            if (!m_chat->configPanel()->setEngineConfig(stored))
                m_chat->addNote(tr("The session's attention setting '%1' is not one the form offers; loading the "
                                   "closest.").arg(QString::fromStdString(stored.attention)), true);
            m_chat->addNote(tr("Reloading with session %1's configuration…").arg(sessionId));
            loadModel(QString::fromStdString(stored.model_path));
        });
}

// Once, after the first model loads: the newest chat with a turn comes back into the chat (its
// transcript, recorded into the same session), as desktop chat apps reopen where one left off;
// the loaded configuration stays. Off with the setting chat/reopenLast = false.
void MainWindow::reopenLastConversation() {
    if (m_reopenedLast) return;
    m_reopenedLast = true;
    if (!m_store->isOpen() || !m_chat->history().empty() || !QSettings().value(QStringLiteral("chat/reopenLast"), true).toBool())
        return;
    workbench::SessionFilter filter;
    filter.include_comparisons = false;
    filter.limit = 20;
    m_store->call<std::vector<workbench::SessionSummary>>(
        [filter](workbench::Store& s) { return s.list_sessions(filter); }, this,
        [this](const workbench::Result<std::vector<workbench::SessionSummary>>& result) {
            if (!result.ok() || !m_chat->history().empty() || m_client->isBusy()) return;
            for (const workbench::SessionSummary& s : *result)
                if (s.n_turns > 0) {
                    continueSession(s.id, true);
                    return;
                }
        });
}

void MainWindow::finishContinue() {
    const PendingContinue pending = *m_continue;
    m_continue.reset();
    m_chat->restoreConversation(pending.turns);
    m_recorder->continueSession(pending.sessionId);
    m_chat->addNote(tr("Continuing session %1: the next turn reads the conversation from the start and is recorded "
                       "into it.").arg(pending.sessionId));
    emit sessionContinued(pending.sessionId, true);
}
