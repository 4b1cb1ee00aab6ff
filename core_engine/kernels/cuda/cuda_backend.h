// The CUDA backend: the model's weights uploaded once to the device in their GGUF block formats
// (types the kernels do not read are converted to f16 on the way), the step's activations on
// the device, and each Backend operation run there — the GEMV for a few tokens, cuBLASLt over
// bf16 for prompts, RMSNorm, RoPE, SwiGLU/GeGLU, biases, soft-capping — and attention over a
// device copy of the paged KV cache with its own kernels (cuda_attention.cpp says which policies
// the device writes for itself and which the host keeps). Decode steps whose every layer the
// device writes run as CUDA graphs (cuda_step_graph.cpp). The latent variant is refused at
// load. No CUDA types here: the engine's other files include it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "kernels/backend.h"
#include "model_data/model_hparams.h"
#include "model_data/weight_tensors.h"

namespace workbench {

// Errors: unsupported without a device; resource_exhausted when the device lacks room for the
// weights or the step buffers (naming the bytes). `on_uploaded(data, n_bytes)` is told of each
// file range once its device copy exists. `hp` and `w` must outlive the backend.
Result<std::unique_ptr<Backend>> make_cuda_backend(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                   const std::function<void(const uint8_t*, uint64_t)>& on_uploaded = {});

// How many steps have run as a CUDA graph in this process (tests and diagnostics). Graphs are on
// unless WB_CUDA_GRAPHS=0 is in the environment when a backend is made.
int64_t cuda_graph_steps();
// The step size up to which the last CUDA backend made multiplies with the GEMV rather than
// cuBLASLt, as it measured at load (0 before any).
int64_t cuda_gemv_max_tokens();

}  // namespace workbench
