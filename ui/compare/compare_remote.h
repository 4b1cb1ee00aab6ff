// A Compare row that is a remote OpenAI-compatible server instead of a local configuration: how it
// is named, stored (the configuration `workbench-cli bench --remote --db` stores) and chosen (the
// connect dialog, or the server the chat is connected to), and how its reply is fitted to the
// page's charts and footers. Remote rows carry speed figures only: a server returns no KV bytes
// and no full logits, so the page shows "not reported" and "not available for a remote".
#pragma once

#include <QList>
#include <QString>
#include <functional>
#include <optional>

#include "ui/bridge/remote_chat_client.h"
#include "ui/compare/compare_table.h"
#include "workbench/store.h"

class QWidget;

namespace compareremote {

// The column header and table tooltip: "remote: workbench · SmolLM2 at http://127.0.0.1:8080/v1".
QString shortName(const RemoteTarget& target);
// What a saved comparison stores for the row: backend "remote", the server kind as its variant,
// the model id, and {"base_url", "model", "server"} as its JSON.
workbench::ConfigurationRecord configuration(const RemoteTarget& target);
// A remote run's provenance: this machine and build, backend "remote" (no model file to hash).
workbench::RunProvenance provenance();

// Numbers a remote reply's samples by arrival, `already` being how many came before: a server
// reports no context length per token, so nTokensContext counts the pieces (about a token each),
// which is what the decode-speed chart and the saved samples count from.
void numberSamples(QList<TokenSample>& samples, int already);
// The reply's footer: the remote one (where, server KV, cut off) when the reply came from a server.
QString footer(const ReplySummary& summary);

// The server the window's chat is (or was last) connected to, when there is one: the
// window's RemoteChatClient with a target, other than `own` (the page's).
std::optional<RemoteTarget> connectedServer(const QWidget* page, const RemoteChatClient* own);
// Opens the connect dialog (it remembers the last URL and model); `accepted` gets the server once
// it answered. The dialog probes off the GUI thread.
void askForServer(QWidget* parent, std::function<void(const RemoteTarget&)> accepted);

// The columns (of `count`) that are local rows, in order: the ones a quality evaluation scores.
QList<int> localColumns(const QList<std::optional<RemoteTarget>>& remotes, int count);
// `figures` marked as a remote's column (or not).
CompareFigures marked(CompareFigures figures, bool remote);

// The table's words for a figure a remote cannot give.
QString notReported();
QString notAvailable();

}  // namespace compareremote
