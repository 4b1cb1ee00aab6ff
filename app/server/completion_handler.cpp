// From a checked body to tokens (the model's chat template for messages), the context limits,
// one submit to the step loop, and the answer: whole, or chunk by chunk as the loop's events
// arrive. A client that goes away (a stream's write fails, a whole answer's socket closes)
// cancels its request, which frees its sequences' KV at the loop's next step. On shutdown,
// requests run on through the grace period, then are cancelled and told so.
#include "completion_handler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <numeric>

#include "openai_response.h"
#include "request_channel.h"

namespace wbserver {
namespace {

using workbench::Json;
using workbench::StatusCode;

ApiError bad(std::string param, std::string message, std::string code = "") {
    ApiError e;
    e.param = std::move(param);
    e.message = std::move(message);
    e.code = std::move(code);
    return e;
}

// A completion the loop refused or could not run.
ApiError engine_error(const workbench::Status& s) {
    ApiError e;
    e.message = s.message();
    switch (s.code()) {
        case StatusCode::invalid_argument:
        case StatusCode::unsupported:   // asked of this server what it cannot do (a draft model it has not loaded)
        case StatusCode::out_of_range: e.http_status = 400; break;
        case StatusCode::unavailable:
        case StatusCode::resource_exhausted:
            e.http_status = 503;
            e.type = "server_error";
            break;
        default:
            e.http_status = 500;
            e.type = "server_error";
    }
    return e;
}

ApiError shutting_down() {
    ApiError e;
    e.http_status = 503;
    e.type = "server_error";
    e.message = "the server is shutting down; the request was cancelled after the grace period (--shutdown-grace)";
    e.code = "shutting_down";
    return e;
}

// How a chat's replies are read: the model's format (the Hermes form when a call is forced on a
// model whose own markers are control tokens), whether tools were offered, whether the prompt
// ended inside <think>, and a seed for the calls' ids.
struct ReplyReading {
    bool on = false;   // chat only
    workbench::ChatFormat format;
    bool tools = false;
    bool thinking_open = false;
    uint64_t id_seed = 0;

    bool single_call = false;   // parallel_tool_calls false: the first call only

    // Ids differ between calls of a choice and between choices (n > 1).
    workbench::ChatReply with_ids(workbench::ChatReply reply, int32_t& n_calls, int32_t choice) const {
        if (single_call && n_calls + reply.tool_calls.size() > 1)
            reply.tool_calls.resize(static_cast<size_t>(std::max(0, 1 - n_calls)));
        for (workbench::ToolCall& c : reply.tool_calls)
            if (c.id.empty()) c.id = workbench::tool_call_id(format, id_seed + static_cast<uint64_t>(choice) * 0x9E3779B97F4A7C15ull, n_calls++);
        return reply;
    }
};

bool forces_call(const ApiRequest& r) {
    return r.tool_choice == ApiRequest::ToolChoice::required || r.tool_choice == ApiRequest::ToolChoice::named;
}

ReplyReading reply_reading(const CompletionContext& ctx, const ApiRequest& r, const std::vector<workbench::TokenId>& prompt) {
    ReplyReading out;
    if (r.endpoint != Endpoint::chat_completions) return out;
    out.on = true;
    out.format = forces_call(r) ? workbench::forced_call_format(ctx.engine.chat_format()) : ctx.engine.chat_format();
    out.tools = !r.tools.empty();
    out.single_call = !r.parallel_tool_calls;
    // A grammar (response_format, a forced call) decides the reply's form from its first byte.
    out.thinking_open = ctx.engine.prompt_opens_thinking(prompt) && r.grammar.empty() && !forces_call(r);
    out.id_seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return out;
}

// The prompt's token ids, checked against the vocabulary and the context.
std::variant<std::vector<workbench::TokenId>, ApiError> prompt_tokens(const CompletionContext& ctx, const ApiRequest& r) {
    const workbench::ModelInfo& info = ctx.engine.model_info();
    std::vector<workbench::TokenId> tokens;
    const char* param = r.endpoint == Endpoint::chat_completions ? "messages" : "prompt";
    if (r.endpoint == Endpoint::chat_completions) {
        const workbench::ChatTemplateInput input =
            workbench::chat_template_input(ctx.engine.chat_format(), r.template_messages, r.tools, r.template_kwargs);
        auto t = ctx.engine.tokenize_conversation(input, ctx.options.special_tokens_in_content);
        if (!t.ok()) return bad("messages", "the model's chat template refused the conversation: " + t.status().message());
        tokens = std::move(*t);
    } else if (r.prompt_tokens) {
        tokens = *r.prompt_tokens;
        for (size_t i = 0; i < tokens.size(); ++i)
            if (tokens[i] >= info.n_vocab)
                return bad("prompt", "'prompt[" + std::to_string(i) + "]' is token id " + std::to_string(tokens[i]) +
                                         "; the model's vocabulary has " + std::to_string(info.n_vocab) + " tokens");
    } else {
        tokens = ctx.engine.tokenize(r.prompt_text, true, true);
    }
    if (tokens.empty()) return bad(param, std::string("'") + param + "' gives no tokens");
    for (const workbench::LogitBias& b : r.sampling.logit_bias)
        if (b.token >= info.n_vocab)
            return bad("logit_bias", "'logit_bias' names token id " + std::to_string(b.token) + "; the model's vocabulary has " +
                                         std::to_string(info.n_vocab) + " tokens");
    const int64_t n_prompt = static_cast<int64_t>(tokens.size());
    if (n_prompt >= info.n_ctx)
        return bad(param,
                   "the prompt has " + std::to_string(n_prompt) + " tokens; this model's context holds " + std::to_string(info.n_ctx) +
                       " and at least one must be left to generate",
                   "context_length_exceeded");
    return tokens;
}

workbench::EngineRequest engine_request(const CompletionContext& ctx, const ApiRequest& r, std::vector<workbench::TokenId> prompt,
                                        std::optional<ApiError>& error) {
    workbench::EngineRequest out;
    const int32_t n_ctx = ctx.engine.model_info().n_ctx;
    const int32_t room = n_ctx - static_cast<int32_t>(prompt.size());
    if (r.max_tokens && *r.max_tokens > room && ctx.engine.model_info().context_bounded)
        error = bad("max_tokens", "'max_tokens' is " + std::to_string(*r.max_tokens) + " but the prompt's " +
                                                          std::to_string(prompt.size()) + " tokens leave " + std::to_string(room) +
                                                          " of the context's " + std::to_string(n_ctx),
                    "context_length_exceeded");
    out.prompt = std::move(prompt);
    out.generation.max_tokens = r.max_tokens.value_or(room);
    out.generation.sampling = r.sampling;
    out.generation.stop_strings = r.stop;
    out.generation.ignore_eos = r.ignore_eos;
    out.generation.grammar = r.grammar;
    if (r.endpoint == Endpoint::chat_completions) {
        const workbench::ChatFormat format = forces_call(r) ? workbench::forced_call_format(ctx.engine.chat_format()) : ctx.engine.chat_format();
        if (forces_call(r)) {
            auto g = workbench::tool_call_grammar(format, r.tools, r.tool_choice == ApiRequest::ToolChoice::named ? r.tool_name : "",
                                                  r.parallel_tool_calls);
            if (!g.ok()) error = bad("tools", g.status().message());
            else out.generation.grammar = std::move(*g);
        }
        out.generation.render_special = format.needs_special_text();
    }
    workbench::SpeculationParams& spec = out.generation.speculation;
    spec = ctx.options.speculation;
    if (r.draft) spec.kind = *r.draft;
    if (r.draft_max) spec.draft_max = *r.draft_max;
    if (r.draft_ngram) spec.ngram = *r.draft_ngram;
    out.n_samples = r.best_of;
    // best_of ranks its completions by their tokens' logprobs, so it asks for them.
    out.top_logprobs = r.logprobs ? r.top_logprobs : r.best_of > r.n ? 0 : -1;
    out.prompt_logits = r.echo && r.logprobs;
    return out;
}

// The logprob of each prompt token under the row before it (echo with logprobs), computed on the
// engine's thread as the prompt's rows arrive (in chunks, maybe again after a preemption) and
// handed on once every position is scored; the first token, which nothing predicts, has none.
// Only sample 0's rows count: a variant that cannot fork runs the prompt once per sample.
struct PromptScorer {
    std::vector<workbench::TokenId> prompt;
    int32_t top = 0;
    std::vector<std::optional<ChannelEvent>> scored;   // by position
    size_t n_scored = 0;
    bool sent = false;
    std::vector<workbench::TokenId> ids;                // scratch for the top alternatives

    void score(const workbench::RequestEvent& ev, workbench::Engine& engine, RequestChannel& channel) {
        if (ev.sample != 0 || sent || prompt.empty()) return;
        const size_t n_vocab = static_cast<size_t>(engine.model_info().n_vocab);
        scored.resize(prompt.size());
        for (size_t row = 0; (row + 1) * n_vocab <= ev.logits.size(); ++row) {
            const size_t next = static_cast<size_t>(ev.index) + row + 1;   // the position this row predicts
            if (next >= prompt.size()) continue;                            // the last row predicts the output
            const std::span<const float> x = ev.logits.subspan(row * n_vocab, n_vocab);
            const float peak = *std::max_element(x.begin(), x.end());
            double sum = 0;
            for (float v : x) sum += std::exp(static_cast<double>(v - peak));
            const float log_z = peak + static_cast<float>(std::log(sum));
            ChannelEvent out;
            out.kind = ChannelEvent::Kind::prompt_token;
            out.logprob = TokenLogprobText{engine.token_text(prompt[next]), x[static_cast<size_t>(prompt[next])] - log_z};
            if (top > 0) {
                ids.resize(n_vocab);
                std::iota(ids.begin(), ids.end(), 0);
                const size_t k = std::min(n_vocab, static_cast<size_t>(top));
                std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(), [&](workbench::TokenId a, workbench::TokenId b) {
                    return x[static_cast<size_t>(a)] > x[static_cast<size_t>(b)];
                });
                for (size_t i = 0; i < k; ++i) out.top_logprobs.push_back({engine.token_text(ids[i]), x[static_cast<size_t>(ids[i])] - log_z});
            }
            n_scored += !scored[next].has_value();
            scored[next] = std::move(out);
        }
        if (n_scored + 1 < prompt.size()) return;
        ChannelEvent first;
        first.kind = ChannelEvent::Kind::prompt_token;
        first.logprob = TokenLogprobText{engine.token_text(prompt[0]), 0};
        first.no_logprob = true;
        channel.push(std::move(first));
        for (size_t p = 1; p < prompt.size(); ++p) channel.push(std::move(*scored[p]));
        sent = true;
    }
};

// The loop's events → the channel, on the engine's thread.
workbench::RequestEventCallback forward_events(std::shared_ptr<RequestChannel> channel, workbench::Engine& engine, ServerMetrics& metrics,
                                               std::shared_ptr<PromptScorer> scorer) {
    return [channel, &engine, &metrics, scorer](const workbench::RequestEvent& ev) {
        ChannelEvent out;
        out.sample = ev.sample;
        switch (ev.kind) {
            case workbench::RequestEvent::Kind::token:
                if (ev.text.empty() && !ev.logprob) return;
                out.text = ev.text;
                if (ev.logprob) {
                    out.logprob = TokenLogprobText{engine.token_text(ev.token), *ev.logprob};
                    for (const auto& alt : ev.top_logprobs) out.top_logprobs.push_back({engine.token_text(alt.token), alt.logprob});
                }
                break;
            case workbench::RequestEvent::Kind::finished:
                out.kind = ChannelEvent::Kind::finished;
                out.text = ev.text;
                out.stop_reason = ev.stop_reason;
                out.n_output_tokens = ev.metrics.n_output_tokens;
                metrics.record_finished(ev.metrics);
                break;
            case workbench::RequestEvent::Kind::failed:
                out.kind = ChannelEvent::Kind::failed;
                out.status = ev.status;
                break;
            case workbench::RequestEvent::Kind::prompt_logits:
                if (scorer) scorer->score(ev, engine, *channel);
                return;
            case workbench::RequestEvent::Kind::step: return;
        }
        channel->push(std::move(out));
    };
}

// The n of best_of choices whose tokens have the highest mean logprob (OpenAI's rule), in
// their original order.
std::vector<ChoiceState> best_choices(std::vector<ChoiceState> all, int32_t n) {
    auto mean = [](const ChoiceState& c) {
        double sum = 0;
        int32_t count = 0;
        for (const ChannelEvent& t : c.tokens)
            if (t.kind == ChannelEvent::Kind::token && t.logprob) sum += t.logprob->logprob, ++count;
        return count ? sum / count : -INFINITY;
    };
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mean(all[a]) > mean(all[b]); });
    order.resize(static_cast<size_t>(n));
    std::sort(order.begin(), order.end());
    std::vector<ChoiceState> out;
    for (size_t i : order) out.push_back(std::move(all[i]));
    return out;
}

void answer_whole(const CompletionContext& ctx, const ApiRequest& r, const ResponseHeader& header, int32_t n_prompt,
                  const std::string& echo_text, const ReplyReading& reading, workbench::RequestHandle handle, RequestChannel& channel,
                  httplib::Response& res) {
    std::vector<ChoiceState> choices(static_cast<size_t>(r.best_of));
    std::vector<ChannelEvent> prompt_tokens;   // echo with logprobs
    std::optional<ApiError> failure;
    for (;;) {
        const bool ended = channel.all_ended();   // before take: the events taken then include the last
        for (ChannelEvent& ev : channel.take(std::chrono::milliseconds(ended ? 0 : 200))) {
            ChoiceState& c = choices[static_cast<size_t>(ev.sample)];
            switch (ev.kind) {
                case ChannelEvent::Kind::prompt_token: prompt_tokens.push_back(std::move(ev)); break;
                case ChannelEvent::Kind::token:
                    if (ev.logprob) c.tokens.push_back(std::move(ev));
                    break;
                case ChannelEvent::Kind::finished:
                    c.text = std::move(ev.text);
                    c.finish_reason = finish_reason(ev.stop_reason);
                    c.n_output_tokens = ev.n_output_tokens;
                    break;
                case ChannelEvent::Kind::failed:
                    if (!failure) failure = engine_error(ev.status);
                    break;
            }
        }
        if (ended) break;
        if (ctx.client_gone()) {   // nobody to answer: stop spending steps on it
            ctx.engine.cancel(handle);
            return send_error(res, engine_error(workbench::error(StatusCode::cancelled, "the client closed the connection")));
        }
        if (ctx.past_grace()) {
            ctx.engine.cancel(handle);
            return send_error(res, shutting_down());
        }
    }
    if (failure) return send_error(res, *failure);
    int32_t n_generated = 0;
    for (const ChoiceState& c : choices) n_generated += c.n_output_tokens;
    if (r.best_of > r.n) choices = best_choices(std::move(choices), r.n);
    if (reading.on)
        for (size_t i = 0; i < choices.size(); ++i) {
            ChoiceState& c = choices[i];
            int32_t n_calls = 0;
            c.reply = reading.with_ids(workbench::parse_chat_reply(reading.format, c.text, reading.tools, reading.thinking_open), n_calls,
                                       static_cast<int32_t>(i));
            if (!c.reply->tool_calls.empty() && c.finish_reason == "stop") c.finish_reason = "tool_calls";
        }
    if (r.echo)
        for (ChoiceState& c : choices) {
            c.text = echo_text + c.text;
            c.tokens.insert(c.tokens.begin(), prompt_tokens.begin(), prompt_tokens.end());
        }
    res.set_content(workbench::dump_json(completion_json(header, choices, r.logprobs, n_prompt, n_generated)), "application/json");
}

// A stream's state between the provider's calls (HTTP thread) and its release.
struct StreamState {
    ApiRequest request;
    ResponseHeader header;
    int32_t n_prompt = 0;
    workbench::RequestHandle handle = 0;
    std::shared_ptr<RequestChannel> channel;
    workbench::Engine* engine = nullptr;
    const std::atomic<bool>* stopping = nullptr;
    std::function<bool()> past_grace;
    int heartbeat_ms = 2000;
    std::string echo_text;             // sent as each choice's first text
    std::vector<size_t> streamed;      // bytes of text sent per choice
    std::vector<bool> role_sent, ended;
    ReplyReading reading;                                              // chat: replies read per choice
    std::vector<std::unique_ptr<workbench::ChatReplyStream>> readers;
    std::vector<int32_t> n_calls;
    int32_t n_completion = 0;
    bool finished = false;             // [DONE] written
};

// The SSE text for a batch of events; sets `st.finished` once every choice ended.
std::string stream_text(StreamState& st, std::vector<ChannelEvent>& events) {
    std::string out;
    const bool chat = st.header.endpoint == Endpoint::chat_completions;
    const bool usage_null = st.request.include_usage;
    auto send_text = [&](int32_t i, const std::string& text, const Json& logprobs) {
        const bool role = chat && !st.role_sent[static_cast<size_t>(i)];
        out += sse(chunk_json(st.header, i, &text, role, logprobs, "", usage_null));
        st.role_sent[static_cast<size_t>(i)] = true;
        st.streamed[static_cast<size_t>(i)] += text.size();
    };
    // A chat reply read as it streams: thinking, answer and whole tool calls, each as its delta.
    auto send_reply = [&](int32_t i, workbench::ChatReply d, const Json& logprobs) {
        const size_t k = static_cast<size_t>(i);
        const int32_t first_call = st.n_calls[k];
        d = st.reading.with_ids(std::move(d), st.n_calls[k], i);
        auto with_role = [&](Json delta) {
            if (!st.role_sent[k]) delta["role"] = "assistant";
            st.role_sent[k] = true;
            return delta;
        };
        if (!d.reasoning.empty()) out += sse(delta_chunk_json(st.header, i, with_role({{"reasoning_content", d.reasoning}}), nullptr, usage_null));
        if (!d.content.empty() || !logprobs.is_null())
            out += sse(delta_chunk_json(st.header, i, with_role({{"content", d.content}}), logprobs, usage_null));
        for (size_t c = 0; c < d.tool_calls.size(); ++c)
            out += sse(delta_chunk_json(st.header, i,
                                        with_role({{"tool_calls", Json::array({tool_call_json(d.tool_calls[c], first_call + static_cast<int32_t>(c))})}}),
                                        nullptr, usage_null));
    };
    for (ChannelEvent& ev : events) {
        const size_t i = static_cast<size_t>(ev.sample);
        if (st.ended[i] || ev.kind == ChannelEvent::Kind::prompt_token) continue;
        if (st.reading.on && ev.kind == ChannelEvent::Kind::token) {
            const Json logprobs = logprobs_json(st.header.endpoint, {&ev}, st.request.logprobs, st.streamed[i]);
            st.streamed[i] += ev.text.size();
            send_reply(ev.sample, st.readers[i]->push(ev.text), logprobs);
            continue;
        }
        if (st.reading.on && ev.kind == ChannelEvent::Kind::finished) {
            workbench::ChatReply rest = st.readers[i]->push(ev.text.size() > st.streamed[i] ? ev.text.substr(st.streamed[i]) : std::string());
            workbench::ChatReply last = st.readers[i]->finish();
            rest.content += last.content;
            rest.reasoning += last.reasoning;
            for (workbench::ToolCall& c : last.tool_calls) rest.tool_calls.push_back(std::move(c));
            send_reply(ev.sample, std::move(rest), nullptr);
            if (!st.role_sent[i]) send_text(ev.sample, "", nullptr);
            std::string reason = finish_reason(ev.stop_reason);
            if (st.readers[i]->made_tool_calls() && reason == "stop") reason = "tool_calls";
            out += sse(chunk_json(st.header, ev.sample, nullptr, false, nullptr, reason, usage_null));
            st.n_completion += ev.n_output_tokens;
            st.ended[i] = true;
            continue;
        }
        if (!st.echo_text.empty() && !st.role_sent[i]) {
            out += sse(chunk_json(st.header, ev.sample, &st.echo_text, false, nullptr, "", usage_null));
            st.role_sent[i] = true;
        }
        if (ev.kind == ChannelEvent::Kind::token) {
            const Json logprobs = logprobs_json(st.header.endpoint, {&ev}, st.request.logprobs, st.streamed[i]);
            send_text(ev.sample, ev.text, logprobs);
        } else if (ev.kind == ChannelEvent::Kind::finished) {
            // Text held back until the end (an unfinished stop-string prefix, a last partial character).
            if (ev.text.size() > st.streamed[i]) send_text(ev.sample, ev.text.substr(st.streamed[i]), nullptr);
            else if (chat && !st.role_sent[i]) send_text(ev.sample, "", nullptr);
            out += sse(chunk_json(st.header, ev.sample, nullptr, false, nullptr, finish_reason(ev.stop_reason), usage_null));
            st.n_completion += ev.n_output_tokens;
            st.ended[i] = true;
        } else {
            out += sse(error_json(engine_error(ev.status)));
            st.ended[i] = true;
        }
    }
    if (std::all_of(st.ended.begin(), st.ended.end(), [](bool e) { return e; })) {
        if (st.request.include_usage) out += sse(usage_chunk_json(st.header, st.n_prompt, st.n_completion));
        out += "data: [DONE]\n\n";
        st.finished = true;
    }
    return out;
}

void answer_stream(const CompletionContext& ctx, ApiRequest r, ResponseHeader header, int32_t n_prompt, std::string echo_text,
                   const ReplyReading& reading, workbench::RequestHandle handle, std::shared_ptr<RequestChannel> channel,
                   httplib::Response& res) {
    auto st = std::make_shared<StreamState>();
    const size_t n = static_cast<size_t>(r.n);
    st->request = std::move(r);
    st->header = std::move(header);
    st->n_prompt = n_prompt;
    st->echo_text = std::move(echo_text);
    st->handle = handle;
    st->channel = std::move(channel);
    st->engine = &ctx.engine;
    st->stopping = &ctx.stopping;
    st->past_grace = ctx.past_grace;
    st->heartbeat_ms = ctx.options.heartbeat_ms;
    st->streamed.assign(n, 0);
    st->role_sent.assign(n, false);
    st->ended.assign(n, false);
    st->reading = reading;
    st->n_calls.assign(n, 0);
    if (reading.on)
        for (size_t i = 0; i < n; ++i)
            st->readers.push_back(std::make_unique<workbench::ChatReplyStream>(reading.format, reading.tools, reading.thinking_open));
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [st](size_t, httplib::DataSink& sink) {
            if (st->finished) {
                sink.done();
                return true;
            }
            if (st->past_grace()) {
                // Shutting down: every choice still open ends with an error that says so, then
                // [DONE] and the chunked body's end.
                st->engine->cancel(st->handle);
                std::string out;
                for (size_t i = 0; i < st->ended.size(); ++i)
                    if (!st->ended[i]) out += sse(error_json(shutting_down()));
                out += "data: [DONE]\n\n";
                st->finished = true;
                sink.write(out.data(), out.size());
                sink.done();
                return true;
            }
            // While stopping, wake often enough to notice the end of the grace period.
            const int wait_ms = *st->stopping ? 100 : st->heartbeat_ms;
            std::vector<ChannelEvent> events = st->channel->take(std::chrono::milliseconds(wait_ms));
            if (events.empty()) {
                if (*st->stopping) return true;
                static const std::string kHeartbeat = ": keep-alive\n\n";
                return sink.write(kHeartbeat.data(), kHeartbeat.size());
            }
            const std::string out = stream_text(*st, events);
            if (!out.empty() && !sink.write(out.data(), out.size())) return false;
            if (st->finished) sink.done();
            return true;
        },
        [st](bool success) {
            // The client left before the end (or a write failed): stop spending steps on it.
            if (!success || !st->finished) st->engine->cancel(st->handle);
        });
}

}  // namespace

void send_error(httplib::Response& res, const ApiError& error) {
    res.status = error.http_status;
    res.set_content(workbench::dump_json(error_json(error)), "application/json");
}

void handle_completion(const CompletionContext& ctx, Endpoint endpoint, const std::string& body, httplib::Response& res) {
    auto parsed = parse_api_request(body, endpoint, ctx.options.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
    ApiRequest& r = std::get<ApiRequest>(parsed);
    if (!r.model.empty() && r.model != ctx.model_name) {
        ApiError e = bad("model", "the model '" + r.model + "' does not exist; this server serves '" + ctx.model_name + "'", "model_not_found");
        e.http_status = 404;
        return send_error(res, e);
    }
    auto tokens = prompt_tokens(ctx, r);
    if (auto* e = std::get_if<ApiError>(&tokens)) return send_error(res, *e);
    const int32_t n_prompt = static_cast<int32_t>(std::get<0>(tokens).size());
    // Echo: the prompt as the client sent it (ids: as the tokenizer spells them).
    std::string echo_text;
    if (r.echo) echo_text = r.prompt_tokens ? ctx.engine.detokenize(*r.prompt_tokens, true) : r.prompt_text;
    std::shared_ptr<PromptScorer> scorer;
    if (r.echo && r.logprobs) {
        scorer = std::make_shared<PromptScorer>();
        scorer->prompt = std::get<0>(tokens);
        scorer->top = r.top_logprobs;
    }
    std::optional<ApiError> limit;
    const ReplyReading reading = reply_reading(ctx, r, std::get<0>(tokens));
    workbench::EngineRequest request = engine_request(ctx, r, std::move(std::get<0>(tokens)), limit);
    if (limit) return send_error(res, *limit);
    if (ctx.stopping) {
        ApiError e = shutting_down();
        e.message = "the server is shutting down and takes no new requests";
        return send_error(res, e);
    }

    ResponseHeader header{new_response_id(endpoint), static_cast<int64_t>(std::time(nullptr)), ctx.model_name, endpoint};
    auto channel = std::make_shared<RequestChannel>(r.best_of);
    const workbench::RequestHandle handle =
        ctx.engine.submit(std::move(request), forward_events(channel, ctx.engine, ctx.metrics, std::move(scorer)));
    if (r.stream)
        return answer_stream(ctx, std::move(r), std::move(header), n_prompt, std::move(echo_text), reading, handle, std::move(channel), res);
    answer_whole(ctx, r, header, n_prompt, echo_text, reading, handle, *channel, res);
}

}  // namespace wbserver
