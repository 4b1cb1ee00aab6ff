// A look inside a GGUF file without loading the model: its metadata (rendered for display) and
// tensor table. Works on any well-formed GGUF, including architectures the engine cannot run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "workbench/status.h"

namespace workbench {

struct TensorSummary {
    std::string name;
    std::string type;                // "q4_1"
    std::vector<uint64_t> shape;     // ne[0] first
    uint64_t n_bytes = 0;
};

struct ModelFileSummary {
    std::string path;
    uint32_t gguf_version = 0;
    uint64_t file_bytes = 0;
    uint64_t n_params = 0;
    std::vector<std::pair<std::string, std::string>> metadata;  // key → display value (arrays shortened)
    std::vector<TensorSummary> tensors;
};

// Errors: not_found, io_error, invalid_file (naming the field and value), unsupported.
Result<ModelFileSummary> summarize_model_file(const std::string& path);

}  // namespace workbench

namespace workbench {

// Writes a copy of the GGUF at `in_path` to `out_path` with every weight matrix converted to
// `type` ("q8_0", "f16", "bf16", "f32", "q4_0", "q4_1", "q5_0", "q5_1"); vectors stay f32 and all
// metadata is kept (general.file_type updated). `progress` gets (tensors done, tensors total).
Status write_requantized_model(const std::string& in_path, const std::string& out_path, const std::string& type,
                               const std::function<void(int, int)>& progress = {});

// The named shapes `synth` writes: "tiny" (3 layers, width 64: what the architecture tests use),
// "small" (2 layers, width 256, heads of 32: the smallest quantized KV types accept), "llama-1b",
// "llama-3b", "llama-8b", "qwen3-0.6b", "gemma3-270m" (those models' blocks), and the
// mixtures of experts "qwen3moe-a3b-12l", "qwen3moe-a3b-18l", "deepseek-v2-lite-8l" (a few layers of theirs).
std::vector<std::string> synth_shape_names();
// The architectures the engine runs (general.architecture values), in registration order.
std::vector<std::string> architecture_names();
// Writes a random-weight model of architecture `arch` (any the engine runs) and named `shape` to
// `out_path`, its tensors as the architecture declares them, matrices in `type` (f32, f16,
// bf16, q8_0, q4_0, q4_1, q5_0, q5_1), norms f32; its tokenizer copied from the GGUF at
// `vocab_from` (n_vocab follows it), else a placeholder vocab of the shape's size. Seeded: the
// same arguments write the same bytes. invalid_argument naming an unknown arch, shape or type,
// or a type whose blocks do not divide the shape's rows; io_error naming the path. A layer of
// experts' matrices are `expert_type` when given (mxfp4, as gpt-oss ships them), else `type`.
Status write_synth_model(const std::string& arch, const std::string& shape, const std::string& type,
                         const std::string& vocab_from, const std::string& out_path, uint64_t seed = 1,
                         const std::string& expert_type = "");

}  // namespace workbench
