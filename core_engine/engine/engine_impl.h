// The parts an Engine owns, shared by its load and generation code. Internal to the engine.
#pragma once

#include <memory>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/cpu/thread_pool.h"
#include "attention/paged_kv.h"
#include "engine/step_loop.h"
#include "model/decoder_model.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "workbench/engine.h"

namespace workbench {

struct Engine::Impl {
    EngineConfig config;
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Tokenizer> tokenizer;
    ModelChatTemplate model_template;   // parsed when the file carries one that parses
    ChatTemplate chat_template;         // the native family: for files without a template
    std::string template_parse_error;   // why the file's template is not used
    ChatFormat chat_format;             // how its replies mark thinking and calls (from the template in use)
    std::unique_ptr<DecoderModel> model;
    std::unique_ptr<ThreadPool> pool;
    AttentionLayout layout;           // as configured (the model's native pattern is applied in kv)
    std::unique_ptr<PagedKv> kv;
    static constexpr SeqId kChatSequence = 0;
    int32_t n_ctx = 0;
    std::unique_ptr<StepLoop> loop;   // every request runs through it
    // Steps the loop until `handle` has no unfinished completion; `cancel` is passed on as a
    // cancel of the request.
    void run_until_done(RequestHandle handle, const bool& done, const std::atomic<bool>* cancel);
    Engine::RooflineSnapshot roofline;   // the last prompt and decode steps
    // Files the model's last step under prompt or decode.
    void note_step(bool decode) { (decode ? roofline.decode : roofline.prefill) = model->last_step_roofline(); }
    ModelInfo info;
    std::vector<std::unique_ptr<uint8_t[]>> converted_weights;  // when config.weight_type asks for a conversion
    // Speculative decoding's draft model (config.draft_model_path): its own model and cache,
    // run on this engine's thread pool.
    std::unique_ptr<Engine> draft_engine;
    Engine::Impl* draft() const { return draft_engine ? draft_engine->impl_.get() : nullptr; }
};

}  // namespace workbench
