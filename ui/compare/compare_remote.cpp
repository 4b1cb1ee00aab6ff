// Remote Compare rows (see the header): names, the stored configuration, sample numbering and the
// server picker. GUI thread only; the network is the RemoteChatClient's and the dialog's threads.
#include "ui/compare/compare_remote.h"

#include <QCoreApplication>
#include <QWidget>

#include "remote/openai_client.h"
#include "ui/format.h"
#include "ui/pages/connect_server_dialog.h"

namespace compareremote {

namespace {
QString tr(const char* text) { return QCoreApplication::translate("CompareRemote", text); }
}  // namespace

QString shortName(const RemoteTarget& t) {
    const QString kind = t.serverKind.isEmpty() ? QStringLiteral("unknown") : t.serverKind;
    const QString model = t.model.isEmpty() ? tr("default model") : t.model;
    return tr("remote: %1 · %2 at %3").arg(kind, model, t.url);
}

workbench::ConfigurationRecord configuration(const RemoteTarget& t) {
    // The same record bench --remote --db and the chat's recorder store, so equal servers share a row.
    return wbremote::remote_configuration(t.url.toStdString(), t.model.toStdString(),
                                          (t.serverKind.isEmpty() ? QStringLiteral("unknown") : t.serverKind).toStdString());
}

workbench::RunProvenance provenance() {
    workbench::RunProvenance p = workbench::app_provenance();
    p.backend = "remote";
    return p;
}

void numberSamples(QList<TokenSample>& samples, int already) {
    for (TokenSample& s : samples) s.nTokensContext = ++already;
}

QString footer(const ReplySummary& summary) {
    if (!summary.remote) return fmt::replyFooter(summary.metrics, summary.stopReasonName);
    return fmt::remoteReplyFooter(summary.metrics, summary.stopReasonName, summary.remote->where,
                                  summary.remote->kvFraction, summary.remote->cutOff);
}

std::optional<RemoteTarget> connectedServer(const QWidget* page, const RemoteChatClient* own) {
    const QWidget* window = page ? page->window() : nullptr;
    if (!window) return std::nullopt;
    for (const RemoteChatClient* client : window->findChildren<RemoteChatClient*>())
        if (client != own && client->isReady()) return client->target();
    return std::nullopt;
}

void askForServer(QWidget* parent, std::function<void(const RemoteTarget&)> accepted) {
    auto* dialog = new ConnectServerDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("A remote server as a Compare row"));
    QObject::connect(dialog, &QDialog::accepted, dialog, [dialog, accepted = std::move(accepted)] { accepted(dialog->target()); });
    dialog->open();
}

QList<int> localColumns(const QList<std::optional<RemoteTarget>>& remotes, int count) {
    QList<int> out;
    for (int i = 0; i < count; ++i)
        if (i >= remotes.size() || !remotes[i]) out.append(i);
    return out;
}

CompareFigures marked(CompareFigures figures, bool remote) {
    figures.remote = remote;
    return figures;
}

QString notReported() { return tr("not reported"); }
QString notAvailable() { return tr("not available for a remote"); }

}  // namespace compareremote
