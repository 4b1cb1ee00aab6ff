// The conversation's calls as clients of the step loop: generate (a conversation request that
// reuses the cached prefix and keeps its sequence), and eval / eval_logits / logits_all (a
// conversation request that runs its new tokens for their cache or logits and samples nothing).
#include <algorithm>

#include "engine/engine_impl.h"

namespace workbench {

Result<GenerationResult> Engine::generate(std::string_view prompt, const GenerationRequest& request,
                                          const TextCallback& on_text, const std::atomic<bool>* cancel, const RequestEventCallback& on_token) {
    return generate_tokens(tokenize(prompt, true, true), request, on_text, cancel, on_token);
}

Result<GenerationResult> Engine::chat(const std::vector<ChatMessage>& messages, const GenerationRequest& request,
                                      const TextCallback& on_text, const std::atomic<bool>* cancel, const RequestEventCallback& on_token) {
    return generate_tokens(tokenize_chat(messages, true), request, on_text, cancel, on_token);
}

Result<GenerationResult> Engine::generate_tokens(const std::vector<TokenId>& prompt, const GenerationRequest& request,
                                                 const TextCallback& on_text, const std::atomic<bool>* cancel,
                                                 const RequestEventCallback& on_token) {
    Impl& e = *impl_;
    EngineRequest r;
    r.prompt = prompt;
    r.generation = request;
    r.conversation = true;
    bool done = false;
    size_t n_shown = 0;   // bytes of the text passed to on_text
    GenerationResult result;
    Status failure;
    const RequestHandle handle = e.loop->submit(std::move(r), [&](const RequestEvent& ev) {
        switch (ev.kind) {
            case RequestEvent::Kind::token:
                if (on_token) on_token(ev);
                if (on_text && !ev.text.empty()) on_text(ev.text);
                n_shown += ev.text.size();
                break;
            case RequestEvent::Kind::finished:
                if (on_text && ev.text.size() > n_shown) on_text(std::string_view(ev.text).substr(n_shown));
                result.text = ev.text;
                result.tokens = ev.tokens;
                result.stop_reason = ev.stop_reason;
                result.metrics = generation_metrics(ev.metrics);
                done = true;
                break;
            case RequestEvent::Kind::failed:
                failure = ev.status;
                done = true;
                break;
            case RequestEvent::Kind::prompt_logits:
            case RequestEvent::Kind::step:
                break;
        }
    });
    e.run_until_done(handle, done, cancel);
    if (!failure.ok()) return failure;
    return result;
}

Status Engine::eval(const std::vector<TokenId>& tokens) { return append(tokens, nullptr); }

Result<std::vector<float>> Engine::eval_logits(const std::vector<TokenId>& tokens) {
    std::vector<float> out;
    WB_RETURN_IF_ERROR(append(tokens, &out));
    return out;
}

// Runs `tokens` after the cached sequence; their logits into `all_logits` when given.
Status Engine::append(const std::vector<TokenId>& tokens, std::vector<float>* all_logits) {
    Impl& e = *impl_;
    if (tokens.empty()) return Status::ok_status();
    const std::span<const TokenId> cached = e.kv->tokens(Impl::kChatSequence);
    if (!e.kv->unbounded_context() && cached.size() + tokens.size() > static_cast<size_t>(e.n_ctx))
        return error(StatusCode::out_of_range, std::to_string(cached.size()) + " tokens cached + " + std::to_string(tokens.size()) +
                                                   " new exceed the context length " + std::to_string(e.n_ctx));
    EngineRequest r;
    r.prompt.assign(cached.begin(), cached.end());
    r.prompt.insert(r.prompt.end(), tokens.begin(), tokens.end());
    r.generation.max_tokens = 0;
    r.conversation = true;
    r.prompt_logits = all_logits != nullptr;
    bool done = false;
    Status failure;
    if (all_logits) all_logits->clear();
    const RequestHandle handle = e.loop->submit(std::move(r), [&](const RequestEvent& ev) {
        if (ev.kind == RequestEvent::Kind::prompt_logits) all_logits->insert(all_logits->end(), ev.logits.begin(), ev.logits.end());
        if (ev.kind == RequestEvent::Kind::failed) failure = ev.status;
        done = done || ev.kind == RequestEvent::Kind::finished || ev.kind == RequestEvent::Kind::failed;
    });
    e.run_until_done(handle, done, nullptr);
    return failure;
}

Result<std::vector<float>> Engine::logits_all(const std::vector<TokenId>& tokens) {
    Impl& e = *impl_;
    reset();
    if (!e.kv->unbounded_context() && tokens.size() > static_cast<size_t>(e.n_ctx))
        return error(StatusCode::out_of_range, std::to_string(tokens.size()) + " tokens exceed the context length " + std::to_string(e.n_ctx));
    return eval_logits(tokens);
}

}  // namespace workbench
