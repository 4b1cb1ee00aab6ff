// What a loaded Engine answers about itself: the model, its tokenizer and chat template, and
// the conversation's KV cache (usage, the block map, the last step's roofline).
#include "engine/engine_impl.h"

namespace workbench {

const ModelInfo& Engine::model_info() const { return impl_->info; }

std::vector<TokenId> Engine::tokenize(std::string_view text, bool add_bos, bool parse_special) const {
    return impl_->tokenizer->encode(text, add_bos, parse_special);
}

std::string Engine::detokenize(const std::vector<TokenId>& tokens, bool render_special) const {
    return impl_->tokenizer->decode(tokens, render_special);
}

std::string Engine::token_text(TokenId token) const { return impl_->tokenizer->token_to_piece(token, true); }

Result<RenderedChat> Engine::render_conversation(const ChatTemplateInput& input) const {
    if (impl_->model_template.parsed) return render_model_chat_template(impl_->model_template, input);
    if (!input.messages.is_array()) return error(StatusCode::invalid_argument, "messages must be a JSON array of {\"role\", \"content\"} objects");
    std::vector<ChatMessage> messages;
    for (const Json& m : input.messages) {
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            return error(StatusCode::invalid_argument, "each message needs a \"role\" string");
        messages.push_back({m["role"].get<std::string>(), chat_content_text(m.value("content", Json()))});
    }
    std::vector<TextRange> ranges;
    RenderedChat out;
    out.text = impl_->chat_template.render(messages, input.add_generation_prompt, &ranges);
    for (const TextRange& r : ranges) out.content.emplace_back(r.begin, r.end);
    return out;
}

Result<std::vector<TokenId>> Engine::tokenize_conversation(const ChatTemplateInput& input, bool special_in_content) const {
    WB_ASSIGN_OR_RETURN(const RenderedChat r, render_conversation(input));
    std::vector<TextRange> content;
    if (!special_in_content)
        for (const auto& [begin, end] : r.content) content.push_back({begin, end});
    return impl_->tokenizer->encode(r.text, true, true, content);
}

std::string Engine::render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
    ChatTemplateInput input;
    input.messages = chat_messages_json(messages);
    input.add_generation_prompt = add_generation_prompt;
    if (auto r = render_conversation(input); r.ok()) return std::move(r->text);
    return impl_->chat_template.render(messages, add_generation_prompt);
}

std::vector<TokenId> Engine::tokenize_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                           bool special_in_content) const {
    ChatTemplateInput input;
    input.messages = chat_messages_json(messages);
    input.add_generation_prompt = add_generation_prompt;
    if (auto r = tokenize_conversation(input, special_in_content); r.ok()) return std::move(*r);
    std::vector<TextRange> content;
    const std::string text = impl_->chat_template.render(messages, add_generation_prompt, special_in_content ? nullptr : &content);
    return impl_->tokenizer->encode(text, true, true, content);
}

ChatFormat Engine::chat_format() const { return impl_->chat_format; }

bool Engine::prompt_opens_thinking(const std::vector<TokenId>& prompt) const {
    const size_t tail = std::min<size_t>(prompt.size(), 12);
    return ends_inside_thinking(detokenize(std::vector<TokenId>(prompt.end() - static_cast<std::ptrdiff_t>(tail), prompt.end()), true));
}

std::string Engine::default_system_prompt() const { return impl_->chat_template.default_system_prompt(); }

void Engine::reset() {
    impl_->kv->free(Impl::kChatSequence);
}

void Engine::forget_cached_prompts() { impl_->kv->forget_free_prefixes(); }

KvUsageReport Engine::kv_usage() const {
    const PagedKv& kv = *impl_->kv;
    const KvUsage all = kv.usage(), seq = kv.usage(Impl::kChatSequence);
    KvUsageReport r;
    r.bytes_in_use = all.bytes_in_use;
    r.bytes_peak = all.bytes_peak;
    r.bytes_allocated = all.bytes_allocated;
    r.bytes_full = all.bytes_full;
    r.bytes_read_last_step = all.bytes_read_last_step;
    r.n_tokens = seq.n_tokens;
    r.layer_bytes = kv.layer_bytes(Impl::kChatSequence);
    return r;
}

// The public states mirror the cache's, value for value.
static_assert(static_cast<int>(KvBlockState::live) == static_cast<int>(KvBlockUse::live) &&
              static_cast<int>(KvBlockState::shared) == static_cast<int>(KvBlockUse::shared) &&
              static_cast<int>(KvBlockState::evicted) == static_cast<int>(KvBlockUse::evicted) &&
              static_cast<int>(KvBlockState::compressed) == static_cast<int>(KvBlockUse::compressed) &&
              static_cast<int>(KvBlockState::skipped) == static_cast<int>(KvBlockUse::skipped) &&
              static_cast<int>(KvBlockState::borrowed) == static_cast<int>(KvBlockUse::borrowed));

Engine::RooflineSnapshot Engine::last_step_roofline() const { return impl_->roofline; }

KvBlockMap Engine::kv_block_map() const {
    const PagedKv& kv = *impl_->kv;
    KvBlockMap m;
    m.n_layers = impl_->info.n_layer;
    m.block_tokens = kv.n_tokens_per_block();
    m.n_tokens = kv.n_tokens(Impl::kChatSequence);
    const std::vector<KvBlockUse> uses = kv.block_map(Impl::kChatSequence, m.n_blocks);
    m.cells.reserve(uses.size());
    for (KvBlockUse u : uses) m.cells.push_back(static_cast<KvBlockState>(u));  // the same states in the same order
    return m;
}

int32_t Engine::n_cached_tokens() const { return impl_->kv->n_tokens(Impl::kChatSequence); }

KvGeometry kv_geometry(const ModelInfo& info, std::string_view mla_cache) {
    KvGeometry g;
    g.n_layers = info.n_layer;
    g.n_kv_heads = info.n_head_kv;
    g.head_dim = info.head_dim;
    g.n_rot = info.n_rot;
    g.n_head = info.n_head;
    g.values_in_keys = info.mla_cache == "latent";
    g.head_dim_v = info.head_dim_v;
    g.rope_offset = info.kv_rope_offset;
    g.native = info.native_attention;
    if (info.kv_lora_rank == 0 || mla_cache.empty() || mla_cache == info.mla_cache) return g;
    // The other form of the same layers (the load's expand_latent_attention and read_deepseek2).
    const bool latent = mla_cache == "latent";
    g.values_in_keys = latent;
    g.n_kv_heads = latent ? 1 : info.n_head;
    g.head_dim = latent ? info.kv_lora_rank + info.n_rot : info.mla_head_k;
    g.head_dim_v = latent ? info.kv_lora_rank : info.mla_head_v;
    g.rope_offset = latent ? info.kv_lora_rank : info.mla_head_k - info.n_rot;
    return g;
}

}  // namespace workbench
