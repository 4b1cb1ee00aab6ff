// `inspect`: what is in a GGUF model: architecture, hyperparameters, tokenizer, tensor types
// and sizes, parameter count, KV bytes per token. Reads the file even when the engine cannot
// run it, and then says why.
#include <iomanip>
#include <iostream>
#include <map>

#include "commands.h"
#include "json_writer.h"
#include "workbench/model_file.h"

namespace wbcli {
namespace {

std::string shape_text(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

void print_text(const workbench::ModelFileSummary& s, const workbench::ModelInfo* info, const std::string& load_error, bool all_tensors) {
    std::cout << "file:        " << s.path << "\n"
              << "format:      GGUF v" << s.gguf_version << ", " << format_bytes(s.file_bytes) << ", " << s.tensors.size() << " tensors, "
              << std::fixed << std::setprecision(1) << static_cast<double>(s.n_params) / 1e6 << "M parameters\n";
    if (info) {
        std::cout << "model:       " << info->name << " (" << info->arch << ")\n"
                  << "layers:      " << info->n_layer << ", width " << info->n_embd << ", FFN " << info->n_ff << "\n"
                  << "attention:   " << info->n_head << " query heads, " << info->n_head_kv << " KV heads (GQA "
                  << info->n_head / info->n_head_kv << ":1), head size " << info->head_dim << "\n"
                  << "context:     " << info->n_ctx_train << " trained; RoPE base " << std::setprecision(0) << info->rope_freq_base << "\n"
                  << "vocabulary:  " << info->n_vocab << " tokens, " << info->tokenizer_model << " tokenizer (pre: " << info->tokenizer_pre
                  << "), chat template: " << info->chat_template_family << "\n"
                  << "output head: " << (info->tied_output ? "tied to the token embedding" : "separate") << "\n"
                  << "KV cache:    " << info->kv_bytes_per_token << " bytes/token (f16 K+V, full attention) = "
                  << format_bytes(info->kv_bytes_per_token * static_cast<uint64_t>(info->n_ctx_train)) << " at " << info->n_ctx_train << " tokens\n";
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
    JsonWriter j;
    j.begin_object();
    j.key("path").value(s.path).key("gguf_version").value(static_cast<int64_t>(s.gguf_version));
    j.key("file_bytes").value(s.file_bytes).key("n_params").value(s.n_params);
    j.key("loadable").value(info != nullptr);
    if (!info) j.key("load_error").value(load_error);
    if (info) {
        j.key("name").value(info->name).key("arch").value(info->arch);
        j.key("hparams").begin_object();
        j.key("n_vocab").value(info->n_vocab).key("n_ctx_train").value(info->n_ctx_train).key("n_embd").value(info->n_embd);
        j.key("n_layer").value(info->n_layer).key("n_head").value(info->n_head).key("n_head_kv").value(info->n_head_kv);
        j.key("head_dim").value(info->head_dim).key("n_ff").value(info->n_ff);
        j.key("rope_freq_base").value(static_cast<double>(info->rope_freq_base)).key("rms_eps").value(static_cast<double>(info->rms_eps));
        j.key("tied_output").value(info->tied_output);
        j.end_object();
        j.key("tokenizer").begin_object();
        j.key("model").value(info->tokenizer_model).key("pre").value(info->tokenizer_pre);
        j.key("bos_id").value(info->bos_id).key("eos_id").value(info->eos_id);
        j.key("chat_template").value(info->chat_template_family);
        j.end_object();
        j.key("kv_bytes_per_token").value(info->kv_bytes_per_token);
        j.key("weight_types").begin_array();
        for (const auto& t : info->tensor_types)
            j.begin_object().key("type").value(t.type).key("n_tensors").value(t.n_tensors).key("bytes").value(t.n_bytes).end_object();
        j.end_array();
    }
    j.key("metadata").begin_object();
    for (const auto& [k, v] : s.metadata) j.key(k).value(v);
    j.end_object();
    j.key("tensors").begin_array();
    for (const auto& t : s.tensors) {
        j.begin_object().key("name").value(t.name).key("type").value(t.type).key("shape").begin_array();
        for (auto d : t.shape) j.value(d);
        j.end_array().key("bytes").value(t.n_bytes).end_object();
    }
    j.end_array();
    j.end_object();
    std::cout << j.str() << "\n";
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
