#include "ui/main_window.h"

#include <algorithm>
#include <functional>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QClipboard>
#include <QGuiApplication>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>

#include "ui/benchmark/benchmark_page.h"
#include "ui/bridge/engine_client.h"
#include "ui/bridge/remote_chat_client.h"
#include "ui/bridge/store_client.h"
#include "ui/compare/compare_config_form.h"
#include "ui/compare/compare_page.h"
#include "ui/format.h"
#include "ui/history/history_page.h"
#include "ui/history/history_recorder.h"
#include "ui/history/session_detail.h"
#include "ui/pages/chat_page.h"
#include "ui/pages/config_panel.h"
#include "ui/pages/conversation_list.h"
#include "ui/pages/metrics_panel.h"
#include "ui/model_fetcher.h"
#include "ui/pages/models_page.h"
#include "ui/pages/server_page.h"
#include "ui/history/sweep_list.h"
#include "ui/pages/sweep_panel.h"
#include "ui/pages/variants_map_page.h"
#include "ui/theme.h"
#include "widgets/token_stream_view.h"

namespace {

constexpr int kMaxRecent = 8;

// The first local .gguf among dropped URLs; empty when there is none.
QString droppedModel(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && url.toLocalFile().endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive))
            return url.toLocalFile();
    return {};
}

struct PageEntry {
    const char* name;
    const char* tip;
};

constexpr PageEntry kPages[] = {
    {"Chat", "Talk to the model; every turn is recorded in the history."},
    {"Compare", "One prompt under several configurations, side by side, with metrics and quality."},
    {"History", "Past conversations and comparisons: search, replay, continue, export."},
    {"Models", "The loaded model, recently opened files, and the remote server the chat may talk to."},
    {"Benchmark", "Throughput and latency against batch size."},
    {"Server", "Serve the chat's model to other programs through the OpenAI-compatible API."},
    {"Variants map", "Every configuration's memory, speed and quality on one picture (a sweep's rows)."},
};

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Inference Workbench"));
    // First: the pages and their charts are built in the saved theme's palette.
    m_theme = new ThemeController(this);
    m_client = new EngineClient(this);
    m_remote = new RemoteChatClient(this);

    auto* central = new QWidget(this);
    auto* row = new QHBoxLayout(central);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(0);
    m_sidebar = new QListWidget(central);
    m_sidebar->setObjectName(QStringLiteral("sidebar"));
    m_pages = new QStackedWidget(central);
    m_chat = new ChatPage(m_client, m_pages);
    m_models = new ModelsPage(m_pages);
    m_store = new StoreClient(this);
    m_recorder = new HistoryRecorder(m_store, this);
    m_chat->setRecorder(m_recorder);
    m_conversations = new ConversationList(m_store, m_chat);
    m_chat->setConversationList(m_conversations);
    m_history = new HistoryPage(m_store, m_pages);
    m_compare = new ComparePage(m_client, m_store, m_pages);
    m_benchmark = new BenchmarkPage(m_client, m_store, m_pages);
    m_server = new ServerPage(m_client, m_pages);
    m_variants = new VariantsMapPage(m_client, m_store, m_pages);
    // The chat fits a 1000×700 window by itself (its side panels give way or hide); the other pages
    // scroll there instead of setting the window's minimum size.
    m_pages->addWidget(m_chat);
    for (QWidget* page : {static_cast<QWidget*>(m_compare), static_cast<QWidget*>(m_history), static_cast<QWidget*>(m_models),
                          static_cast<QWidget*>(m_benchmark), static_cast<QWidget*>(m_server), static_cast<QWidget*>(m_variants)}) {
        auto* scroll = new QScrollArea(m_pages);
        scroll->setObjectName(page->objectName().isEmpty() ? QStringLiteral("pageScroll") : page->objectName() + QStringLiteral("Scroll"));
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(page);
        m_pages->addWidget(scroll);
    }
    row->addWidget(m_sidebar);
    row->addWidget(m_pages, 1);
    setCentralWidget(central);

    buildSidebar();
    buildActions();
    buildStatusBar();

    connect(m_chat, &ChatPage::openModelRequested, this, &MainWindow::openModel);
    connect(m_chat, &ChatPage::fetchModelRequested, this, &MainWindow::fetchDefaultModel);
    connect(m_chat, &ChatPage::continueWithSlidingRequested, this, [this] {
        // Half the context as the window (whole blocks), 4 sinks: the same turns go on past n_ctx.
        const auto& info = m_client->modelInfo();
        if (!info || m_modelPath.isEmpty()) return;
        const workbench::EngineConfig config =
            loadedConfigWith(QStringLiteral("sliding:window=%1,sinks=4").arg(std::max(64, info->n_ctx / 2 / 16 * 16)).toStdString());
        m_chat->configPanel()->setEngineConfig(config);
        m_reloading = true;
        // The button that asked for the reload turns off while it runs, and Qt would hand its focus
        // to the next field in the panel (Temperature); the next thing to do is write.
        m_chat->input()->setFocus(Qt::OtherFocusReason);
        loadModel(m_modelPath);
    });
    // A configuration picked on the Variants map: reload the chat with it, or put it in a Compare row.
    connect(m_variants, &VariantsMapPage::loadInChatRequested, this, [this](const QString& attention, const QString& kv, const QString& weights) {
        workbench::EngineConfig config = loadedConfigWith(attention.toStdString());
        config.kv_types = kv.toStdString();
        config.weight_type = weights.toStdString();
        m_chat->configPanel()->setEngineConfig(config);
        showPage(QStringLiteral("Chat"));
        if (!m_modelPath.isEmpty()) m_reloading = true, loadModel(m_modelPath);
    });
    // A stored sweep reopened from History; a sweep that finished lists there.
    connect(m_history->sweeps(), &SweepList::sweepOpened, this, [this](const QString& title, const QStringList& rows) {
        if (m_variants->showRows(title, rows)) showPage(QStringLiteral("Variants map"));
    });
    connect(m_variants->sweepPanel(), &SweepPanel::finished, m_history->sweeps(), &SweepList::refresh);
    connect(m_variants, &VariantsMapPage::addToCompareRequested, this, [this](const QString& attention, const QString& kv, const QString& weights) {
        m_compare->form()->addRow(attention, kv, weights);
        showPage(QStringLiteral("Compare"));
    });
    // The welcome's variant example: reload with the window, then ask for a long answer, so the
    // KV chart shows the cache levelling off at the window.
    connect(m_chat, &ChatPage::variantExampleRequested, this, [this](const QString& attention, const QString& prompt) {
        if (m_modelPath.isEmpty()) {
            openModel();
            return;
        }
        const workbench::EngineConfig config = loadedConfigWith(attention.toStdString());
        m_chat->configPanel()->setEngineConfig(config);
        m_pendingPrompt = prompt;
        m_reloading = true;
        m_chat->input()->setFocus(Qt::OtherFocusReason);
        loadModel(m_modelPath);
    });
    m_fetcher = new ModelFetcher(this);
    connect(m_fetcher, &ModelFetcher::progress, this, [this](const QString& line) {
        m_chat->showBanner(tr("Fetching the default model: %1").arg(line), false);
        m_chat->showFetchOffer(true, true);
    });
    connect(m_fetcher, &ModelFetcher::finished, this, [this](bool ok, const QString& pathOrError) {
        if (ok) {
            loadModel(pathOrError);
            return;
        }
        m_chat->showBanner(tr("Could not fetch the default model: %1").arg(pathOrError), true);
        m_chat->showFetchOffer(true, false);
    });
    connect(m_models, &ModelsPage::openModelRequested, this, &MainWindow::openModel);
    connect(m_models, &ModelsPage::recentChosen, this, &MainWindow::loadModel);
    connect(m_models, &ModelsPage::connectServerRequested, this, &MainWindow::connectToServer);
    connect(m_remote, &RemoteChatClient::kvUsageChanged, this, [this](bool reported, double fraction) {
        if (!isRemote()) return;
        if (reported) m_chat->metricsPanel()->addServerKv(m_remoteSince.elapsed() / 1000.0, fraction);
        m_statusWeights->setText(reported ? tr("server KV %1% in use").arg(fraction * 100, 0, 'f', fraction < 0.1 ? 1 : 0)
                                          : tr("KV: not reported by the server"));
    });
    setAcceptDrops(true);
    connect(m_chat->configPanel(), &ConfigPanel::applyRequested, this, [this] {
        if (m_modelPath.isEmpty()) {
            openModel();
            return;
        }
        m_reloading = true;
        // The button that asked for the reload turns off while it runs, and Qt would hand its focus
        // to the next field in the panel (Temperature); the next thing to do is write.
        m_chat->input()->setFocus(Qt::OtherFocusReason);
        loadModel(m_modelPath);
    });
    connect(m_client, &EngineClient::loadStarted, m_models, &ModelsPage::showLoading);
    connect(m_client, &EngineClient::loadProgress, m_chat->configPanel(), &ConfigPanel::setLoadProgress);
    connect(m_client, &EngineClient::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(m_client, &EngineClient::loadFailed, this, &MainWindow::onLoadFailed);
    connect(m_chat, &ChatPage::loadWithDefaultsRequested, this, [this] {
        m_chat->configPanel()->resetToDefaults();
        m_reloading = false;
        loadModel(m_failedPath);
    });
    connect(m_chat, &ChatPage::contextChanged, this, [this](int tokens, int nCtx) {
        m_statusContext->setText(nCtx > 0 ? tr("%1 / %2 tokens").arg(tokens).arg(nCtx) : tr("no context"));
    });

    connect(m_history, &HistoryPage::continueRequested, this, [this](qint64 id) { continueSession(id); });
    connect(m_conversations, &ConversationList::continueRequested, this, [this](qint64 id) { continueSession(id); });
    connect(m_conversations, &ConversationList::newChatRequested, m_chat, &ChatPage::newChat);
    connect(m_conversations, &ConversationList::deleted, this, [this](qint64 sessionId, bool ok) {
        if (ok && sessionId == m_recorder->sessionId()) m_recorder->startNewSession();
        m_history->refresh();
    });
    connect(m_recorder, &HistoryRecorder::sessionChanged, m_conversations, &ConversationList::setCurrentSession);
    // A recorded turn shows in the list once the store has written it.
    connect(m_client, &EngineClient::replyFinished, this, [this] {
        m_store->whenIdle(m_conversations, [this] { m_conversations->refresh(); });
    });
    // The chat's own session deleted under it: its next turn starts a new one.
    connect(m_history, &HistoryPage::deleted, this, [this](qint64 sessionId, bool ok) {
        m_conversations->refresh();
        if (ok && sessionId == m_recorder->sessionId()) m_recorder->startNewSession();
    });
    connect(m_store, &StoreClient::unavailable, this, [this](const QString& reason) {
        const QString text = tr("history is off: %1. The chat works as usual; nothing is recorded.").arg(reason);
        m_chat->showHistoryNotice(text);
        statusBar()->showMessage(text, 15000);
    });
    connect(m_store, &StoreClient::writeFailed, this, [this](const QString& message) {
        if (m_shownStoreErrors.contains(message)) return;
        m_shownStoreErrors << message;
        m_chat->showHistoryNotice(tr("history could not save: %1").arg(message));
    });

    resize(1440, 900);
    restoreSettings();
    openHistory();
}

void MainWindow::openHistory() { m_store->open(StoreClient::defaultPath()); }

MainWindow::~MainWindow() = default;

void MainWindow::buildSidebar() {
    m_sidebar->setFixedWidth(108);
    m_sidebar->setSpacing(2);
    for (const PageEntry& p : kPages) {
        auto* item = new QListWidgetItem(tr(p.name), m_sidebar);
        item->setData(Qt::UserRole, QString::fromLatin1(p.name));
        item->setSizeHint(QSize(100, 34));
        item->setToolTip(tr(p.tip));
    }
    connect(m_sidebar, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (!item) return;
        const QString name = item->data(Qt::UserRole).toString();
        // A page other than the chat sits in its scroll area (its viewport's parent).
        auto show = [this](QWidget* page) {
            m_pages->setCurrentWidget(page == m_chat ? page : page->parentWidget()->parentWidget());
        };
        if (name == QLatin1String("Chat")) show(m_chat);
        else if (name == QLatin1String("Compare")) show(m_compare);
        else if (name == QLatin1String("History")) show(m_history);
        else if (name == QLatin1String("Models")) show(m_models);
        else if (name == QLatin1String("Benchmark")) show(m_benchmark);
        else if (name == QLatin1String("Server")) show(m_server);
        else if (name == QLatin1String("Variants map")) show(m_variants);
    });
    m_sidebar->setCurrentRow(0);
}

void MainWindow::showPage(const QString& name) {
    for (int i = 0; i < m_sidebar->count(); ++i)
        if (m_sidebar->item(i)->data(Qt::UserRole).toString() == name && (m_sidebar->item(i)->flags() & Qt::ItemIsEnabled))
            m_sidebar->setCurrentRow(i);
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), this, &MainWindow::openModel);
    open->setShortcut(QKeySequence::Open);
    m_connectAction = file->addAction(tr("Connect to a &server…"), this, &MainWindow::connectToServer);
    m_connectAction->setObjectName(QStringLiteral("connectServerAction"));
    m_useLocalAction = file->addAction(tr("Use &local model"), this, &MainWindow::useLocalModel);
    m_useLocalAction->setObjectName(QStringLiteral("useLocalAction"));
    m_useLocalAction->setEnabled(false);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));

    QMenu* chat = menuBar()->addMenu(tr("&Chat"));
    QAction* newChat = chat->addAction(tr("&New chat"), m_chat, &ChatPage::newChat);
    newChat->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_N));
    m_stopAction = chat->addAction(tr("&Stop"), m_chat, &ChatPage::stop);
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    // Esc must reach the action wherever focus is (the input box, a chart, the config panel).
    m_stopAction->setShortcutContext(Qt::WindowShortcut);
    chat->addAction(tr("&Regenerate"), m_chat, &ChatPage::regenerate)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    chat->addAction(tr("&Edit last message"), m_chat, &ChatPage::editLast)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    chat->addAction(tr("&Copy last reply"), this, [this] {
        const QString reply = m_chat->lastReply();
        if (reply.isEmpty()) return statusBar()->showMessage(tr("No reply to copy yet."), 4000);
        QGuiApplication::clipboard()->setText(reply);
        statusBar()->showMessage(tr("Copied the last reply (%n characters).", nullptr, static_cast<int>(reply.size())), 4000);
    })->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));

    // Ctrl+1 … Ctrl+6: the sidebar's pages in order.
    QMenu* go = menuBar()->addMenu(tr("&Go"));
    int number = 1;
    for (const PageEntry& page : kPages) {
        const QString name = QString::fromLatin1(page.name);
        go->addAction(tr(page.name), this, [this, name] { showPage(name); })
            ->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_0 + number++)));
    }

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addMenu(m_theme->createMenu(this));
    // The chat's side panels: a small window hides one to give the transcript and the charts its
    // width (the configuration panel takes ~330 px). The choice is kept across runs.
    auto sidePanel = [&](const QString& text, const char* name, Qt::Key key, const QString& setting,
                         const std::function<void(bool)>& show) {
        QAction* a = view->addAction(text);
        a->setObjectName(QString::fromLatin1(name));
        a->setCheckable(true);
        a->setShortcut(QKeySequence(key));
        a->setChecked(QSettings().value(setting, true).toBool());
        show(a->isChecked());
        connect(a, &QAction::toggled, this, [show, setting](bool on) {
            show(on);
            QSettings().setValue(setting, on);
        });
    };
    sidePanel(tr("&Configuration panel"), "configPanelAction", Qt::Key_F9, QStringLiteral("chat/configPanelVisible"),
              [this](bool on) { m_chat->setConfigPanelVisible(on); });
    sidePanel(tr("C&onversations"), "conversationsAction", Qt::Key_F8, QStringLiteral("chat/conversationsVisible"),
              [this](bool on) { m_conversations->setVisible(on); });

    connect(m_chat->transcript(), &TokenStreamView::copied, this, [this](const QString& text) {
        statusBar()->showMessage(tr("Copied %n characters.", nullptr, static_cast<int>(text.size())), 4000);
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), this, [this] {
        QMessageBox::information(this, tr("Keyboard shortcuts"), shortcutList());
    })->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(this, tr("About Inference Workbench"),
                           tr("Inference Workbench %1\nEngine %2\n\nA desktop workbench around its own LLM inference "
                              "engine: chat, attention variants, KV and weight quantization, and what each costs.")
                               .arg(QStringLiteral(WB_VERSION), QString::fromLatin1(workbench::engine_version())));
    });
}

QString MainWindow::shortcutList() const {
    // Read from the menus themselves, so the list cannot drift from what the keys do.
    QStringList lines;
    for (QAction* menu : menuBar()->actions()) {
        if (!menu->menu()) continue;
        for (QAction* a : menu->menu()->actions())
            if (!a->shortcut().isEmpty())
                lines << QStringLiteral("%1\t%2 → %3")
                             .arg(a->shortcut().toString(QKeySequence::NativeText), menu->text().remove('&'), a->text().remove('&'));
    }
    return lines.join('\n');
}

void MainWindow::buildStatusBar() {
    m_statusModel = new QLabel(tr("no model"), this);
    m_statusBackend = new QLabel(tr("CPU"), this);
    m_statusBackend->setToolTip(tr("The backend the model runs on (Configuration → Backend)."));
    m_statusWeights = new QLabel(this);
    m_statusMemory = new QLabel(this);
    m_statusMemory->setToolTip(tr("This process's resident memory (weights, KV pool, the GUI)."));
    m_statusContext = new QLabel(tr("no context"), this);
    m_statusContext->setToolTip(tr("Tokens in the cached conversation / the context length."));
    statusBar()->addWidget(m_statusModel, 1);
    for (QLabel* l : {m_statusBackend, m_statusWeights, m_statusMemory, m_statusContext}) statusBar()->addPermanentWidget(l);
    m_memoryTimer = new QTimer(this);
    connect(m_memoryTimer, &QTimer::timeout, this, &MainWindow::refreshMemory);
    m_memoryTimer->start(1000);
    refreshMemory();
}

QString MainWindow::statusText() const {
    QStringList parts;
    for (QLabel* l : {m_statusModel, m_statusBackend, m_statusWeights, m_statusMemory, m_statusContext})
        if (!l->text().isEmpty()) parts << l->text();
    return parts.join(QStringLiteral(" | "));
}

void MainWindow::refreshMemory() {
    const uint64_t rss = workbench::process_resident_bytes();
    m_statusMemory->setText(rss ? tr("RSS %1").arg(fmt::bytes(static_cast<double>(rss))) : tr("RSS unknown"));
}

void MainWindow::startWithModel(const QString& path) {
    QString chosen = path;
    if (chosen.isEmpty()) chosen = QString::fromStdString(workbench::find_default_model());
    if (chosen.isEmpty()) showNoModelFound();
    else loadModel(chosen);
}

void MainWindow::showNoModelFound() {
    const QString hint = QString::fromStdString(workbench::default_model_hint());
    m_chat->showBanner(tr("No model found. %1 Or open a GGUF file (File → Open, Ctrl+O).").arg(hint), true);
    m_chat->showFetchOffer(!ModelFetcher::scriptPath().isEmpty(), false);
    m_models->showError(QString(), hint);
}

void MainWindow::fetchDefaultModel() {
    QString error;
    if (!m_fetcher->start(&error)) {
        m_chat->showBanner(tr("Could not fetch the default model: %1").arg(error), true);
        return;
    }
    m_chat->showBanner(tr("Fetching the default model into %1…").arg(ModelFetcher::destinationDir()), false);
    m_chat->showFetchOffer(true, true);
}

workbench::EngineConfig MainWindow::loadedConfigWith(const std::string& attention) const {
    workbench::EngineConfig config = m_client->config();
    config.attention = attention;
    config.calibrated_by.clear();
    return config;
}

void MainWindow::loadModel(const QString& path) {
    m_modelPath = path;
    m_chat->showBanner(QString(), false);
    m_statusModel->setText(tr("loading %1…").arg(QFileInfo(path).fileName()));
    m_chat->configPanel()->setLoading(true);
    m_client->loadModel(m_chat->configPanel()->engineConfig(path));
}

void MainWindow::openModel() {
    QSettings settings;
    const QString start = m_modelPath.isEmpty() ? settings.value(QStringLiteral("lastModelDir")).toString()
                                                : QFileInfo(m_modelPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), start,
                                                      tr("GGUF models (*.gguf);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue(QStringLiteral("lastModelDir"), QFileInfo(path).absolutePath());
    m_reloading = false;
    loadModel(path);
}

void MainWindow::onModelLoaded(const workbench::ModelInfo& info) {
    ConfigPanel* config = m_chat->configPanel();
    config->setLoading(false);
    config->setLoadedModel(info, m_client->config());
    m_models->showModel(info);
    m_chat->showBanner(QString(), false);
    const QString name = info.name.empty() ? QFileInfo(QString::fromStdString(info.path)).fileName()
                                           : QString::fromStdString(info.name);
    m_statusModel->setText(name);
    m_statusModel->setToolTip(QString::fromStdString(info.path));
    m_statusBackend->setText(QString::fromStdString(info.backend).toUpper());
    m_statusBackend->setToolTip(tr("The backend the model runs on (Configuration → Backend)."));
    if (const uint64_t device = info.device_weight_bytes + info.device_activation_bytes + info.device_workspace_bytes + info.device_kv_bytes;
        device > 0) {
        m_statusBackend->setText(tr("%1 %2").arg(QString::fromStdString(info.backend).toUpper(), fmt::bytes(static_cast<double>(device))));
        m_statusBackend->setToolTip(tr("Device memory: weights %1, KV %2, activations %3, workspace %4.")
                                        .arg(fmt::bytes(static_cast<double>(info.device_weight_bytes)),
                                             fmt::bytes(static_cast<double>(info.device_kv_bytes)),
                                             fmt::bytes(static_cast<double>(info.device_activation_bytes)),
                                             fmt::bytes(static_cast<double>(info.device_workspace_bytes))));
    }
    m_statusWeights->setText(tr("weights %1").arg(fmt::weightTypes(info)));
    m_chat->metricsPanel()->clearKv();
    m_chat->addNote(tr("Loaded %1: attention %2, KV %3, weights %4, context %5, %6 threads.%7")
                        .arg(name, QString::fromStdString(info.attention), QString::fromStdString(info.kv_types),
                             QString::fromStdString(info.weight_type))
                        .arg(info.n_ctx)
                        .arg(info.n_threads)
                        .arg(m_reloading && !m_chat->history().empty()
                                 ? tr(" The conversation continues: the next turn reads it again from the start.")
                                 : QString()));
    // A base model, or a template we could not render, answers chat turns poorly: said where the
    // user chats, not only on the Models page.
    if (!info.chat_template_warning.empty())
        m_chat->addNote(tr("Chat template: %1. Replies may not follow the conversation; an instruct (chat) model answers better.")
                            .arg(QString::fromStdString(info.chat_template_warning)));
    m_reloading = false;
    // While the chat talks to a server its turns stay recorded under the server's configuration;
    // switching back (useLocalModel) records under this model again.
    if (!isRemote()) m_recorder->setModel(m_client->config(), info, m_client->modelSha256());
    m_compare->setChatConfig(m_client->config());
    rememberRecent(QString::fromStdString(info.path));
    refreshMemory();
    if (isRemote()) showRemoteStatus();  // the chat still talks to the server
    if (m_continue) finishContinue();
    reopenLastConversation();
    if (!m_pendingPrompt.isEmpty()) {
        m_chat->input()->setPlainText(m_pendingPrompt);
        m_pendingPrompt.clear();
        m_chat->send();
    }
}

void MainWindow::rememberRecent(const QString& path) {
    QSettings s;
    QStringList recent = s.value(QStringLiteral("recentModels")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) recent.removeLast();
    s.setValue(QStringLiteral("recentModels"), recent);
    m_models->setRecent(recent);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedModel(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = droppedModel(event->mimeData());
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    m_reloading = false;
    loadModel(path);
}

void MainWindow::onLoadFailed(const QString& message, bool modelKept, bool fileReadable) {
    ConfigPanel* config = m_chat->configPanel();
    config->setLoading(false);
    m_pendingPrompt.clear();
    m_failedPath = m_modelPath;
    const QString failed = QFileInfo(m_modelPath).fileName();
    const auto& kept = m_client->modelInfo();
    if (modelKept && kept) {
        // The model from before still serves: the chat goes on with it, as it was.
        config->setLoadedModel(kept, m_client->config());
        m_modelPath = QString::fromStdString(kept->path);
        const QString name = kept->name.empty() ? QFileInfo(m_modelPath).fileName() : QString::fromStdString(kept->name);
        m_models->showModel(*kept);
        m_chat->showBanner(tr("Could not load %1: %2 Still using %3.").arg(failed, message, name), true);
        m_chat->addNote(tr("Could not load %1: %2 Still using %3 as it was loaded.").arg(failed, message, name), true);
        m_statusModel->setText(name);
        m_statusWeights->setText(tr("weights %1").arg(fmt::weightTypes(*kept)));
    } else {
        config->setLoadedModel(std::nullopt, m_client->config());
        m_models->showError(m_modelPath, message);
        m_chat->showBanner(tr("Could not load %1: %2").arg(failed, message), true);
        m_chat->addNote(message, true);
        m_statusModel->setText(tr("no model"));
        m_statusWeights->clear();
    }
    // A readable file refused under an experiment: offer it with the defaults, not a dead end.
    m_chat->showDefaultsOffer(fileReadable ? config->changesFromDefaults() : QString());
    m_reloading = false;
    if (isRemote()) showRemoteStatus();
    if (m_continue) {
        emit sessionContinued(m_continue->sessionId, false);
        m_continue.reset();
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    m_client->stop();
    m_remote->stop();
    event->accept();
}

void MainWindow::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("window/chatSplit"), m_chat->mainSplitter()->saveState());
    s.setValue(QStringLiteral("window/chatVerticalSplit"), m_chat->chatSplitter()->saveState());
    s.setValue(QStringLiteral("chat/systemPrompt"), m_chat->systemPrompt());
    m_chat->configPanel()->saveSettings(s);
}

void MainWindow::restoreSettings() {
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    m_chat->mainSplitter()->restoreState(s.value(QStringLiteral("window/chatSplit")).toByteArray());
    m_chat->chatSplitter()->restoreState(s.value(QStringLiteral("window/chatVerticalSplit")).toByteArray());
    m_chat->setSystemPrompt(s.value(QStringLiteral("chat/systemPrompt")).toString());
    m_chat->configPanel()->restoreSettings(s);
    if (const QString restored = m_chat->configPanel()->restoredSummary(); !restored.isEmpty())
        statusBar()->showMessage(tr("Restored from your last session: %1 (Configuration → Reset to defaults).").arg(restored), 15000);
    m_models->setRecent(s.value(QStringLiteral("recentModels")).toStringList());
}
