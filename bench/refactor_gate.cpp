// The refactor gate: one line per prompt set × attention variant × KV types with the md5 of the
// greedy tokens and of every logit they were drawn from, through each way the engine runs a
// request (a chat-style generate, a batch of all the prompts at once, eval_logits). Run before
// and after an engine-core refactor: the two outputs must be identical.
//   workbench-refactor-gate MODEL.gguf [n_threads]
#include <openssl/evp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "workbench/engine.h"

namespace {

using namespace workbench;

class Md5 {
public:
    Md5() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr); }
    ~Md5() { EVP_MD_CTX_free(ctx_); }
    template <typename T>
    void add(const T* data, size_t n) { EVP_DigestUpdate(ctx_, data, n * sizeof(T)); }
    std::string hex() {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_DigestFinal_ex(ctx_, out, &n);
        std::string s;
        char b[3];
        for (unsigned i = 0; i < n; ++i) std::snprintf(b, sizeof b, "%02x", out[i]), s += b;
        return s;
    }

private:
    EVP_MD_CTX* ctx_;
};

const char* kPrompts[] = {
    "The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz combined "
    "movable metal type, oil-based ink and a wooden screw press. Within fifty years presses had spread to "
    "more than two hundred cities across Europe, and the price of books fell",
    "List three facts about the Moon, then explain in two sentences why it always shows the same face to the Earth.",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.gguf [n_threads]\n", argv[0]);
        return 2;
    }
    const int n_threads = argc > 2 ? std::atoi(argv[2]) : 2;
    // Every variant with the three KV types the suite runs most, then the settings docs/VARIANTS.md
    // covers beyond those (sinks, merges, layer ranges, degenerate settings) and the other KV types.
    std::vector<std::pair<const char*, const char*>> lines;
    for (const char* variant : {"full", "sliding:window=32,sinks=4", "cross_layer:group=2", "topk:k=16,recent=8",
                                "compressed:block=4,recent=16", "heavy:block=4,k=8,recent=16", "latent:rank=64"})
        for (const char* kv : {"f16", "q8_0", "k=q8_0,v=q4_0"}) lines.emplace_back(variant, kv);
    for (const char* variant : {"sliding:window=32,sinks=0", "sliding:window=1020,sinks=4", "cross_layer:group=2,merge=mean",
                                "cross_layer:group=2,merge=slerp", "cross_layer:group=2,layers=16-29,merge=mean",
                                "cross_layer:group=3,layers=0-13", "topk:k=1024,recent=64", "compressed:block=4,recent=16,sinks=4",
                                "compressed:block=1,recent=16", "heavy:block=4,k=8,recent=16,sinks=4", "heavy:block=16,k=32,recent=256"})
        lines.emplace_back(variant, "f16");
    for (const char* variant : {"full", "sliding:window=32,sinks=4", "topk:k=16,recent=8", "compressed:block=4,recent=16,sinks=4",
                                "cross_layer:group=2,merge=mean"})
        for (const char* kv : {"f32", "bf16", "fp8", "q4_0"}) lines.emplace_back(variant, kv);
    GenerationRequest greedy;
    greedy.max_tokens = 24;
    greedy.sampling.temperature = 0;
    greedy.ignore_eos = true;
    greedy.token_logits = true;   // the md5s cover the logits each token was drawn from
    int failures = 0;
    for (const auto& [variant, kv] : lines) {
        EngineConfig config;
        config.model_path = argv[1];
        config.n_threads = n_threads;
        config.n_ctx = 512;
        config.n_seq_max = 4;
        config.attention = variant;
        config.kv_types = kv;
        auto loaded = Engine::load(config);
        if (!loaded.ok()) {
            std::printf("%-30s %-14s load failed: %s\n", variant, kv, loaded.status().message().c_str());
            ++failures;
            continue;
        }
        Engine& engine = **loaded;
        // generate: each prompt as a chat turn, the second turn reusing the first's prefix.
        Md5 gen_tokens, gen_logits;
        std::vector<ChatMessage> chat;
        for (const char* p : kPrompts) {
            chat.push_back({"user", p});
            auto r = engine.chat(chat, greedy, {}, nullptr, [&](const RequestEvent& t) { gen_logits.add(t.logits.data(), t.logits.size()); });
            if (!r.ok()) {
                std::printf("%-30s %-14s generate failed: %s\n", variant, kv, r.status().message().c_str());
                ++failures;
                break;
            }
            gen_tokens.add(r->tokens.data(), r->tokens.size());
            chat.push_back({"assistant", r->text});
        }
        // run_batch: the prompts together, two samples of the first.
        Md5 batch_tokens, batch_logits;
        std::vector<BatchRequest> requests;
        for (const char* p : kPrompts) requests.push_back({engine.tokenize(p, true, true), greedy, 1, 0});
        requests[0].n_samples = 2;
        auto b = engine.run_batch(requests, BatchOptions{}, [&](const RequestEvent& ev) {
            if (ev.kind != RequestEvent::Kind::token) return;
            const int32_t request = static_cast<int32_t>(ev.request);   // hashed as 4 bytes, as ever
            batch_logits.add(&request, 1), batch_logits.add(&ev.sample, 1);
            batch_logits.add(ev.logits.data(), ev.logits.size());
        });
        if (!b.ok()) {
            std::printf("%-30s %-14s batch failed: %s\n", variant, kv, b.status().message().c_str());
            ++failures;
        } else {
            for (const auto& c : b->completions) batch_tokens.add(c.tokens.data(), c.tokens.size());
        }
        // eval_logits: the first prompt scored from an empty cache.
        Md5 eval;
        engine.reset();
        auto l = engine.eval_logits(engine.tokenize(kPrompts[0], true, true));
        if (l.ok()) eval.add(l->data(), l->size());
        std::printf("%-30s %-14s gen %s %s  batch %s %s  eval %s\n", variant, kv, gen_tokens.hex().substr(0, 12).c_str(),
                    gen_logits.hex().substr(0, 12).c_str(), batch_tokens.hex().substr(0, 12).c_str(),
                    batch_logits.hex().substr(0, 12).c_str(), l.ok() ? eval.hex().substr(0, 12).c_str() : "failed");
        std::fflush(stdout);
    }
    return failures ? 1 : 0;
}
