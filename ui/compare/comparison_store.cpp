#include "ui/compare/comparison_store.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace comparisons {

workbench::EngineConfig referenceConfig(const workbench::EngineConfig& config) {
    workbench::EngineConfig reference;
    reference.model_path = config.model_path;
    reference.n_threads = config.n_threads;
    reference.n_ctx = config.n_ctx;
    return reference;  // attention "full", kv_types "f16", weights as stored: the struct's defaults
}

workbench::Result<SavedComparison> save(workbench::Store& store, const std::vector<std::string>& prompts,
                                        const std::vector<workbench::EngineConfig>& configs,
                                        std::vector<ComparisonCell> cells,
                                        const std::vector<std::optional<workbench::ConfigurationRecord>>& stored,
                                        const std::vector<std::string>& errors) {
    SavedComparison saved;
    if (cells.empty() || prompts.empty() || configs.empty())
        return workbench::error(workbench::StatusCode::invalid_argument, "a comparison without runs");
    // Columns with neither an output nor an error are left out; the rest keep their order.
    auto errorOf = [&errors](size_t i) { return i < errors.size() ? errors[i] : std::string(); };
    std::vector<int> position(configs.size(), -1);
    for (size_t i = 0; i < configs.size(); ++i)
        if (!errorOf(i).empty()) position[i] = 0;
    for (const ComparisonCell& c : cells) {
        if (c.column < 0 || c.column >= static_cast<int>(configs.size()) || c.prompt < 0 ||
            c.prompt >= static_cast<int>(prompts.size()))
            return workbench::error(workbench::StatusCode::invalid_argument, "a comparison cell outside its grid");
        position[static_cast<size_t>(c.column)] = 0;
    }
    auto storedAs = [&stored](size_t i) { return i < stored.size() ? stored[i] : std::nullopt; };
    std::vector<std::string> savedErrors;
    size_t firstLocal = 0;
    while (firstLocal + 1 < configs.size() && storedAs(firstLocal)) ++firstLocal;
    for (size_t i = 0; i < configs.size(); ++i) {
        if (position[i] < 0) continue;
        auto id = store.save_configuration(storedAs(i).value_or(workbench::make_configuration(configs[i])));
        if (!id.ok()) return id.status();
        position[i] = static_cast<int>(saved.configurationIds.size());
        saved.configurationIds.push_back(*id);
        savedErrors.push_back(errorOf(i));
    }
    auto reference = store.save_configuration(workbench::make_configuration(referenceConfig(configs[firstLocal])));
    if (!reference.ok()) return reference.status();
    saved.referenceConfigurationId = *reference;

    workbench::SessionRecord session;
    session.configuration_id = saved.configurationIds.front();
    const std::string& first = prompts.front();
    session.title = "Compare: " + first.substr(0, first.find('\n')).substr(0, 100);
    if (prompts.size() > 1)
        session.title += " (+" + std::to_string(prompts.size() - 1) + (prompts.size() == 2 ? " more prompt)" : " more prompts)");
    auto sessionId = store.create_session(session);
    if (!sessionId.ok()) return sessionId.status();
    saved.sessionId = *sessionId;

    workbench::ComparisonRecord record;
    record.name = session.title;
    for (const std::string& p : prompts) record.prompt += (record.prompt.empty() ? "" : "\n---\n") + p;
    record.configuration_ids = saved.configurationIds;
    record.errors = savedErrors;
    auto comparisonId = store.save_comparison(record);
    if (!comparisonId.ok()) return comparisonId.status();
    saved.id = *comparisonId;

    std::stable_sort(cells.begin(), cells.end(), [](const ComparisonCell& a, const ComparisonCell& b) {
        return a.prompt != b.prompt ? a.prompt < b.prompt : a.column < b.column;
    });
    auto cell = cells.begin();
    for (int p = 0; p < static_cast<int>(prompts.size()); ++p) {
        workbench::MessageRecord user;
        user.session_id = saved.sessionId;
        user.role = "user";
        user.text = prompts[static_cast<size_t>(p)];
        if (auto st = store.add_message(user); !st.ok()) return st;
        for (; cell != cells.end() && cell->prompt == p; ++cell) {
            ComparisonCell& c = *cell;
            c.run.session_id = saved.sessionId;
            c.run.configuration_id = saved.configurationIds[static_cast<size_t>(position[static_cast<size_t>(c.column)])];
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
    }
    if (auto st = store.flush(); !st.ok()) return st;
    return saved;
}

workbench::Result<bool> saveEvaluations(workbench::Store& store, const std::vector<workbench::EngineConfig>& configs,
                                        const std::vector<QualityFigures>& figures) {
    if (configs.empty()) return true;
    auto reference = store.save_configuration(workbench::make_configuration(referenceConfig(configs.front())));
    if (!reference.ok()) return reference.status();
    for (const QualityFigures& f : figures) {
        if (f.index < 0 || f.index >= static_cast<int>(configs.size())) continue;
        auto configurationId = store.save_configuration(
            workbench::make_configuration(configs[static_cast<size_t>(f.index)]));
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
        e.retrieval_accuracy = f.retrieval;
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
        // Its quality as evaluated after this comparison ran (the first such evaluation); one made
        // before it, for another comparison, is not this comparison's.
        auto evaluations = store.list_evaluations(id);
        if (evaluations.ok())
            for (const workbench::EvaluationRecord& e : *evaluations) {
                if (e.created_unix_ms < out.record.created_unix_ms) continue;
                auto have = out.evaluationsByConfiguration.find(id);
                if (have == out.evaluationsByConfiguration.end() || e.created_unix_ms < have->second.created_unix_ms)
                    out.evaluationsByConfiguration[id] = e;
            }
    }
    // The session's messages give the prompts in order and which prompt each run answered.
    std::vector<workbench::RunRecord> runs;
    for (workbench::RowId runId : out.record.run_ids) {
        auto run = store.load_run(runId);
        if (run.ok()) runs.push_back(*run);  // else its session was deleted
    }
    std::map<workbench::RowId, size_t> promptOfRun;
    std::map<workbench::RowId, std::string> outputOfRun;
    const workbench::RowId sessionId = runs.empty() ? 0 : runs.front().session_id;
    if (sessionId) {
        auto messages = store.load_messages(sessionId);
        if (messages.ok())
            for (const workbench::MessageRecord& m : *messages) {
                if (m.role == "user") out.prompts.push_back(m.text);
                if (m.role != "assistant" || !m.run_id) continue;
                promptOfRun[m.run_id] = out.prompts.empty() ? 0 : out.prompts.size() - 1;
                outputOfRun[m.run_id] = m.text;
            }
    }
    if (out.prompts.empty()) out.prompts.push_back(out.record.prompt);
    out.errors = out.record.errors;
    out.errors.resize(out.configurations.size());
    const size_t nColumns = out.configurations.size();
    out.runs.assign(out.prompts.size(), std::vector<std::optional<workbench::RunRecord>>(nColumns));
    out.outputs.assign(out.prompts.size(), std::vector<std::optional<std::string>>(nColumns));
    for (const workbench::RunRecord& run : runs) {
        const size_t p = promptOfRun.count(run.id) ? promptOfRun[run.id] : 0;
        // The same configuration twice: its runs fill its columns in order.
        for (size_t c = 0; c < nColumns; ++c) {
            if (out.configurations[c].id != run.configuration_id || out.runs[p][c]) continue;
            out.runs[p][c] = run;
            if (outputOfRun.count(run.id)) out.outputs[p][c] = outputOfRun[run.id];
            break;
        }
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
