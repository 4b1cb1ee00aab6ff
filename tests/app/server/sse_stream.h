// Reading a server-sent-events body as OpenAI's streaming clients do, strictly: every event one
// `data: <json>` line (comments allowed), one id and object type throughout, exactly one finish
// per choice, and `data: [DONE]` last. Shared by the server tests.
#pragma once

#include <QtGlobal>

#include <string>
#include <vector>

#include "workbench/json.h"

namespace wbtest {

using workbench::Json;

inline Json parse(const std::string& text) {
    auto j = workbench::parse_json(text);
    if (!j.ok()) qWarning("not JSON: %s", text.substr(0, 300).c_str());
    return j.ok() ? *j : Json();
}

struct Streamed {
    std::vector<std::string> text;            // per choice
    std::vector<std::string> finish;          // per choice
    int n_chunks = 0;
    bool done = false;                        // ended with data: [DONE]
    Json usage;                               // the usage chunk, if any
    std::string error;                        // what was malformed
};

// Parses a whole SSE body: every event one `data: <json>` (comments allowed), ids and objects
// consistent, exactly one finish per choice, [DONE] last.
inline Streamed parse_stream(const std::string& body, bool chat, int n_choices) {
    Streamed s;
    s.text.resize(static_cast<size_t>(n_choices));
    s.finish.resize(static_cast<size_t>(n_choices));
    std::string id;
    size_t pos = 0;
    while (pos < body.size()) {
        const size_t end = body.find("\n\n", pos);
        if (end == std::string::npos) {
            s.error = "an event without its blank line";
            return s;
        }
        const std::string event = body.substr(pos, end - pos);
        pos = end + 2;
        if (event.rfind(":", 0) == 0) continue;   // a comment (heartbeat)
        if (event.rfind("data: ", 0) != 0) {
            s.error = "not a data line: " + event;
            return s;
        }
        if (s.done) {
            s.error = "data after [DONE]";
            return s;
        }
        const std::string data = event.substr(6);
        if (data == "[DONE]") {
            s.done = true;
            continue;
        }
        const Json j = parse(data);
        if (!j.is_object() || !j.contains("choices")) {
            s.error = "not a chunk: " + data;
            return s;
        }
        if (id.empty()) id = j["id"].get<std::string>();
        if (j["id"] != id || j["object"] != (chat ? "chat.completion.chunk" : "text_completion")) {
            s.error = "id or object changed: " + data;
            return s;
        }
        ++s.n_chunks;
        if (j.contains("usage") && !j["usage"].is_null()) s.usage = j["usage"];
        for (const Json& c : j["choices"]) {
            const size_t i = c["index"].get<size_t>();
            if (i >= s.text.size() || !s.finish[i].empty()) {
                s.error = "a chunk for a finished or unknown choice: " + data;
                return s;
            }
            if (chat && c["delta"].contains("content")) s.text[i] += c["delta"]["content"].get<std::string>();
            if (!chat) s.text[i] += c["text"].get<std::string>();
            if (!c["finish_reason"].is_null()) s.finish[i] = c["finish_reason"].get<std::string>();
        }
    }
    for (const auto& f : s.finish)
        if (f.empty()) s.error = "a choice never finished";
    if (!s.done && s.error.empty()) s.error = "no [DONE]";
    return s;
}

}  // namespace wbtest
