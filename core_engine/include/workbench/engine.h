// The engine API: load a GGUF model, tokenize, render chats, generate with streaming, and read
// logits. Every call returns Status/Result; nothing throws across this boundary. An Engine is
// owned and called by one thread, the engine's thread (the CLI's main thread, the GUI's worker,
// the server's loop); submit, cancel and wait_for_requests may be called from any thread, and
// tokenize, detokenize and render_chat are safe to call concurrently with the engine's thread.
// Every way of generating is a client of the one step loop (workbench/request.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbench/attention.h"
#include "workbench/chat_reply.h"
#include "workbench/config.h"
#include "workbench/metrics.h"
#include "workbench/model_chat_template.h"
#include "workbench/request.h"
#include "workbench/status.h"
#include "workbench/types.h"

namespace workbench {

struct TensorTypeCount {
    std::string type;    // "q4_1"
    int32_t n_tensors = 0;
    uint64_t n_bytes = 0;
};

struct ModelInfo {
    std::string path, name, arch;
    uint64_t file_bytes = 0, weight_bytes = 0, n_params = 0;
    int32_t n_vocab = 0, n_ctx_train = 0, n_ctx = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0;
    float rope_freq_base = 0, rms_eps = 0;
    int32_t n_rot = 0;                 // RoPE dimensions of a head (head_dim: all of them)
    bool tied_output = false;
    // Layers of experts: each token runs n_expert_used of n_expert (0: a dense model).
    int32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    // Latent attention (DeepSeek's MLA, kv_lora_rank > 0): a KV row per token and layer of
    // head_dim = kv_lora_rank + RoPE key values, whose first head_dim_v are its values.
    int32_t kv_lora_rank = 0, q_lora_rank = 0, head_dim_v = 0;
    std::string mla_cache;             // "latent" or "expanded" (EngineConfig::mla_cache); empty without latent attention
    int32_t kv_rope_offset = 0;        // where RoPE starts in a cached key row (after c, or after the head's nope part)
    int32_t mla_head_k = 0, mla_head_v = 0;   // each head's key (nope + RoPE) and value widths, whichever form is cached
    // chat_template_family: "jinja" when the file's own template is used, else the native family.
    std::string tokenizer_model, tokenizer_pre, chat_template_family, chat_template_warning;
    int32_t bos_id = -1, eos_id = -1;
    std::vector<TensorTypeCount> tensor_types;  // as stored in the file
    std::string weight_type;           // the layers' matrices as computed with (after any conversion)
    std::vector<TensorTypeCount> weight_types;  // every matrix (output head included) by computed type
    std::vector<std::string> layer_weight_types;   // the layers' matrices' computed types (head excluded)
    std::string output_weight_type;    // the output head's computed type
    uint64_t kv_bytes_per_token = 0;   // full attention at the configured KV types
    std::string attention;             // the variant in use, canonical spec
    NativeAttention native_attention;  // the model's trained local layers (Gemma 3), if any
    std::string attention_runs;        // what runs on each layer: `attention` on top of the native pattern
    bool context_bounded = true;       // false: the variant (a sliding window) runs past n_ctx
    std::string kv_types;              // "f16", "k=q8_0,v=q4_0"
    uint64_t kv_bytes_allocated = 0;   // the KV pool
    std::vector<double> latent_error;  // latent: per layer, relative K/V output error on the calibration
    std::vector<int32_t> latent_ranks; // latent: per layer (ranks=measured chooses them at load)
    // Weight bytes one decode step reads (all matmuls incl. the output head; of the experts, the
    // share one token runs: n_expert_used / n_expert — the "active" bytes).
    uint64_t decode_weight_bytes = 0;
    int32_t n_threads = 0;
    std::string backend = "cpu";       // where it runs (EngineConfig::backend)
    // A device backend's memory on its device at load (0 on the CPU): the weights as uploaded,
    // the step's activations (they grow with the longest step), the matmul workspace and scratch,
    // the device's copy of the KV pool (the layers it attends over there).
    uint64_t device_weight_bytes = 0, device_activation_bytes = 0, device_workspace_bytes = 0, device_kv_bytes = 0;
    std::string cpu_features;          // "AVX2 FMA F16C ..." as detected at run time
    std::string cpu_kernels;           // the matmul kernel set in use: "avx2", "avx-vnni", "avx512-vnni" or "avx512-split-rows"
};

struct KvUsageReport {
    uint64_t bytes_in_use = 0, bytes_peak = 0, bytes_allocated = 0, bytes_full = 0, bytes_read_last_step = 0;
    int32_t n_tokens = 0;
    std::vector<uint64_t> layer_bytes;  // per model layer (0 for a layer reading another's KV)
};

// The conversation's KV cache as a picture: one row per model layer, one column per block of
// `block_tokens` tokens in position order.
enum class KvBlockState : uint8_t {
    empty,       // unused
    live,        // held and read by the last query
    shared,      // held and shared with another sequence (prefix cache, fork): one copy in memory
    evicted,     // released by a sliding window
    compressed,  // released after pooling into compressed entries (compressed, heavy)
    skipped,     // held but left out by top-k in the last step
    borrowed,    // the layer keeps no KV and reads another layer's (cross-layer sharing)
};
struct KvBlockMap {
    int32_t n_layers = 0, n_blocks = 0, block_tokens = 16, n_tokens = 0;
    std::vector<KvBlockState> cells;   // [n_layers][n_blocks]
    KvBlockState at(int32_t layer, int32_t block) const { return cells[static_cast<size_t>(layer * n_blocks + block)]; }
};

struct GenerationResult {
    std::string text;                  // generated text (a matched stop string removed)
    std::vector<TokenId> tokens;       // generated ids
    StopReason stop_reason = StopReason::max_tokens;
    GenerationMetrics metrics;
};

struct BatchResult {
    struct Completion {
        int32_t request = 0, sample = 0;
        bool ok = false;
        std::string text, error;
        std::vector<TokenId> tokens;
        StopReason stop_reason = StopReason::max_tokens;
        RequestMetrics metrics;
    };
    std::vector<Completion> completions;   // request by request, samples in order
    BatchMetrics metrics;
};

// A batch's aggregates from its completions (in request order, samples together), over
// `duration_ms`: counts, throughputs, TTFT/TPOT/ITL/E2EL statistics (vLLM's definitions). The
// loop's own figures (steps, preemptions, most running, KV peak) stay 0: only the loop knows them.
BatchMetrics batch_metrics(const std::vector<BatchResult::Completion>& completions, double duration_ms);

// Receives generated text as it becomes safe to show (whole UTF-8 characters, never part of a
// stop string).
using TextCallback = std::function<void(std::string_view text)>;

class Engine {
public:
    // Loads the model and tokenizer and reserves the KV cache. Errors name the file and cause.
    static Result<std::unique_ptr<Engine>> load(const EngineConfig& config);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const ModelInfo& model_info() const;

    std::vector<TokenId> tokenize(std::string_view text, bool add_bos, bool parse_special) const;
    std::string detokenize(const std::vector<TokenId>& tokens, bool render_special = false) const;
    std::string token_text(TokenId token) const;
    // The conversation as the model's chat template renders it: the GGUF's own Jinja template,
    // or, for a file without one (or one that does not parse), its family's native rendering
    // (model_info().chat_template_family says which). Errors: the template's own (it raised, or
    // used an undefined value), naming its line.
    Result<RenderedChat> render_conversation(const ChatTemplateInput& input) const;
    // Rendered and tokenized (BOS as the vocabulary asks): the template's markers become control
    // tokens, the messages' own text stays text, so a typed "<|im_start|>" cannot forge a turn;
    // with special_in_content it is parsed like the template's (llama.cpp's way).
    Result<std::vector<TokenId>> tokenize_conversation(const ChatTemplateInput& input, bool special_in_content = false) const;
    // The same for plain role/content messages; where the model's template refuses them, its
    // family's native rendering stands in.
    std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
    std::vector<TokenId> tokenize_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                       bool special_in_content = false) const;
    std::string default_system_prompt() const;
    // How the model's replies mark thinking and tool calls (workbench/chat_reply.h), from its template.
    ChatFormat chat_format() const;
    // Whether a chat prompt leaves the reply inside <think> (DeepSeek-R1's generation prompt).
    bool prompt_opens_thinking(const std::vector<TokenId>& prompt) const;

    // Continues `prompt` (raw text, special tokens parsed). Tokens already in the KV cache from
    // the previous call are reused up to the first difference, so a chat only prefills its new
    // turn. Errors: out_of_range when the prompt alone does not fit the context. `on_token` gets
    // each token's event (RequestEvent::Kind::token, before its text is released: exact timing
    // for live charts; t_ms counts from the call).
    Result<GenerationResult> generate(std::string_view prompt, const GenerationRequest& request,
                                      const TextCallback& on_text = {}, const std::atomic<bool>* cancel = nullptr,
                                      const RequestEventCallback& on_token = {});
    Result<GenerationResult> generate_tokens(const std::vector<TokenId>& prompt, const GenerationRequest& request,
                                             const TextCallback& on_text = {}, const std::atomic<bool>* cancel = nullptr,
                                             const RequestEventCallback& on_token = {});
    // Renders the conversation with the generation prompt and generates the assistant's reply
    // (tokenize_chat: what the messages say stays text).
    Result<GenerationResult> chat(const std::vector<ChatMessage>& messages, const GenerationRequest& request,
                                  const TextCallback& on_text = {}, const std::atomic<bool>* cancel = nullptr,
                                  const RequestEventCallback& on_token = {});

    // Runs many requests at once with continuous batching: sequences join and leave the running
    // batch between steps, prompts run in chunks beside ongoing decodes, a request is paused and
    // recomputed when the KV pool runs out, and n samples of a prompt share its blocks. Greedy
    // outputs equal each request's solo run. A request that cannot run (empty, too long for the
    // context, alone too big for the pool) is reported failed and the rest go on; cancel ends
    // every unfinished one (stop reason cancelled). The chat's cached conversation is kept.
    // `on_event` gets the requests' events, on the engine's thread, in order, with `request` the
    // index into `requests` and t_ms counted from the batch's start, and a step event after each
    // step that ran. Errors: invalid_argument for bad options.
    Result<BatchResult> run_batch(const std::vector<BatchRequest>& requests, const BatchOptions& options,
                                  const RequestEventCallback& on_event = {}, const std::atomic<bool>* cancel = nullptr);

    // The step loop. A submitted request joins the running batch at the next step; its events
    // come from step(), on the engine's thread, through `on_event`. cancel ends every unfinished
    // completion of the request (stop reason cancelled) at the next step.
    RequestHandle submit(EngineRequest request, RequestEventCallback on_event);
    void cancel(RequestHandle request);
    // One plan → execute → absorb step over every request in flight.
    StepReport step();
    // Whether any request is submitted, waiting or running.
    bool has_requests() const;
    // Blocks until a request is submitted or cancelled, or `timeout` passes.
    void wait_for_requests(std::chrono::milliseconds timeout);
    // The loop's batching limits; changed only while no request is in flight
    // (unavailable otherwise; invalid_argument for a limit below 1).
    Status set_loop_options(const BatchOptions& options);
    const BatchOptions& loop_options() const;
    LoopCounters loop_counters() const;

    // Logits at every position of `tokens`, [n_tokens × n_vocab], computed from an empty cache.
    Result<std::vector<float>> logits_all(const std::vector<TokenId>& tokens);

    // Appends `tokens` to the cached sequence and runs them through the model without sampling
    // (benchmarks, priming a prompt). Errors: out_of_range when the context would overflow.
    Status eval(const std::vector<TokenId>& tokens);
    // As eval, returning the logits at every appended position, [n_tokens × n_vocab]: scoring
    // text chunk by chunk (perplexity, KL against another configuration) without holding a
    // whole window's logits.
    Result<std::vector<float>> eval_logits(const std::vector<TokenId>& tokens);

    // Forgets the cached conversation.
    void reset();
    // Also forgets the prompts of finished requests and conversations, kept so that a later
    // prompt starting with the same tokens skips their prefill: the next prompt runs whole (a
    // prefill timing, a cold start). Blocks of running sequences stay shared.
    void forget_cached_prompts();
    // KV bytes now: in use, peak, pool, full-attention equivalent, last step's reads; and per
    // layer for the conversation's sequence.
    KvUsageReport kv_usage() const;
    int32_t n_cached_tokens() const;
    // The conversation's blocks per layer as they stand after the last step.
    KvBlockMap kv_block_map() const;
    // The last prompt step (several tokens of a sequence) and the last decode step (one token per
    // sequence), each split into matmuls and attention, for the roofline picture.
    struct RooflineSnapshot {
        std::optional<StepRoofline> prefill, decode;
    };
    RooflineSnapshot last_step_roofline() const;

    struct Impl;  // the engine's internals (opaque outside core_engine)

private:
    explicit Engine(std::unique_ptr<Impl> impl);
    Status append(const std::vector<TokenId>& tokens, std::vector<float>* all_logits);
    std::unique_ptr<Impl> impl_;
};

// The default model's path when none is given: $WORKBENCH_MODEL, else the source tree's models/
// file, else user_models_dir()'s, else /usr/share/inference-workbench/models/'s. Empty when none
// exists; default_model_hint() then says how to get it.
std::string find_default_model();
// The KV cache geometry of a loaded model, native local layers included: what predict_kv needs.
// `mla_cache` ("latent" or "expanded") asks a latent-attention model's geometry in that cache
// form whichever form it was loaded with (the configuration panel predicts a reload); empty: as loaded.
KvGeometry kv_geometry(const ModelInfo& info, std::string_view mla_cache = {});
// $XDG_DATA_HOME/inference-workbench/models (else ~/.local/share/...): where the GUI fetches models.
std::string user_models_dir();
std::string default_model_hint();
// The text quality is scored on by default (resources/eval/alice_wonderland.txt): the source
// tree's copy, else the installed package's. Calibrations use another (workbench/calibration.h).
std::string default_eval_text_path();
const char* engine_version();   // "0.1.0 (abc1234)"

}  // namespace workbench
