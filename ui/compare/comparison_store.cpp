#include "ui/compare/comparison_store.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace comparisons {

workbench::EngineConfig referenceConfig(const workbench::EngineConfig& config) {
    workbench::EngineConfig reference;
    reference.model_path = config.model_path;
    reference.n_threads = config.n_threads;
    reference.n_ctx = config.n_ctx;
    return reference;  // attention "full", kv_types "f16", weights as stored: the struct's defaults
}

workbench::Result<SavedComparison> save(workbench::Store& store, const std::string& prompt,
                                        std::vector<ComparisonColumn> columns) {
    SavedComparison saved;
    if (columns.empty()) return workbench::error(workbench::StatusCode::invalid_argument, "a comparison without runs");
    for (const ComparisonColumn& c : columns) {
        auto id = store.save_configuration(workbench::make_configuration(c.config, "cpu"));
        if (!id.ok()) return id.status();
        saved.configurationIds.push_back(*id);
    }
    auto reference = store.save_configuration(workbench::make_configuration(referenceConfig(columns.front().config), "cpu"));
    if (!reference.ok()) return reference.status();
    saved.referenceConfigurationId = *reference;

    workbench::SessionRecord session;
    session.configuration_id = saved.configurationIds.front();
    const std::string firstLine = prompt.substr(0, prompt.find('\n')).substr(0, 100);
    session.title = "Compare: " + firstLine;
    auto sessionId = store.create_session(session);
    if (!sessionId.ok()) return sessionId.status();
    saved.sessionId = *sessionId;
    workbench::MessageRecord user;
    user.session_id = saved.sessionId;
    user.role = "user";
    user.text = prompt;
    if (auto st = store.add_message(user); !st.ok()) return st;

    workbench::ComparisonRecord record;
    record.name = session.title;
    record.prompt = prompt;
    record.configuration_ids = saved.configurationIds;
    auto comparisonId = store.save_comparison(record);
    if (!comparisonId.ok()) return comparisonId.status();
    saved.id = *comparisonId;

    for (size_t i = 0; i < columns.size(); ++i) {
        ComparisonColumn& c = columns[i];
        c.run.session_id = saved.sessionId;
        c.run.configuration_id = saved.configurationIds[i];
        auto runId = store.begin_run(c.run);
        if (!runId.ok()) return runId.status();
        c.run.id = *runId;
        if (auto st = store.finish_run(c.run); !st.ok()) return st;
        if (auto st = store.append_samples(c.run.id, std::move(c.samples)); !st.ok()) return st;
        workbench::MessageRecord reply;
        reply.session_id = saved.sessionId;
        reply.run_id = c.run.id;
        reply.role = "assistant";
        reply.text = c.output;
        if (auto st = store.add_message(reply); !st.ok()) return st;
        if (auto st = store.add_comparison_run(saved.id, c.run.id); !st.ok()) return st;
    }
    if (auto st = store.flush(); !st.ok()) return st;
    return saved;
}

workbench::Result<bool> saveEvaluations(workbench::Store& store, const std::vector<workbench::EngineConfig>& configs,
                                        const std::vector<QualityFigures>& figures) {
    if (configs.empty()) return true;
    auto reference = store.save_configuration(workbench::make_configuration(referenceConfig(configs.front()), "cpu"));
    if (!reference.ok()) return reference.status();
    for (const QualityFigures& f : figures) {
        if (f.index < 0 || f.index >= static_cast<int>(configs.size())) continue;
        auto configurationId = store.save_configuration(
            workbench::make_configuration(configs[static_cast<size_t>(f.index)], "cpu"));
        if (!configurationId.ok()) return configurationId.status();
        workbench::EvaluationRecord e;
        e.configuration_id = *configurationId;
        e.reference_configuration_id = *reference;
        e.text_name = f.textName.toStdString();
        e.text_sha256 = f.textSha256.toStdString();
        e.n_tokens = f.nTokens;
        e.perplexity = f.perplexity;
        e.kl_mean = f.klMean;
        e.top1_agreement = f.top1;
        e.json = f.json.toStdString();
        auto id = store.save_evaluation(e);
        if (!id.ok()) return id.status();
    }
    if (auto st = store.flush(); !st.ok()) return st;
    return true;
}

workbench::Result<LoadedComparison> load(const workbench::Store& store, workbench::RowId comparisonId) {
    LoadedComparison out;
    auto record = store.load_comparison(comparisonId);
    if (!record.ok()) return record.status();
    out.record = *record;
    for (workbench::RowId id : out.record.configuration_ids) {
        auto c = store.load_configuration(id);
        if (!c.ok()) return c.status();
        out.configurations.push_back(*c);
        auto evaluations = store.list_evaluations(id);
        if (evaluations.ok())
            for (const workbench::EvaluationRecord& e : *evaluations)
                if (!out.evaluationsByConfiguration.count(id) ||
                    out.evaluationsByConfiguration[id].created_unix_ms <= e.created_unix_ms)
                    out.evaluationsByConfiguration[id] = e;
    }
    std::map<workbench::RowId, std::vector<workbench::MessageRecord>> messagesBySession;
    for (workbench::RowId runId : out.record.run_ids) {
        auto run = store.load_run(runId);
        if (!run.ok()) continue;  // its session was deleted
        out.runsByConfiguration[run->configuration_id] = *run;
        if (!run->session_id) continue;
        if (!messagesBySession.count(run->session_id)) {
            auto messages = store.load_messages(run->session_id);
            if (messages.ok()) messagesBySession[run->session_id] = *messages;
        }
        for (const workbench::MessageRecord& m : messagesBySession[run->session_id])
            if (m.run_id == runId) out.outputsByConfiguration[run->configuration_id] = m.text;
    }
    return out;
}

std::optional<double> baselinePerplexity(const workbench::EvaluationRecord& evaluation) {
    const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(evaluation.json)).object();
    const QJsonValue v = o.value(QStringLiteral("ppl_baseline"));
    if (!v.isDouble()) return std::nullopt;
    return v.toDouble();
}

}  // namespace comparisons
