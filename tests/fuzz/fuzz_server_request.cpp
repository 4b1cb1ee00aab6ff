// libFuzzer target: arbitrary bytes as a request body to both OpenAI endpoints' reader and
// checker (app/server/openai_request), the server's first contact with a client's bytes. An
// accepted request must respect every limit; a refusal must name a 400 and make a JSON error
// object that parses. Any crash, hang, sanitizer report or abort is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const wbserver::RequestLimits limits;
    for (auto endpoint : {wbserver::Endpoint::completions, wbserver::Endpoint::chat_completions}) {
        auto r = wbserver::parse_api_request(body, endpoint, limits);
        if (auto* e = std::get_if<wbserver::ApiError>(&r)) {
            if (e->http_status != 400 || e->message.empty()) std::abort();
            if (!workbench::parse_json(workbench::dump_json(wbserver::error_json(*e))).ok()) std::abort();
            continue;
        }
        const auto& a = std::get<wbserver::ApiRequest>(r);
        if (a.n < 1 || a.n > limits.max_n) std::abort();
        if (a.max_tokens && *a.max_tokens < 1) std::abort();
        if (a.stop.size() > static_cast<size_t>(limits.max_stop_strings)) std::abort();
        if (a.top_logprobs < 0 || a.top_logprobs > limits.max_top_logprobs) std::abort();
        if (!(a.sampling.temperature >= 0 && a.sampling.temperature <= 2 && a.sampling.top_p > 0 && a.sampling.top_p <= 1)) std::abort();
        if (endpoint == wbserver::Endpoint::chat_completions &&
            (a.messages.empty() || a.messages.size() > static_cast<size_t>(limits.max_messages)))
            std::abort();
        if (endpoint == wbserver::Endpoint::completions && a.prompt_text.empty() && (!a.prompt_tokens || a.prompt_tokens->empty())) std::abort();
    }
    return 0;
}
