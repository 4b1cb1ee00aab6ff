// Sweep rows: parsing the configuration list, measuring one configuration beside the baseline,
// and keeping a row in the session database.
#include "workbench/sweep.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace workbench {
namespace {

// "SPEC [--kv-type T] [--weights W] [--mla-cache F]"; the error names the line and the word.
Result<SweepConfig> parse_line(const std::string& line, size_t number) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    SweepConfig c;
    c.line = line.substr(line.find_first_not_of(" \t"));
    c.attention = words.front();
    for (size_t i = 1; i < words.size(); ++i) {
        const bool known = words[i] == "--kv-type" || words[i] == "--weights" || words[i] == "--mla-cache";
        if (!known || i + 1 >= words.size())
            return error(StatusCode::invalid_argument, "configuration line " + std::to_string(number) + ": '" + words[i] + "' " +
                                                           (known ? "needs a value" : "is not --kv-type T, --weights W or --mla-cache F"));
        (words[i] == "--kv-type" ? c.kv_types : words[i] == "--weights" ? c.weights : c.mla_cache) = words[i + 1];
        ++i;
    }
    EngineConfig check;
    check.attention = c.attention;
    check.kv_types = c.kv_types;
    check.weight_type = c.weights;
    check.mla_cache = c.mla_cache;
    if (Status st = check_engine_config(check); !st.ok())
        return st.with_context("configuration line " + std::to_string(number) + " ('" + c.line + "'): ");
    return c;
}

// Whether a layout runs an eviction press on some layers.
bool layout_presses(const std::string& attention) {
    const auto layout = parse_attention_layout(attention);
    return layout.ok() && std::any_of(layout->begin(), layout->end(), [](const AttentionTerm& t) { return is_eviction_press(t.spec.kind); });
}

}  // namespace

const std::vector<std::string>& standard_sweep_preset() {
    // Two points of each variant's main parameter and one row per technique, so that the preset
    // with retrieval stays within 90 minutes on 2 cores; VARIANTS_EVAL.md and the speed sweeps
    // (bench/speed_configs*.txt) carry the wider spreads.
    static const std::vector<std::string> preset = {
        "full",
        "full --kv-type q8_0",
        "full --kv-type q4_0",
        "full --kv-type q4_0,recent=128",   // KIVI's f16 residual: the last 128 tokens beside 4-bit blocks
        "full --kv-type k=q4_0,v=q2_0,recent=128",   // 2-bit values (rotated) under 4-bit keys: less than plain q4_0 holds
        "sliding:window=256,sinks=4",
        "sliding:window=1020,sinks=4",
        "topk:k=256,recent=64",
        "topk:k=1024,recent=64",
        "topk:k=256,recent=64,select=token",   // each token by a 2-bit code of its key instead of whole blocks
        "compressed:block=4,recent=256,sinks=4",   // sinks: without them pooling loses the attention sink
        "compressed:block=4,recent=256,sinks=4,pool=weighted",
        "heavy:block=16,k=32,recent=256,sinks=4",
        "heavy:block=16,k=32,recent=256,sinks=4,read=tokens --kv-type q4_0",   // the exact window over 4-bit rows
        "cross_layer:group=2,merge=mean",
        "cross_layer:group=2,layers=16-29",
        "latent:rank=256",
        "sliding:window=512,sinks=4,layers=0-14;topk:k=512",
    };
    return preset;
}

const std::vector<std::string>& presses_sweep_preset() {
    static const std::vector<std::string> preset = [] {
        std::vector<std::string> lines = {"full"};
        for (const char* keep : {"0.25", "0.5"})
            for (const char* press : {"snapkv", "pyramidkv", "adakv", "tova", "knorm", "h2o"}) lines.push_back(std::string(press) + ":keep=" + keep);
        return lines;
    }();
    return preset;
}

Result<std::vector<SweepConfig>> parse_sweep_configs(const std::vector<std::string>& lines) {
    std::vector<SweepConfig> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i].substr(0, lines[i].find('#'));
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        line.erase(line.find_last_not_of(" \t\r") + 1);
        WB_ASSIGN_OR_RETURN(SweepConfig c, parse_line(line, i + 1));
        out.push_back(std::move(c));
    }
    if (out.empty()) return error(StatusCode::invalid_argument, "the configuration list has no configurations");
    return out;
}

RetrievalOptions sweep_retrieval_options(const SweepSettings& settings) {
    RetrievalOptions ro = settings.retrieval_options;
    std::erase_if(ro.lengths, [&](int32_t l) { return l > settings.ctx; });
    if (ro.lengths.empty()) ro.lengths = {settings.ctx};
    return ro;
}

void put_retrieval_figures(Json& row, const RetrievalReport& report, const RetrievalOptions& options) {
    const Json figures = retrieval_report_json(report);
    row["retrieval_accuracy"] = figures["retrieval_accuracy"];
    row["retrieval_trials"] = figures["retrieval_trials"];
    row["retrieval_interval"] = figures["retrieval_interval"];
    row["retrieval_score"] = figures["retrieval_score"];
    row["retrieval_cells"] = figures["cells"];
    row["question"] = options.question_agnostic ? "agnostic" : "aware";
    if (options.follow_up) row["follow_up"] = true;
}

EngineConfig sweep_engine_config(const SweepConfig& config, const EngineConfig& base, const SweepSettings& settings) {
    EngineConfig c = base;
    c.attention = config.attention;
    c.kv_types = config.kv_types;
    c.weight_type = config.weights;
    c.mla_cache = config.mla_cache;
    c.n_ctx = settings.ctx + std::max(settings.n_decode, retrieval_tokens_after_prompt(settings.retrieval_options)) + 16;
    c.kv_budget_bytes = 0;
    c.n_seq_max = 1;
    c.draft_model_path.clear();
    c.on_load_progress = nullptr;
    return c;
}

EngineConfig sweep_baseline_config(const EngineConfig& base, const SweepSettings& settings) {
    EngineConfig c = sweep_engine_config(SweepConfig{"full", "full", "f16", ""}, base, settings);
    c.n_ctx = settings.ctx + 48;
    return c;
}

Json measure_sweep_row(const SweepConfig& sc, const EngineConfig& base, QualityBaseline& baseline, const std::vector<TokenId>& text,
                       const SweepSettings& s, const ProgressCallback& progress, const std::atomic<bool>* cancel) {
    Json row = {{"config", sc.line}, {"model", std::filesystem::path(base.model_path).filename().string()},
                {"attention", sc.attention}, {"kv_type", sc.kv_types},
                {"weights", sc.weights.empty() ? std::string("as stored") : sc.weights}};
    auto failed = [&](const Status& st) {
        const bool cancelled = st.code() == StatusCode::cancelled || (cancel && cancel->load());
        row["status"] = cancelled ? "cancelled" : "failed";
        row["error"] = st.message();
        return row;
    };
    const RetrievalOptions ro = sweep_retrieval_options(s);
    const int64_t n_trials = static_cast<int64_t>(ro.lengths.size() * ro.depths_pct.size() * ro.kinds.size()) * ro.trials;
    const int64_t total = s.windows + 1 + (s.retrieval ? n_trials : 0);
    int64_t done = 0;
    auto step = [&](int64_t d) {
        if (progress) progress(std::min(d, total), total);
    };
    const EngineConfig c = sweep_engine_config(sc, base, s);
    auto loaded = Engine::load(c);
    if (!loaded.ok()) return failed(loaded.status());
    Engine& engine = **loaded;
    const ModelInfo& info = engine.model_info();
    row["attention"] = info.attention;
    row["kv_type"] = info.kv_types;
    row["weights"] = info.weight_type;
    if (!info.mla_cache.empty()) row["mla_cache"] = info.mla_cache;
    QualityOptions qo;
    qo.n_ctx = s.ctx;
    qo.max_windows = s.windows;
    auto q = evaluate_quality(engine, baseline, text, qo, [&](int64_t d, int64_t) { step(done + d); }, cancel);
    if (!q.ok()) return failed(q.status());
    done = q->n_windows;
    if (cancel && cancel->load()) return failed(error(StatusCode::cancelled, "cancelled"));
    // The reference measured again just before the row's own decode: this VM's bandwidth drifts
    // by a fifth within minutes, and a row compared with a reference taken an hour earlier shows
    // the drift instead of the variant. The run's first reference stands in if this one fails.
    double reference_gb_s = s.reference_gb_s;
    if (s.reference_gb_s > 0)
        if (auto ref = measure_decode_reference(baseline.engine(), text, s); ref.ok()) reference_gb_s = ref->gb_s;
    if (cancel && cancel->load()) return failed(error(StatusCode::cancelled, "cancelled"));
    auto timed = run_after_window(engine, text, q->n_windows, s.ctx, s.n_decode);
    if (!timed.ok()) return failed(timed.status());
    step(++done);
    const GenerationMetrics& m = *timed;
    if (m.decode_tok_s && *m.decode_tok_s > 0) row["decode_ms"] = json_rounded(1000.0 / *m.decode_tok_s);
    if (reference_gb_s > 0) {
        const double bytes = static_cast<double>(info.decode_weight_bytes + m.kv_bytes_read_per_token);
        row["decode_ms_predicted"] = json_rounded(bytes / (reference_gb_s * 1e9) * 1000.0);
        row["reference_gb_s"] = json_rounded(reference_gb_s);
    }
    if (const auto step = engine.last_step_roofline().decode) {
        row["decode_step_ms"] = {{"matmul", json_rounded(step->matmul.seconds * 1000.0)},
                                 {"attention", json_rounded(step->attention.seconds * 1000.0)},
                                 {"index", json_rounded(step->index.seconds * 1000.0)}};
        row["index_bytes_read_per_token"] = static_cast<uint64_t>(step->index.bytes);
    }
    // A press holds its prompt whole until the prompt's last step is committed; what it keeps is
    // what it holds while it decodes.
    row["kv_bytes_peak"] = std::max(q->kv_bytes_peak, m.kv_bytes_peak);
    row["kv_bytes"] = layout_presses(info.attention) ? m.kv_bytes : std::max(q->kv_bytes_peak, m.kv_bytes_peak);
    row["kv_bytes_full"] = std::max(q->kv_bytes_full, m.kv_bytes_full);
    row["kv_bytes_read_per_token"] = m.kv_bytes_read_per_token;
    row["prefill_tok_s"] = json_rounded(m.prefill_tok_s);
    row["decode_tok_s"] = json_rounded(m.decode_tok_s);
    row["ppl"] = json_rounded(q->perplexity);
    row["delta_ppl_pct"] = json_rounded(q->delta_ppl_pct);
    row["kl"] = json_rounded(q->kl_mean);
    row["top1"] = json_rounded(q->top1_agreement);
    if (s.retrieval) {
        const int64_t before = done;
        auto r = evaluate_retrieval(engine, ro, [&](int64_t d, int64_t) { step(before + d); }, cancel);
        if (!r.ok()) return failed(r.status());
        put_retrieval_figures(row, *r, ro);
    }
    row["ctx"] = s.ctx;
    row["windows"] = q->n_windows;
    row["scored_tokens"] = q->n_tokens_scored;
    row["status"] = "ok";
    return row;
}

Result<DecodeReference> measure_decode_reference(Engine& baseline, const std::vector<TokenId>& text, const SweepSettings& s) {
    DecodeReference ref;
    ref.ctx = std::min(ref.ctx, s.ctx);   // the baseline holds one window and its decoded tokens
    if (text.size() < static_cast<size_t>(ref.ctx) + 1)
        return error(StatusCode::invalid_argument, "the text has fewer than " + std::to_string(ref.ctx + 1) + " tokens for the decode reference");
    // A run to touch the pages, then the median of three: a row's decode is one run, so the
    // reference is what one run typically gives (the best of three read a fifth faster than the
    // rows beside it on this VM, and every row looked slower than its bytes).
    std::vector<double> rates;
    for (int run = 0; run < 4; ++run) {
        WB_ASSIGN_OR_RETURN(GenerationMetrics m, run_after_window(baseline, text, 1, ref.ctx, s.n_decode));
        if (run == 0 || !m.decode_tok_s || *m.decode_tok_s <= 0) continue;
        ref.bytes_per_token = baseline.model_info().decode_weight_bytes + m.kv_bytes_read_per_token;
        rates.push_back(*m.decode_tok_s);
    }
    if (!rates.empty()) {
        std::sort(rates.begin(), rates.end());
        ref.decode_tok_s = rates[rates.size() / 2];
    }
    if (ref.decode_tok_s <= 0) return error(StatusCode::internal, "the decode reference produced no decode rate");
    ref.gb_s = static_cast<double>(ref.bytes_per_token) * ref.decode_tok_s / 1e9;
    return ref;
}

Status record_sweep_row(Store& store, RowId sweep_id, RowId baseline_configuration_id, const EngineConfig& row_config,
                        const Json& row, const std::string& text_name) {
    RowId evaluation_id = 0;
    if (row.value("status", "") == "ok") {
        WB_ASSIGN_OR_RETURN(RowId configuration_id, store.save_configuration(make_configuration(row_config)));
        auto figure = [&](const char* key) -> std::optional<double> {
            return row.contains(key) && row[key].is_number() ? std::optional<double>(row[key].get<double>()) : std::nullopt;
        };
        EvaluationRecord e;
        e.configuration_id = configuration_id;
        e.reference_configuration_id = baseline_configuration_id;
        e.text_name = "sweep: " + text_name;
        e.n_tokens = static_cast<int32_t>(row.value("scored_tokens", int64_t{0}));
        e.perplexity = figure("ppl");
        e.kl_mean = figure("kl");
        e.top1_agreement = figure("top1");
        e.retrieval_accuracy = figure("retrieval_accuracy");
        e.json = dump_json(row);
        WB_ASSIGN_OR_RETURN(evaluation_id, store.save_evaluation(e));
    }
    return store.add_sweep_row(sweep_id, evaluation_id, dump_json(row));
}

Json sweep_settings_json(const SweepSettings& settings, size_t configurations) {
    Json j = {{"ctx", settings.ctx}, {"windows", settings.windows}, {"retrieval", settings.retrieval},
              {"trials", settings.retrieval_options.trials}, {"configurations", configurations}};
    if (settings.reference_gb_s > 0) j["reference_gb_s"] = json_rounded(settings.reference_gb_s);
    if (settings.retrieval) {
        j["tasks"] = Json::array();
        for (RetrievalKind kind : settings.retrieval_options.kinds) j["tasks"].push_back(retrieval_kind_name(kind));
        j["question"] = settings.retrieval_options.question_agnostic ? "agnostic" : "aware";
        if (settings.retrieval_options.follow_up) j["follow_up"] = true;
    }
    return j;
}

std::string sweep_row_label(const Json& row) {
    if (row.value("backend", "") == "remote") {
        std::string label = row.value("server", "remote") + " server";
        if (row.value("attention", "full") != "full") label += " · " + row.value("attention", "");
        return label + " · KV " + row.value("kv_type", "");
    }
    std::string label = row.value("attention", "") + " · KV " + row.value("kv_type", "");
    if (row.value("config", "").find("--weights") != std::string::npos) label += " · W " + row.value("weights", "");
    if (row.value("mla_cache", "latent") != "latent") label += " · MLA " + row.value("mla_cache", "");
    return label;
}

}  // namespace workbench
