// `inspect`: what is in a GGUF model: architecture, hyperparameters, tokenizer, tensor types
// and sizes, parameter count, KV bytes per token. Reads the file even when the engine cannot
// run it, and then says why.
#include <iomanip>
#include <iostream>
#include <map>

#include "commands.h"
#include "workbench/model_file.h"

namespace wbcli {
namespace {

std::string shape_text(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// KV bytes of one sequence at the trained context with full attention on the global layers
// and the trained window on the local ones (the engine's own prediction, f16).
uint64_t native_kv_at_train_context(const workbench::ModelInfo& info) {
    const auto p = workbench::predict_kv({{}}, "f16", workbench::kv_geometry(info), info.n_ctx_train);
    return p.ok() ? p->bytes_held : 0;
}

void print_text(const workbench::ModelFileSummary& s, const workbench::ModelInfo* info, const std::string& load_error, bool all_tensors) {
    std::cout << "file:        " << s.path << "\n"
              << "format:      GGUF v" << s.gguf_version << ", " << format_bytes(s.file_bytes) << ", " << s.tensors.size() << " tensors, "
              << std::fixed << std::setprecision(1) << static_cast<double>(s.n_params) / 1e6 << "M parameters\n";
    if (info) {
        std::cout << "model:       " << info->name << " (" << info->arch << ")\n"
                  << "layers:      " << info->n_layer << ", width " << info->n_embd << ", FFN " << info->n_ff << "\n";
        if (info->n_expert > 0)
            std::cout << "experts:     " << info->n_expert << " per layer, " << info->n_expert_used << " run per token, width " << info->n_ff_exp
                      << "; a token reads " << format_bytes(info->decode_weight_bytes) << " of the weights (active)\n";
        if (info->mla_cache == "expanded")
            std::cout << "attention:   " << info->n_head << " query heads, latent rank " << info->kv_lora_rank
                      << " cached expanded per head: keys of " << info->head_dim << ", values of " << info->head_dim_v << "\n";
        else if (info->kv_lora_rank > 0)
            std::cout << "attention:   " << info->n_head << " query heads over one latent KV head (MLA): rank " << info->kv_lora_rank
                      << " + a RoPE key of " << info->head_dim - info->kv_lora_rank << " per token and layer, values its first "
                      << info->head_dim_v << (info->q_lora_rank > 0 ? "; queries through rank " + std::to_string(info->q_lora_rank) : std::string())
                      << "\n";
        else
            std::cout << "attention:   " << info->n_head << " query heads, " << info->n_head_kv << " KV heads (GQA "
                      << info->n_head / info->n_head_kv << ":1), head size " << info->head_dim << "\n";
        std::cout << "context:     " << info->n_ctx_train << " trained; RoPE base " << std::setprecision(0) << info->rope_freq_base << "\n"
                  << "vocabulary:  " << info->n_vocab << " tokens, " << info->tokenizer_model << " tokenizer (pre: " << info->tokenizer_pre
                  << "), chat template: " << info->chat_template_family << "\n"
                  << "output head: " << (info->tied_output ? "tied to the token embedding" : "separate") << "\n"
                  << "KV cache:    " << info->kv_bytes_per_token << " bytes/token (f16 " << (info->mla_cache == "latent" ? "latent rows" : "K+V")
                  << ", full attention) = "
                  << format_bytes(info->kv_bytes_per_token * static_cast<uint64_t>(info->n_ctx_train)) << " at " << info->n_ctx_train << " tokens\n";
        if (const std::string pattern = workbench::native_attention_name(info->native_attention, info->n_layer); !pattern.empty()) {
            const auto native = native_kv_at_train_context(*info);
            std::cout << "trained:     " << pattern << "\n"
                      << "             KV with it: " << format_bytes(native) << " at " << info->n_ctx_train << " tokens (f16)\n";
        }
        std::cout << "this CPU:    " << info->cpu_features << " (matmul kernels: " << info->cpu_kernels << ")\n";
        std::cout << "weights:     ";
        for (const auto& t : info->tensor_types) std::cout << t.type << " x" << t.n_tensors << " (" << format_bytes(t.n_bytes) << ")  ";
        std::cout << "\n";
    } else {
        std::cout << "engine:      cannot run this model: " << load_error << "\n";
    }
    std::cout << "\nmetadata:\n";
    for (const auto& [k, v] : s.metadata) std::cout << "  " << std::left << std::setw(42) << k << " " << v << "\n";
    std::cout << "\ntensors" << (all_tensors ? "" : " (first 12; --all for every tensor)") << ":\n";
    size_t shown = 0;
    for (const auto& t : s.tensors) {
        if (!all_tensors && shown++ == 12) break;
        std::cout << "  " << std::left << std::setw(32) << t.name << " " << std::setw(6) << t.type << " " << std::setw(16)
                  << shape_text(t.shape) << " " << format_bytes(t.n_bytes) << "\n";
    }
}

void print_json(const workbench::ModelFileSummary& s, const workbench::ModelInfo* info, const std::string& load_error) {
    using workbench::Json;
    Json j;
    j["path"] = s.path;
    j["gguf_version"] = s.gguf_version;
    j["file_bytes"] = s.file_bytes;
    j["n_params"] = s.n_params;
    j["loadable"] = info != nullptr;
    if (!info) j["load_error"] = load_error;
    if (info) {
        j["name"] = info->name;
        j["arch"] = info->arch;
        j["hparams"] = {{"n_vocab", info->n_vocab},
                        {"n_ctx_train", info->n_ctx_train},
                        {"n_embd", info->n_embd},
                        {"n_layer", info->n_layer},
                        {"n_head", info->n_head},
                        {"n_head_kv", info->n_head_kv},
                        {"head_dim", info->head_dim},
                        {"n_ff", info->n_ff},
                        {"rope_freq_base", workbench::json_rounded(info->rope_freq_base)},
                        {"rms_eps", workbench::json_rounded(info->rms_eps)},
                        {"tied_output", info->tied_output}};
        j["tokenizer"] = {{"model", info->tokenizer_model},
                          {"pre", info->tokenizer_pre},
                          {"bos_id", info->bos_id},
                          {"eos_id", info->eos_id},
                          {"chat_template", info->chat_template_family}};
        j["kv_bytes_per_token"] = info->kv_bytes_per_token;
        if (info->n_expert > 0)
            j["experts"] = {{"n_expert", info->n_expert},
                            {"n_expert_used", info->n_expert_used},
                            {"n_ff_exp", info->n_ff_exp},
                            {"active_weight_bytes", info->decode_weight_bytes}};
        if (info->kv_lora_rank > 0)
            j["latent_attention"] = {{"kv_lora_rank", info->kv_lora_rank}, {"q_lora_rank", info->q_lora_rank}, {"rope_dims", info->head_dim - info->kv_lora_rank}};
        if (!info->native_attention.local_layers.empty())
            j["native_attention"] = {{"window", info->native_attention.window},
                                     {"local_layers", info->native_attention.local_layers},
                                     {"kv_bytes_at_train_context", native_kv_at_train_context(*info)}};
        Json& types = j["weight_types"] = Json::array();
        for (const auto& t : info->tensor_types) types.push_back({{"type", t.type}, {"n_tensors", t.n_tensors}, {"bytes", t.n_bytes}});
    }
    Json& metadata = j["metadata"] = Json::object();
    for (const auto& [k, v] : s.metadata) metadata[k] = v;
    Json& tensors = j["tensors"] = Json::array();
    for (const auto& t : s.tensors) tensors.push_back({{"name", t.name}, {"type", t.type}, {"shape", t.shape}, {"bytes", t.n_bytes}});
    print_json_line(j);
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
    std::vector<FlagSpec> flags = {
        {"--json", "", false, "print one JSON object"},
        {"--all", "", false, "list every tensor (text output)"},
    };
    CommandContext ctx;
    if (int rc = prepare_command(argc, argv, "inspect", "[-m PATH] [--json]", flags, ctx, false); rc >= 0) return rc;
    int rc;
    const std::string path = resolve_model_path(ctx.args, rc);
    if (rc >= 0) return rc;
    auto summary = workbench::summarize_model_file(path);
    if (!summary.ok()) return runtime_error(summary.status().message());

    workbench::EngineConfig config;
    config.model_path = path;
    config.n_threads = 1;
    config.n_ctx = 16;  // inspect never generates: keep the KV reservation tiny
    auto engine = workbench::Engine::load(config);
    const workbench::ModelInfo* info = engine.ok() ? &(*engine)->model_info() : nullptr;
    const std::string load_error = engine.ok() ? "" : engine.status().message();
    if (ctx.args.has("--json")) print_json(*summary, info, load_error);
    else print_text(*summary, info, load_error, ctx.args.has("--all"));
    return info ? 0 : 1;
}

}  // namespace wbcli
