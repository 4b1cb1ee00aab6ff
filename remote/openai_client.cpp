// HTTP through cpp-httplib's client; a stream's events are parsed as they arrive (SseReader) and
// timed at arrival, which is what a user of the remote server experiences: network, queueing and
// the server's batching included.
#include "openai_client.h"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include <httplib.h>

#include "sse_reader.h"
#include "workbench/chat_reply.h"
#include "workbench/json.h"

namespace wbremote {
namespace {

using workbench::Json;
using Clock = std::chrono::steady_clock;

struct Url {
    std::string scheme_host_port;   // "http://127.0.0.1:8080"
    std::string prefix;             // "/v1"
};

Url split(const std::string& base_url) {
    static const std::regex re(R"(^(https?://[^/]+)(/.*)?$)");
    std::smatch m;
    Url u;
    std::string base = base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (!std::regex_match(base, m, re)) return u;
    u.scheme_host_port = m[1];
    u.prefix = m[2];
    if (u.prefix.size() < 3 || u.prefix.compare(u.prefix.size() - 3, 3, "/v1") != 0) u.prefix += "/v1";
    return u;
}

// The server's root ("/tokenize", "/version" and "/metrics" live beside /v1, not under it).
std::string root_of(const Url& u) { return u.prefix.substr(0, u.prefix.size() - 3); }

httplib::Client client_for(const RemoteEndpoint& e, const Url& u) {
    httplib::Client c(u.scheme_host_port);
    c.set_connection_timeout(e.connect_timeout_s, 0);
    c.set_read_timeout(e.read_timeout_s, 0);
    c.set_write_timeout(e.read_timeout_s, 0);
    if (!e.api_key.empty()) c.set_bearer_token_auth(e.api_key);
    return c;
}

// An HTTP error in a sentence: the status and the server's own message when it sent OpenAI's
// error object (or any text).
std::string http_error(int status, const std::string& body) {
    std::string message;
    if (auto j = workbench::parse_json(body); j.ok() && j->is_object()) {
        const Json& e = j->contains("error") ? (*j)["error"] : *j;
        if (e.is_object() && e.contains("message") && e["message"].is_string()) message = e["message"].get<std::string>();
        else if (e.is_string()) message = e.get<std::string>();
        else if (j->contains("detail")) message = workbench::dump_json((*j)["detail"]);
    }
    if (message.empty()) message = body.substr(0, 200);
    return "HTTP " + std::to_string(status) + (message.empty() ? "" : ": " + message);
}

std::string transport_error(httplib::Error e, const std::string& where) {
    switch (e) {
        case httplib::Error::Connection: return "cannot connect to " + where + " (refused or unreachable)";
        case httplib::Error::ConnectionTimeout: return "connecting to " + where + " timed out";
        case httplib::Error::Read: return "the connection to " + where + " broke or stalled while reading";
        case httplib::Error::Write: return "the connection to " + where + " broke while sending";
        case httplib::Error::Canceled: return "cancelled";
        default: return "HTTP error talking to " + where + ": " + httplib::to_string(e);
    }
}

Json request_json(const RemoteRequest& r) {
    const workbench::GenerationRequest& g = r.generation;
    Json body = Json::object();
    if (!r.model.empty()) body["model"] = r.model;
    if (r.chat) {
        body["messages"] = workbench::chat_messages_json(r.messages);
        if (r.tools.is_array() && !r.tools.empty()) {
            body["tools"] = r.tools;
            if (r.tool_required) body["tool_choice"] = "required";
        }
    } else {
        if (r.prompt_tokens.empty()) body["prompt"] = r.prompt;
        else body["prompt"] = r.prompt_tokens;
    }
    body["max_tokens"] = g.max_tokens;
    body["temperature"] = g.sampling.temperature;
    if (g.sampling.top_p < 1) body["top_p"] = g.sampling.top_p;
    if (g.sampling.top_k > 0) body["top_k"] = g.sampling.top_k;
    if (g.sampling.min_p > 0) body["min_p"] = g.sampling.min_p;
    if (g.sampling.presence_penalty != 0) body["presence_penalty"] = g.sampling.presence_penalty;
    if (g.sampling.frequency_penalty != 0) body["frequency_penalty"] = g.sampling.frequency_penalty;
    if (g.sampling.seed != 0) body["seed"] = g.sampling.seed;
    if (!g.stop_strings.empty()) body["stop"] = g.stop_strings;
    if (g.ignore_eos) body["ignore_eos"] = true;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    return body;
}

// A chat stream's deltas as one text, the way the workbench's chat reads replies
// (workbench/chat_reply.h, Hermes form): the thinking ("reasoning_content", or vLLM's newer
// "reasoning") inside <think>…</think>, and the calls (tool_calls deltas, by index, arguments in
// fragments) as <tool_call> blocks, written whole once the answer moves on or the stream ends.
class DeltaTranscript {
public:
    std::string take(const Json& delta) {
        std::string out;
        for (const char* key : {"reasoning_content", "reasoning"})
            if (const auto it = delta.find(key); it != delta.end() && it->is_string() && !it->get<std::string>().empty()) {
                if (!thinking_) out += "<think>";
                thinking_ = true;
                out += it->get<std::string>();
                break;
            }
        if (const auto it = delta.find("tool_calls"); it != delta.end() && it->is_array())
            for (const Json& c : *it) add_call(c);
        if (const auto it = delta.find("content"); it != delta.end() && it->is_string() && !it->get<std::string>().empty()) {
            out += close();
            out += it->get<std::string>();
        }
        return out;
    }
    // The thinking closed and the calls written.
    std::string close() {
        std::string out = thinking_ ? "</think>\n\n" : "";
        thinking_ = false;
        for (const Call& c : calls_) {
            Json call = {{"name", c.name}};
            auto args = workbench::parse_json(c.arguments.empty() ? "{}" : c.arguments);
            call["arguments"] = args.ok() ? *args : Json(c.arguments);
            if (!c.id.empty()) call["id"] = c.id;
            out += "<tool_call>\n" + workbench::dump_json(call) + "\n</tool_call>\n";
        }
        calls_.clear();
        return out;
    }

private:
    struct Call {
        std::string id, name, arguments;
    };
    bool thinking_ = false;
    std::vector<Call> calls_;

    void add_call(const Json& c) {
        if (!c.is_object()) return;
        size_t index = calls_.size();
        if (const auto it = c.find("index"); it != c.end() && it->is_number_unsigned()) index = it->get<size_t>();
        else if (!calls_.empty() && !c.contains("id")) index = calls_.size() - 1;   // a fragment of the last call
        if (index > 127) return;
        if (index >= calls_.size()) calls_.resize(index + 1);
        Call& call = calls_[index];
        if (const auto it = c.find("id"); it != c.end() && it->is_string()) call.id = it->get<std::string>();
        if (const auto fn = c.find("function"); fn != c.end() && fn->is_object()) {
            if (const auto n = fn->find("name"); n != fn->end() && n->is_string()) call.name += n->get<std::string>();
            if (const auto a = fn->find("arguments"); a != fn->end()) {
                if (a->is_string()) call.arguments += a->get<std::string>();
                else if (a->is_object()) call.arguments = workbench::dump_json(*a);
            }
        }
    }
};

}  // namespace

const char* server_kind_name(ServerKind kind) {
    switch (kind) {
        case ServerKind::workbench: return "workbench";
        case ServerKind::vllm: return "vllm";
        case ServerKind::sglang: return "sglang";
        case ServerKind::trtllm: return "tensorrt-llm";
        case ServerKind::llamacpp: return "llama.cpp";
        case ServerKind::unknown: break;
    }
    return "unknown";
}

workbench::ConfigurationRecord remote_configuration(const std::string& base_url, const std::string& model, const std::string& server) {
    workbench::ConfigurationRecord c;
    c.model = model;
    c.backend = "remote";
    c.variant = server;
    c.config_json = workbench::dump_json({{"base_url", base_url}, {"model", model}, {"server", server}});
    return c;
}

workbench::Result<std::vector<RemoteModel>> list_models(const RemoteEndpoint& endpoint) {
    const Url u = split(endpoint.base_url);
    if (u.scheme_host_port.empty())
        return workbench::error(workbench::StatusCode::invalid_argument,
                                "'" + endpoint.base_url + "' is not a base URL like http://host:port/v1");
    auto c = client_for(endpoint, u);
    auto res = c.Get(u.prefix + "/models");
    if (!res) return workbench::error(workbench::StatusCode::unavailable, transport_error(res.error(), u.scheme_host_port));
    if (res->status != 200) return workbench::error(workbench::StatusCode::unavailable, http_error(res->status, res->body));
    auto j = workbench::parse_json(res->body);
    if (!j.ok() || !j->is_object() || !j->contains("data") || !(*j)["data"].is_array())
        return workbench::error(workbench::StatusCode::unsupported, u.prefix + "/models did not answer an OpenAI model list");
    std::vector<RemoteModel> models;
    for (const Json& m : (*j)["data"]) {
        if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
        RemoteModel model;
        model.id = m["id"].get<std::string>();
        if (m.contains("owned_by") && m["owned_by"].is_string()) model.owned_by = m["owned_by"].get<std::string>();
        if (m.contains("max_model_len") && m["max_model_len"].is_number_integer()) model.max_model_len = m["max_model_len"].get<int64_t>();
        if (m.contains("attention") && m["attention"].is_string()) model.attention = m["attention"].get<std::string>();
        if (m.contains("kv_types") && m["kv_types"].is_string()) model.kv_types = m["kv_types"].get<std::string>();
        models.push_back(std::move(model));
    }
    if (models.empty()) return workbench::error(workbench::StatusCode::not_found, u.prefix + "/models lists no model");
    return models;
}

ServerKind detect_server_kind(const RemoteEndpoint& endpoint, const std::vector<RemoteModel>& models) {
    for (const RemoteModel& m : models) {
        if (m.owned_by == "inference-workbench") return ServerKind::workbench;
        if (m.owned_by == "vllm") return ServerKind::vllm;
        if (m.owned_by == "sglang") return ServerKind::sglang;
        if (m.owned_by == "llamacpp") return ServerKind::llamacpp;
    }
    const Url u = split(endpoint.base_url);
    if (u.scheme_host_port.empty()) return ServerKind::unknown;
    if (const std::optional<std::string> metrics = fetch_metrics(endpoint)) {
        const std::string& t = *metrics;
        if (t.find("workbench:") != std::string::npos) return ServerKind::workbench;
        if (t.find("vllm:") != std::string::npos) return ServerKind::vllm;
        if (t.find("sglang:") != std::string::npos) return ServerKind::sglang;
        if (t.find("llamacpp:") != std::string::npos) return ServerKind::llamacpp;
        if (t.find("trtllm") != std::string::npos) return ServerKind::trtllm;
    }
    auto c = client_for(endpoint, u);
    c.set_read_timeout(5, 0);
    if (auto res = c.Get(root_of(u) + "/props"); res && res->status == 200 && res->body.find("default_generation_settings") != std::string::npos)
        return ServerKind::llamacpp;
    if (auto res = c.Get(root_of(u) + "/version"); res && res->status == 200) {
        if (res->body.find("tensorrt") != std::string::npos || res->body.find("trtllm") != std::string::npos) return ServerKind::trtllm;
        if (res->body.find("sglang") != std::string::npos) return ServerKind::sglang;
        return ServerKind::vllm;   // vLLM answers {"version": "..."}
    }
    return ServerKind::unknown;
}

std::optional<std::string> fetch_metrics(const RemoteEndpoint& endpoint) {
    const Url u = split(endpoint.base_url);
    if (u.scheme_host_port.empty()) return std::nullopt;
    auto c = client_for(endpoint, u);
    c.set_read_timeout(std::min(5, endpoint.read_timeout_s), 0);
    if (auto res = c.Get(root_of(u) + "/metrics"); res && res->status == 200) return res->body;
    return std::nullopt;
}

std::optional<int32_t> remote_token_count(const RemoteEndpoint& endpoint, const std::string& model, const std::string& text) {
    const Url u = split(endpoint.base_url);
    if (u.scheme_host_port.empty()) return std::nullopt;
    auto c = client_for(endpoint, u);
    // vLLM and SGLang read "prompt", llama.cpp "content"; each ignores the other's field.
    const Json body = {{"model", model}, {"prompt", text}, {"content", text}, {"add_special_tokens", true}};
    auto res = c.Post(root_of(u) + "/tokenize", workbench::dump_json(body), "application/json");
    if (!res || res->status != 200) return std::nullopt;
    auto j = workbench::parse_json(res->body);
    if (!j.ok() || !j->is_object()) return std::nullopt;
    if (j->contains("count") && (*j)["count"].is_number_integer()) return (*j)["count"].get<int32_t>();
    if (j->contains("tokens") && (*j)["tokens"].is_array()) return static_cast<int32_t>((*j)["tokens"].size());
    return std::nullopt;
}

RemoteCompletion stream_completion(const RemoteEndpoint& endpoint, const RemoteRequest& request,
                                   const std::function<void(std::string_view text, double t_ms)>& on_text, const std::atomic<bool>* cancel) {
    RemoteCompletion out;
    const Url u = split(endpoint.base_url);
    if (u.scheme_host_port.empty()) {
        out.error = "'" + endpoint.base_url + "' is not a base URL like http://host:port/v1";
        return out;
    }
    auto c = client_for(endpoint, u);
    httplib::Request req;
    req.method = "POST";
    req.path = u.prefix + (request.chat ? "/chat/completions" : "/completions");
    req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
    if (!endpoint.api_key.empty()) req.headers.emplace("Authorization", "Bearer " + endpoint.api_key);
    req.body = workbench::dump_json(request_json(request));

    SseReader sse;
    DeltaTranscript transcript;
    std::string error_body;
    bool event_stream = false, done = false;
    int32_t n_content_events = 0;
    std::vector<double> arrivals;   // ms since the send, one per event that carried text
    std::optional<int32_t> usage_prompt, usage_completion;
    const auto t0 = Clock::now();
    auto since = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };

    req.response_handler = [&](const httplib::Response& res) {
        out.http_status = res.status;
        event_stream = res.get_header_value("Content-Type").find("text/event-stream") != std::string::npos;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        if (cancel && *cancel) return false;
        if (out.http_status != 200 || !event_stream) {
            if (error_body.size() < 65536) error_body.append(data, n);
            return true;
        }
        const double t = since();
        for (const std::string& event : sse.feed(std::string_view(data, n))) {
            if (event == "[DONE]") {
                done = true;
                continue;
            }
            auto j = workbench::parse_json(event);
            if (!j.ok() || !j->is_object()) {
                ++out.n_malformed_lines;
                continue;
            }
            if (j->contains("error")) {
                out.error = http_error(out.http_status, event);
                continue;
            }
            if (j->contains("usage") && (*j)["usage"].is_object()) {
                const Json& us = (*j)["usage"];
                if (us.contains("prompt_tokens") && us["prompt_tokens"].is_number_integer()) usage_prompt = us["prompt_tokens"].get<int32_t>();
                if (us.contains("completion_tokens") && us["completion_tokens"].is_number_integer())
                    usage_completion = us["completion_tokens"].get<int32_t>();
            }
            if (!j->contains("choices") || !(*j)["choices"].is_array()) continue;
            for (const Json& ch : (*j)["choices"]) {
                if (!ch.is_object()) continue;
                std::string piece;
                bool carried = false;   // a token's worth arrived (a call's fragment writes nothing yet)
                if (ch.contains("delta") && ch["delta"].is_object()) {
                    const Json& delta = ch["delta"];
                    piece = transcript.take(delta);
                    carried = !piece.empty() || delta.contains("tool_calls");
                } else if (ch.contains("text") && ch["text"].is_string()) {
                    piece = ch["text"].get<std::string>();
                    carried = !piece.empty();
                }
                if (ch.contains("finish_reason") && ch["finish_reason"].is_string()) {
                    out.finish_reason = ch["finish_reason"].get<std::string>();
                    piece += transcript.close();
                }
                if (carried) {
                    arrivals.push_back(t);
                    ++n_content_events;
                }
                if (!piece.empty()) {
                    out.text += piece;
                    if (on_text) on_text(piece, t);
                }
            }
        }
        return true;
    };

    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    // A cancel must not wait for a silent server's next byte: a watcher closes the socket.
    std::atomic<bool> finished{false};
    std::thread watcher;
    if (cancel)
        watcher = std::thread([&] {
            while (!finished.load()) {
                if (cancel->load()) {
                    c.stop();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    const bool sent = c.send(req, res, err);
    finished = true;
    if (watcher.joinable()) watcher.join();
    const double end_ms = since();
    out.n_malformed_lines += sse.n_malformed_lines();
    // A stream cut off inside the thinking or a call: what arrived of them, written out.
    if (const std::string rest = transcript.close(); !rest.empty()) {
        out.text += rest;
        if (on_text) on_text(rest, end_ms);
    }

    workbench::RequestMetrics& m = out.metrics;
    m.n_prompt_tokens = usage_prompt.value_or(0);
    m.n_output_tokens = usage_completion.value_or(n_content_events);
    if (!arrivals.empty()) {
        m.ttft_ms = arrivals.front();
        m.e2e_ms = arrivals.back();
        for (size_t i = 1; i < arrivals.size(); ++i) m.itl_ms.push_back(arrivals[i] - arrivals[i - 1]);
        m.itl = workbench::latency_stats(m.itl_ms);
        if (m.n_output_tokens > 1) m.tpot_ms = (m.e2e_ms - m.ttft_ms) / (m.n_output_tokens - 1);
    } else {
        m.e2e_ms = end_ms;
    }

    if (out.http_status != 0 && out.http_status != 200) {
        out.error = http_error(out.http_status, error_body.empty() ? res.body : error_body);
        return out;
    }
    if (!sent && out.http_status == 0) {
        out.error = cancel && *cancel ? "cancelled" : transport_error(err, u.scheme_host_port);
        return out;
    }
    if (!event_stream) {
        out.error = "the server answered with '" + res.get_header_value("Content-Type") + "', not an event stream (text/event-stream)";
        return out;
    }
    if (!out.error.empty()) {   // an error event inside the stream
        out.partial = true;
        return out;
    }
    if (!done || out.finish_reason.empty()) {
        out.partial = true;
        out.error = cancel && *cancel ? "cancelled"
                    : !sent           ? transport_error(err, u.scheme_host_port) + " (the stream ended before its finish; the text so far is kept)"
                                      : "the stream ended before its finish (no finish_reason or [DONE]); the text so far is kept";
        return out;
    }
    out.ok = true;
    return out;
}

}  // namespace wbremote
