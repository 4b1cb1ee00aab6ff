// Engine construction: open the GGUF, build tokenizer, chat template and model, reserve the KV
// cache, and describe the model for `inspect` and the UI.
#include <fstream>
#include <map>
#include <sstream>

#include "engine/engine_impl.h"
#include "workbench/calibration.h"
#include "workbench/backends.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "model/arch/architecture.h"
#include "model/requantize.h"
#include "tokenizer/vocab_loader.h"

namespace workbench {

namespace {

constexpr int32_t kDefaultMaxContext = 8192;

ModelInfo describe(const Engine::Impl& e) {
    ModelInfo m;
    const ModelHparams& hp = e.model->hparams();
    const ModelWeights& w = e.model->weights();
    m.path = e.file->path();
    m.name = hp.name;
    m.arch = hp.arch;
    m.file_bytes = e.file->file_size();
    m.weight_bytes = w.n_bytes;
    m.n_params = w.n_params;
    m.n_vocab = hp.n_vocab;
    m.n_ctx_train = hp.n_ctx_train;
    m.n_ctx = e.n_ctx;
    m.n_embd = hp.n_embd;
    m.n_layer = hp.n_layer;
    m.n_head = hp.n_head;
    m.n_head_kv = hp.n_head_kv;
    m.head_dim = hp.head_dim;
    m.n_rot = hp.n_rot;
    m.kv_lora_rank = hp.mla.kv_lora_rank;
    m.q_lora_rank = hp.mla.q_lora_rank;
    m.head_dim_v = hp.head_dim_v;
    m.mla_cache = hp.is_mla() ? (hp.mla.expanded ? "expanded" : "latent") : "";
    m.kv_rope_offset = e.model->kv_shape().rope_offset;
    m.mla_head_k = hp.mla.head_k;
    m.mla_head_v = hp.mla.head_v;
    m.n_ff = hp.n_ff;
    m.n_expert = hp.experts.n_expert;
    m.n_expert_used = hp.experts.n_expert_used;
    m.n_ff_exp = hp.experts.n_ff_exp;
    m.rope_freq_base = hp.rope_freq_base;
    m.rms_eps = hp.rms_eps;
    m.tied_output = w.tied_output;
    m.tokenizer_model = e.tokenizer->vocab().model;
    m.tokenizer_pre = e.tokenizer->vocab().pre;
    if (e.model_template.parsed) {
        m.chat_template_family = "jinja";   // the file's own template, rendered as transformers does
    } else {
        m.chat_template_family = chat_template_family_name(e.chat_template.family());
        m.chat_template_warning = e.template_parse_error.empty()
                                      ? e.chat_template.warning()
                                      : "the file's chat template does not parse (" + e.template_parse_error + "); rendering as " +
                                            m.chat_template_family;
    }
    m.bos_id = e.tokenizer->vocab().bos_id;
    m.eos_id = e.tokenizer->vocab().eos_id;
    std::map<std::string, TensorTypeCount> by_type;
    for (const auto& t : e.file->tensors()) {
        auto& c = by_type[std::string(dtype_name(t.type))];
        c.type = std::string(dtype_name(t.type));
        c.n_tensors++;
        c.n_bytes += t.n_bytes;
    }
    for (auto& [_, c] : by_type) m.tensor_types.push_back(c);
    // The matrices as computed with (after --weights and its per-tensor fallbacks).
    std::map<std::string, TensorTypeCount> computed;
    auto count = [&](const WeightTensor& t) {
        if (!t.present()) return;
        auto& c = computed[std::string(dtype_name(t.type))];
        c.type = std::string(dtype_name(t.type));
        c.n_tensors++;
        c.n_bytes += t.n_bytes;
    };
    for (const auto& l : w.layers)
    {
        for (const WeightTensor* t : layer_matrices(l)) count(*t);
        for (const WeightTensor* t : layer_expert_matrices(l)) count(*t);
        for (const WeightTensor* t : layer_head_matrices(l)) count(*t);
    }
    for (auto& [_, c] : computed) m.layer_weight_types.push_back(c.type);
    count(w.output);
    for (auto& [_, c] : computed) m.weight_types.push_back(c);
    if (w.output.present()) m.output_weight_type = std::string(dtype_name(w.output.type));
    m.kv_bytes_per_token = e.kv->full_bytes_per_token();
    m.attention = attention_layout_name(e.layout);
    m.native_attention = NativeAttention{hp.sliding_window, hp.local_layers};
    m.attention_runs = e.kv->layout_name();
    m.context_bounded = !e.kv->unbounded_context();
    m.kv_types = kv_types_name(e.kv->types());
    m.kv_bytes_allocated = e.kv->usage().bytes_allocated;
    // A decode step reads every matrix once; the embedding table only when it is also the output.
    const WeightTensor* mlp_up = w.layers.empty() ? nullptr : w.layers[0].ffn_up.present() ? &w.layers[0].ffn_up : &w.layers[0].ffn_up_exps;
    m.weight_type = std::string(dtype_name(mlp_up && mlp_up->present() ? mlp_up->type : w.output.type));
    // The experts a token does not run are not read for it.
    uint64_t idle_expert_bytes = 0;
    if (hp.experts.n_expert > 0)
        for (const auto& l : w.layers)
            for (const WeightTensor* t : layer_expert_matrices(l))
                if (t->present())
                    idle_expert_bytes += t->n_bytes / static_cast<uint64_t>(t->n_mat) * static_cast<uint64_t>(t->n_mat - hp.experts.n_expert_used);
    m.decode_weight_bytes = w.n_bytes - (w.tied_output ? 0 : w.token_embd.n_bytes) - idle_expert_bytes;
    m.n_threads = e.pool->n_threads();
    m.backend = e.config.backend;
    const DeviceMemory device = e.model->device_memory();
    m.device_weight_bytes = device.weights;
    m.device_activation_bytes = device.activations;
    m.device_workspace_bytes = device.workspace;
    m.device_kv_bytes = device.kv;
    m.cpu_features = cpu_features().describe();
    m.cpu_kernels = matmul_kernel_name();
    return m;
}

}  // namespace

// The latent variant's calibration: the last 512 tokens of the configured text, else of the
// shipped calibration text (never the evaluation text).
static Result<std::vector<TokenId>> calibration_tokens(const EngineConfig& config, const Tokenizer& tokenizer) {
    std::string path = config.calibration_text;
    if (path.empty()) path = default_calibration_text_path();
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(StatusCode::not_found, "latent: cannot read the calibration text " + path);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<TokenId> tokens = tokenizer.encode(text.str(), false, false);
    if (tokens.size() < 64) return error(StatusCode::invalid_argument, "latent: the calibration text " + path + " has under 64 tokens");
    return tokens;
}

// The factors see the text's last 512 tokens; latent:ranks=measured scores its layers on the 512
// before them (fewer when the text is shorter; under 16, the load says so).
struct CalibrationSplit {
    std::span<const TokenId> factors, held_out;
};
static CalibrationSplit split_calibration(std::span<const TokenId> tokens) {
    constexpr size_t kFactorTokens = 512, kHeldOutTokens = 512;
    const size_t n_factors = std::min(tokens.size(), kFactorTokens);
    const size_t n_held = std::min(tokens.size() - n_factors, kHeldOutTokens);
    return {tokens.last(n_factors), tokens.subspan(tokens.size() - n_factors - n_held, n_held)};
}

// The draft model for speculative decoding: full attention, f16 KV, the target's context and
// sequences; its forward passes run on the target's thread pool (its own has one thread). Its
// tokens must be the target's, id for id.
static Result<std::unique_ptr<Engine>> load_draft_model(const EngineConfig& target_config, const Engine::Impl& target) {
    EngineConfig c;
    c.model_path = target_config.draft_model_path;
    c.n_threads = 1;
    c.backend = target_config.backend;
    c.n_ctx = target.n_ctx;
    c.n_seq_max = target_config.n_seq_max;
    auto draft = Engine::load(c);
    if (!draft.ok()) return error(draft.status().code(), "draft model: " + draft.status().message());
    const Tokenizer& mine = *target.tokenizer;
    const int32_t n_theirs = (*draft)->model_info().n_vocab;
    if (n_theirs != mine.n_vocab())
        return error(StatusCode::invalid_argument, "draft model " + c.model_path + " has a vocabulary of " + std::to_string(n_theirs) +
                                                       " tokens, the model " + std::to_string(mine.n_vocab()) +
                                                       ": speculative decoding needs the same tokens");
    for (TokenId id = 0; id < n_theirs; ++id) {
        const std::string theirs = (*draft)->token_text(id), ours = mine.token_to_piece(id, true);
        if (theirs != ours)
            return error(StatusCode::invalid_argument, "draft model " + c.model_path + " has another vocabulary: token " + std::to_string(id) +
                                                           " is '" + theirs + "' there and '" + ours + "' in the model");
    }
    return std::move(*draft);
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const EngineConfig& config) {
    if (config.model_path.empty())
        return error(StatusCode::invalid_argument, "no model file given. " + default_model_hint());
    if (config.n_threads < 0 || config.n_threads > 1024)
        return error(StatusCode::invalid_argument, "threads must be between 1 and 1024 (got " + std::to_string(config.n_threads) + ")");
    if (config.n_ctx < 0)
        return error(StatusCode::invalid_argument, "context length must be positive (got " + std::to_string(config.n_ctx) + ")");
    WB_RETURN_IF_ERROR(check_backend_available(config.backend));
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->config.on_load_progress = nullptr;   // it may capture the caller's stack: used during load only
    WB_ASSIGN_OR_RETURN(impl->file, GgufFile::open(config.model_path));
    const GgufFile& f = *impl->file;

    WB_ASSIGN_OR_RETURN(TokenizerVocab vocab, load_tokenizer_vocab(f));
    std::string bos_text, eos_text;
    if (vocab.bos_id >= 0) bos_text = vocab.tokens[static_cast<size_t>(vocab.bos_id)];
    if (vocab.eos_id >= 0) eos_text = vocab.tokens[static_cast<size_t>(vocab.eos_id)];
    WB_ASSIGN_OR_RETURN(impl->tokenizer, Tokenizer::create(std::move(vocab)));
    WB_ASSIGN_OR_RETURN(auto template_source, f.get_string_opt("tokenizer.chat_template"));
    WB_ASSIGN_OR_RETURN(const std::string arch_name, f.get_string("general.architecture"));
    const Architecture* arch = find_architecture(arch_name);
    impl->chat_template = ChatTemplate::detect(template_source.value_or(""), bos_text, eos_text,
                                               arch ? arch->chat_family : ChatTemplateFamily::chatml, arch_name);
    impl->model_template = ModelChatTemplate{template_source.value_or(""), bos_text, eos_text, nullptr};
    if (!impl->model_template.source.empty()) {
        if (Status parsed = prepare_model_chat_template(impl->model_template); !parsed.ok())
            impl->template_parse_error = parsed.message();
    }
    impl->chat_format = chat_format_of(impl->model_template.parsed ? std::string_view(impl->model_template.source) : std::string_view());

    WB_ASSIGN_OR_RETURN(ModelHparams hp, load_hparams(f, impl->tokenizer->n_vocab()));
    if (config.mla_cache == "expanded") WB_RETURN_IF_ERROR(expand_latent_attention(hp));
    else if (config.mla_cache != "latent")
        return error(StatusCode::invalid_argument, "--mla-cache '" + config.mla_cache + "': expected latent or expanded");
    WB_ASSIGN_OR_RETURN(ModelWeights weights, load_weights(f, hp));
    if (!config.weight_type.empty()) {
        auto type = dtype_from_name(config.weight_type);
        if (!type) return error(StatusCode::invalid_argument, "unknown weight type '" + config.weight_type + "'");
        WB_RETURN_IF_ERROR(requantize_weights(weights, *type, impl->converted_weights, [&](int done, int total) {
            if (config.on_load_progress) config.on_load_progress("converting weights to " + config.weight_type, static_cast<float>(done) / static_cast<float>(total));
        }));
    }
    const int32_t n_ctx = config.n_ctx > 0 ? config.n_ctx : std::min(hp.n_ctx_train, kDefaultMaxContext);
    impl->n_ctx = n_ctx;
    WB_ASSIGN_OR_RETURN(impl->layout, parse_attention_layout(config.attention.empty() ? "full" : config.attention));
    const AttentionLayout& layout = impl->layout;
    WB_ASSIGN_OR_RETURN(const AttentionLayout runs, apply_native_attention(layout, NativeAttention{hp.sliding_window, hp.local_layers}, hp.n_layer));
    WB_ASSIGN_OR_RETURN(const KvTypes kv_types, parse_kv_types(config.kv_types.empty() ? "f16" : config.kv_types));
    // The latent variant rebuilds keys from the cache inside the CPU backend's attention.
    if (config.backend == "cuda")
        for (const auto& term : layout) {
            if (term.spec.kind == AttentionKind::latent)
                return error(StatusCode::unsupported, "the latent variant is not supported on cuda (use --backend cpu)");
            // The device attention reads token tables only; a press's packed lanes are host-side streams it cannot address.
            if (is_eviction_press(term.spec.kind))
                return error(StatusCode::unsupported, std::string("the ") + attention_kind_name(term.spec.kind) +
                                                          " press is not supported on cuda yet (use --backend cpu)");
        }
    // A repacked matrix's file pages go as soon as its copy exists (they can be read back from
    // the file if anything still needs them, e.g. latent factorization).
    WB_ASSIGN_OR_RETURN(impl->model, DecoderModel::create(std::move(hp), std::move(weights), config.backend, [&](const uint8_t* data, uint64_t n_bytes) {
        impl->file->release_pages(data, n_bytes);
    }));
    if (config.n_seq_max < 1 || static_cast<int64_t>(config.n_seq_max) * n_ctx > (int64_t{1} << 30))
        return error(StatusCode::invalid_argument, "n_seq_max must be between 1 and " + std::to_string((int64_t{1} << 30) / n_ctx) +
                                                       " at context " + std::to_string(n_ctx) + " (got " + std::to_string(config.n_seq_max) + ")");
    WB_ASSIGN_OR_RETURN(impl->kv, PagedKv::create(runs, kv_types, impl->model->kv_shape(), config.kv_budget_bytes, n_ctx,
                                                  config.n_seq_max));
    WB_RETURN_IF_ERROR(impl->model->attach_kv(*impl->kv));
    impl->pool = std::make_unique<ThreadPool>(config.n_threads > 0 ? config.n_threads : default_thread_count());
    std::vector<double> latent_error;
    if (impl->kv->latent()) {
        const AttentionSpec& spec = layout.front().spec;
        WB_ASSIGN_OR_RETURN(const std::vector<TokenId> calibration, calibration_tokens(config, *impl->tokenizer));
        const CalibrationSplit split = split_calibration(calibration);
        // Steps of rank that keep each layer's row (rank + kept RoPE values, halved) in whole blocks.
        const int32_t rank_step = 2 * static_cast<int32_t>(std::max(kv_dtype_layout(kv_types.k).block_values, kv_dtype_layout(kv_types.v).block_values));
        WB_ASSIGN_OR_RETURN(latent_error, impl->model->enable_latent(spec, split.factors, split.held_out, rank_step, *impl->pool,
                                                                     [&](int done, int total) {
            if (config.on_load_progress)
                config.on_load_progress(spec.ranks == LatentRanks::measured ? "latent factors and rank search" : "latent factors",
                                        static_cast<float>(done) / static_cast<float>(total));
        }));
        if (spec.ranks == LatentRanks::measured) {
            // The cache made above took the spec's rank everywhere; the layers now have their own.
            impl->kv.reset();
            WB_ASSIGN_OR_RETURN(impl->kv, PagedKv::create(runs, kv_types, impl->model->kv_shape(), config.kv_budget_bytes, n_ctx,
                                                          config.n_seq_max));
            WB_RETURN_IF_ERROR(impl->model->attach_kv(*impl->kv));
        }
    }
    impl->info = describe(*impl);
    impl->info.latent_error = std::move(latent_error);
    impl->info.latent_ranks = impl->model->latent_ranks();
    if (!config.draft_model_path.empty()) {
        WB_ASSIGN_OR_RETURN(impl->draft_engine, load_draft_model(config, *impl));
    }
    impl->loop = std::make_unique<StepLoop>(*impl);
    return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

const char* engine_version() { return WB_VERSION " (" WB_GIT_COMMIT ")"; }

}  // namespace workbench
