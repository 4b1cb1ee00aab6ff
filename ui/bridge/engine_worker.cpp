#include "ui/bridge/engine_worker.h"

#include <QDateTime>
#include <QFileInfo>
#include <QSettings>
#include <algorithm>
#include <string>

#include "workbench/digest.h"
#include "workbench/model_file.h"
#include "workbench/store.h"

void registerEngineTypes() {
    qRegisterMetaType<workbench::EngineConfig>();
    qRegisterMetaType<workbench::ModelInfo>();
    qRegisterMetaType<workbench::GenerationRequest>();
    qRegisterMetaType<ChatHistory>();
    qRegisterMetaType<CancelFlag>();
    qRegisterMetaType<TokenSample>();
    qRegisterMetaType<ReplyForm>();
    qRegisterMetaType<ToolOffer>();
    qRegisterMetaType<QList<TokenSample>>();
    qRegisterMetaType<ReplySummary>();
    qRegisterMetaType<BlockMapSnapshot>();
    qRegisterMetaType<MachineCeilings>();
    qRegisterMetaType<workbench::Engine::RooflineSnapshot>();
}

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {}

// Runs on the worker thread (QThread::finished → deleteLater), so the Engine dies where it lived.
EngineWorker::~EngineWorker() = default;

workbench::Result<std::unique_ptr<workbench::Engine>> EngineWorker::loadWithProgress(const workbench::EngineConfig& requested) {
    workbench::EngineConfig config = requested;
    int lastPercent = -1;
    config.on_load_progress = [this, &lastPercent](const std::string& step, float fraction) {
        // Per-tensor callbacks would flood the GUI's queue; whole percents are enough for a bar.
        const int percent = static_cast<int>(fraction * 100.0f);
        if (percent == lastPercent) return;
        lastPercent = percent;
        emit loadProgress(QString::fromStdString(step), fraction);
    };
    return workbench::Engine::load(config);
}

void EngineWorker::loadModel(const workbench::EngineConfig& requested, bool keepOnFailure) {
    emit loadStarted(QString::fromStdString(requested.model_path));
    // Settings that cannot parse and a file that is not a readable GGUF (corrupt, truncated, not a
    // model) are refused while the working model still serves: both checks cost next to nothing.
    if (m_engine && keepOnFailure) {
        workbench::Status refused = workbench::check_engine_config(requested);
        const bool settingsParse = refused.ok();
        if (settingsParse) refused = workbench::summarize_model_file(requested.model_path).status();
        if (!refused.ok()) {
            emit loadFailed(QString::fromStdString(refused.message()), true, !settingsParse);
            return;
        }
    }
    // The old model goes before the new one loads: two at once could double the memory of a large one.
    std::optional<workbench::EngineConfig> previous;
    if (m_engine && keepOnFailure) previous = m_engineConfig;
    m_engine.reset();
    auto loaded = loadWithProgress(requested);
    if (!loaded.ok()) {
        const QString message = QString::fromStdString(loaded.status().message());
        // A readable file that did not load: the settings (or memory) were the cause, not the file.
        const bool fileReadable = workbench::summarize_model_file(requested.model_path).ok();
        // The new settings cannot load (an architecture we lack, a KV budget too small, memory):
        // the configuration that worked loads again, so the chat goes on.
        if (previous) {
            if (auto back = loadWithProgress(*previous); back.ok()) {
                m_engine = std::move(back).value();
                m_engineConfig = *previous;
                emit loadFailed(message, true, fileReadable);
                return;
            }
        }
        emit loadFailed(message, false, fileReadable);
        return;
    }
    m_engine = std::move(loaded).value();
    m_engineConfig = requested;
    m_engineConfig.on_load_progress = nullptr;
    emit modelDigest(modelDigestFor(requested.model_path));
    emit modelLoaded(m_engine->model_info());
    emit ceilingsMeasured(ceilings());
}

MachineCeilings EngineWorker::ceilings() {
    // Once per machine, thread count and weight size: a second of microbenchmarks, then remembered.
    const workbench::ModelInfo& info = m_engine->model_info();
    QSettings settings;
    const QString key = QStringLiteral("roofline/%1-%2t-%3MB")
                            .arg(QString::fromStdString(info.cpu_features).simplified().replace(QLatin1Char(' '), QLatin1Char('_')))
                            .arg(info.n_threads)
                            .arg(info.decode_weight_bytes >> 20);
    MachineCeilings c;
    c.bandwidthGbS = settings.value(key + QStringLiteral("/bandwidth")).toDouble();
    c.int8Gops = settings.value(key + QStringLiteral("/int8")).toDouble();
    c.fp32Gflops = settings.value(key + QStringLiteral("/fp32")).toDouble();
    if (c.bandwidthGbS > 0 && c.int8Gops > 0 && c.fp32Gflops > 0) return c;
    c.bandwidthGbS = workbench::measure_read_bandwidth_gb_s(info.decode_weight_bytes, info.n_threads);
    const workbench::ComputePeaks peaks = workbench::measure_compute_peaks(info.n_threads);
    c.int8Gops = peaks.int8_gop_s;
    c.fp32Gflops = peaks.fp32_gflop_s;
    settings.setValue(key + QStringLiteral("/bandwidth"), c.bandwidthGbS);
    settings.setValue(key + QStringLiteral("/int8"), c.int8Gops);
    settings.setValue(key + QStringLiteral("/fp32"), c.fp32Gflops);
    return c;
}

BlockMapSnapshot EngineWorker::blockMap() const {
    const workbench::KvBlockMap m = m_engine->kv_block_map();
    BlockMapSnapshot s;
    s.layers = m.n_layers;
    s.blocks = m.n_blocks;
    s.blockTokens = m.block_tokens;
    s.cells.reserve(static_cast<qsizetype>(m.cells.size()));
    for (workbench::KvBlockState c : m.cells) s.cells.append(static_cast<quint8>(c));
    return s;
}

void EngineWorker::sendChat(const ChatHistory& messages, const ToolOffer& tools, const workbench::GenerationRequest& chatRequest,
                            const CancelFlag& cancel) {
    if (!m_engine) {
        emit replyFailed(tr("No model is loaded."));
        return;
    }
    // The conversation through the model's own template, as the server renders it: tools offered
    // where given, calls and results in their places, a required call forced by its grammar.
    workbench::Json toolsJson;
    if (!tools.json.isEmpty())
        if (auto parsed = workbench::parse_json(tools.json.toStdString()); parsed.ok()) toolsJson = std::move(*parsed);
    const bool offered = toolsJson.is_array() && !toolsJson.empty();
    const bool forced = offered && tools.required;
    const workbench::ChatFormat format = forced ? workbench::forced_call_format(m_engine->chat_format()) : m_engine->chat_format();
    const bool plain = !offered && std::all_of(messages.begin(), messages.end(), [](const workbench::ChatMessage& m) {
        return m.role != "tool" && m.tool_calls.empty();
    });
    std::vector<workbench::TokenId> prompt;
    if (plain) {
        // A template that refuses plain turns falls back to its family's native rendering.
        prompt = m_engine->tokenize_chat(messages, true);
    } else {
        auto t = m_engine->tokenize_conversation(
            workbench::chat_template_input(m_engine->chat_format(), workbench::chat_messages_json(messages), toolsJson, workbench::Json::object()));
        if (!t.ok()) {
            emit replyFailed(tr("The model's chat template refused the conversation: %1").arg(QString::fromStdString(t.status().message())));
            return;
        }
        prompt = std::move(*t);
    }
    workbench::GenerationRequest request = chatRequest;
    request.render_special = format.needs_special_text();
    if (forced) {
        auto grammar = workbench::tool_call_grammar(format, toolsJson, "", true);
        if (!grammar.ok()) {
            emit replyFailed(tr("The tools cannot be required: %1").arg(QString::fromStdString(grammar.status().message())));
            return;
        }
        request.grammar = std::move(*grammar);
    }
    emit replyFormKnown(ReplyForm{format, offered, !forced && m_engine->prompt_opens_thinking(prompt)});
    QElapsedTimer clock;
    clock.start();
    QString pendingText;
    QList<TokenSample> pendingSamples;
    qint64 lastFlushNs = 0;
    auto flush = [&] {
        if (!pendingText.isEmpty()) emit tokensArrived(pendingText);
        if (!pendingSamples.isEmpty()) {
            emit samplesArrived(pendingSamples);
            emit blockMapArrived(blockMap());
        }
        pendingText.clear();
        pendingSamples.clear();
    };
    auto maybeFlush = [&] {
        const qint64 now = clock.nsecsElapsed();
        if (now - lastFlushNs < qint64(kBatchMs) * 1000000) return;
        flush();
        lastFlushNs = now;
    };
    // Once per sampled token, with the engine's own KV figures and timestamp (gaps are exact).
    double lastTokenMs = 0;
    const uint64_t kvAllocated = m_engine->model_info().kv_bytes_allocated;
    auto onToken = [&](const workbench::RequestEvent& t) {
        TokenSample s;
        s.nTokensContext = t.kv_tokens;   // what the bytes below hold (this token runs next)
        s.kvBytesInUse = t.kv_bytes_in_use;
        s.kvBytesFull = t.kv_bytes_full;
        s.kvBytesAllocated = kvAllocated;
        s.msSinceRequest = clock.nsecsElapsed() / 1e6;
        s.firstOfReply = t.index == 0;
        if (!s.firstOfReply) s.gapMs = t.t_ms - lastTokenMs;
        lastTokenMs = t.t_ms;
        pendingSamples.append(s);
        maybeFlush();
    };
    auto onText = [&](std::string_view text) {
        pendingText += QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
        maybeFlush();
    };
    auto result = m_engine->generate_tokens(prompt, request, onText, cancel.get(), onToken);
    flush();
    emit blockMapArrived(blockMap());
    emit rooflineArrived(m_engine->last_step_roofline());
    if (!result.ok()) {
        emit replyFailed(QString::fromStdString(result.status().message()));
        return;
    }
    ReplySummary summary;
    summary.text = QString::fromStdString(result->text);
    summary.metrics = result->metrics;
    summary.stopReason = result->stop_reason;
    summary.stopReasonName = QString::fromLatin1(workbench::stop_reason_name(result->stop_reason));
    summary.seed = request.sampling.seed;
    emit replyFinished(summary);
}

QString EngineWorker::modelDigestFor(const std::string& path) {
    // Once per file: a reload of the same file with other settings (Apply) reads it again only
    // when it changed on disk.
    const QFileInfo file(QString::fromStdString(path));
    const QString key = file.absoluteFilePath() + QLatin1Char('|') + QString::number(file.size()) + QLatin1Char('|') +
                        QString::number(file.lastModified().toMSecsSinceEpoch());
    if (key == m_digestKey) return m_digest;
    auto digest = workbench::file_sha256(path);
    m_digestKey = key;
    m_digest = digest.ok() ? QString::fromStdString(*digest) : QString();
    return m_digest;
}

void EngineWorker::resetConversation() {
    if (m_engine) m_engine->reset();
}

void EngineWorker::unloadModel() {
    m_engine.reset();
    m_engineConfig = {};
}
