// Whole models on the CUDA backend against the CPU backend: every architecture the engine runs,
// as a synth "tiny" model in the formats the device keeps (q4_0, q8_0, f16) and one it converts
// (q5_1); on llama every policy whose state lives on the host (a sliding window past its first
// eviction, so its sinks are re-rotated rows built on the host; top-k and heavy-hitter selections,
// per KV head; compressed pooling with its score bias; a cross-layer mean merge with its staged
// rows) besides full attention and cross-layer sharing, and on the "small" shape (heads of 32)
// every KV type (the device writes f32/f16/bf16/q8_0 itself; the host writes q4_0 and q2_0, with
// rotated keys and values, and fp8). Every case must attend on the device KV cache. A 40-token prompt (the GEMV or
// cuBLASLt, by the crossover the backend measured at load: printed, between 8 and 128), then 4
// greedy decode steps the GEMV; three sequences batched (15 prompt rows: a GEMV pass and a tail,
// then a 3-row decode step); a fork and one token on each side (copy-on-write of the shared
// block, replayed on the device); on llama q4_0 a 300-token prompt (two chunks, the step buffers
// growing). Every position's logits: all finite, the largest difference within 5 % of the CPU's
// logit spread (the CPU quantizes activations to 8 bits for quantized weights, the device rounds
// them to bf16 on the prompt path), and the top-1 token equal wherever the CPU's top-1/top-2
// margin exceeds twice that difference. Decode steps replayed as CUDA graphs equal the same steps
// launched kernel by kernel, bit for bit. The rows' best logits selected on the device equal the
// host's selection from the same rows' logits, in steps that mix them with whole rows (captured
// and not), and an engine on the device samples the same tokens from them as from whole rows.
// A latent cache is refused.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "attention/paged_kv.h"
#include "gguf/gguf_file.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/cuda_backend.h"
#include "kv_blocks/kv_dtype.h"
#include "model/decoder_model.h"
#include "sampling/top_logits.h"
#include "tests/cuda/cuda_check.h"
#include "tokenizer/vocab_loader.h"
#include "workbench/attention.h"
#include "workbench/backends.h"
#include "workbench/engine.h"
#include "workbench/model_file.h"

using namespace workbench;

namespace {

struct Run {
    std::unique_ptr<DecoderModel> model;
    std::unique_ptr<PagedKv> kv;
};

Result<Run> make_run(const GgufFile& file, const std::string& backend, const std::string& attention, const std::string& kv_types) {
    WB_ASSIGN_OR_RETURN(TokenizerVocab vocab, load_tokenizer_vocab(file));
    WB_ASSIGN_OR_RETURN(ModelHparams hp, load_hparams(file, static_cast<int32_t>(vocab.tokens.size())));
    WB_ASSIGN_OR_RETURN(ModelWeights w, load_weights(file, hp));
    Run r;
    WB_ASSIGN_OR_RETURN(r.model, DecoderModel::create(hp, std::move(w), backend));
    WB_ASSIGN_OR_RETURN(const AttentionLayout layout, parse_attention_layout(attention));
    WB_ASSIGN_OR_RETURN(const AttentionLayout runs,
                        apply_native_attention(layout, NativeAttention{hp.sliding_window, hp.local_layers}, hp.n_layer));
    WB_ASSIGN_OR_RETURN(const KvTypes types, parse_kv_types(kv_types));
    WB_ASSIGN_OR_RETURN(r.kv, PagedKv::create(runs, types, r.model->kv_shape(), 0, 512, 6));
    WB_RETURN_IF_ERROR(r.model->attach_kv(*r.kv));   // as Engine::load: the device's KV copy made up front
    return r;
}

// Compares one position's logits; returns the CPU's greedy token.
TokenId compare_position(const std::string& what, const float* cpu, const float* gpu, int64_t n_vocab, double& worst_ratio) {
    const auto [lo, hi] = std::minmax_element(cpu, cpu + n_vocab);
    const double spread = std::max(1e-6, static_cast<double>(*hi - *lo));
    double diff = 0;
    for (int64_t i = 0; i < n_vocab; ++i) diff = cudacheck::worse(diff, std::fabs(static_cast<double>(gpu[i]) - cpu[i]));
    worst_ratio = cudacheck::worse(worst_ratio, diff / spread);
    CHECK(std::isfinite(diff), what + ": the device's logits are not all finite");
    CHECK(diff <= 0.05 * spread, what + ": logits differ by " + std::to_string(diff) + " (spread " + std::to_string(spread) + ")");
    std::vector<int64_t> order(static_cast<size_t>(n_vocab));
    for (int64_t i = 0; i < n_vocab; ++i) order[static_cast<size_t>(i)] = i;
    std::partial_sort(order.begin(), order.begin() + 2, order.end(), [&](int64_t a, int64_t b) { return cpu[a] > cpu[b]; });
    const int64_t gpu_top = std::max_element(gpu, gpu + n_vocab) - gpu;
    if (cpu[order[0]] - cpu[order[1]] > 2 * diff) CHECK(gpu_top == order[0], what + ": the top-1 token differs");
    return static_cast<TokenId>(order[0]);
}

struct Case {
    std::string arch, type, attention = "full";
    size_t prompt_tokens = 40;
    std::string kv_types = "f16", shape = "tiny";
};

// One step of sequences 1, 2, … over `tokens`, each wanting the logits after its last.
std::vector<BatchSequence> batch_of(const std::vector<std::vector<TokenId>>& tokens) {
    std::vector<BatchSequence> batch;
    for (size_t i = 0; i < tokens.size(); ++i) {
        BatchSequence b;
        b.seq = static_cast<SeqId>(1 + i);
        b.tokens = tokens[i];
        b.want_logits = true;
        batch.push_back(b);
    }
    return batch;
}

void check_model(const std::filesystem::path& dir, const Case& c) {
    const std::string& arch = c.arch;
    const std::string& type = c.type;
    const std::string& attention = c.attention;
    const std::string& kv_types = c.kv_types;
    const std::string what = arch + " " + c.shape + " " + type + " " + attention + " kv " + kv_types;
    const std::string path = (dir / (arch + "-" + c.shape + "-" + type + ".gguf")).string();
    Status written = write_synth_model(arch, c.shape, type, "", path);
    CHECK(written.ok(), what + ": " + written.message());
    auto file = GgufFile::open(path);
    CHECK(file.ok(), what + ": " + file.status().message());
    if (!written.ok() || !file.ok()) return;
    auto cpu = make_run(**file, "cpu", attention, kv_types);
    auto gpu = make_run(**file, "cuda", attention, kv_types);
    CHECK(cpu.ok() && gpu.ok(), what + ": " + (cpu.ok() ? gpu.status().message() : cpu.status().message()));
    if (!cpu.ok() || !gpu.ok()) return;
    const int64_t n_vocab = cpu->model->hparams().n_vocab;
    std::mt19937 rng(5);
    std::vector<TokenId> prompt(c.prompt_tokens);
    for (TokenId& t : prompt) t = static_cast<TokenId>(3 + rng() % static_cast<uint32_t>(n_vocab - 3));
    ThreadPool pool(2);
    std::vector<float> lc, lg;
    Status sc = cpu->model->forward(prompt, 0, *cpu->kv, true, lc, pool), sg = gpu->model->forward(prompt, 0, *gpu->kv, true, lg, pool);
    CHECK(sc.ok() && sg.ok(), what + ": prompt: " + (sc.ok() ? sg.message() : sc.message()));
    if (!sc.ok() || !sg.ok()) return;
    double worst = 0;
    TokenId next = 0;
    for (size_t t = 0; t < prompt.size(); ++t)
        next = compare_position(what + " prompt row " + std::to_string(t), lc.data() + t * n_vocab, lg.data() + t * n_vocab, n_vocab, worst);
    for (int step = 0; step < 4; ++step) {
        const TokenId token[1] = {next};
        sc = cpu->model->forward(token, 0, *cpu->kv, false, lc, pool);
        sg = gpu->model->forward(token, 0, *gpu->kv, false, lg, pool);
        CHECK(sc.ok() && sg.ok(), what + ": decode: " + (sc.ok() ? sg.message() : sc.message()));
        if (!sc.ok() || !sg.ok()) return;
        next = compare_position(what + " decode step " + std::to_string(step), lc.data(), lg.data(), n_vocab, worst);
    }
    // Only heads over 256 dimensions (none here) attend on the host: every cache has its device copy.
    CHECK(gpu->model->device_memory().kv > 0, what + ": expected on the device KV cache");
    // A fork shares the prompt's blocks; the child's first token copies the shared partial block
    // (copy-on-write, replayed on the device).
    if (cpu->kv->can_fork()) {
        sc = cpu->kv->fork(0, 9);
        sg = gpu->kv->fork(0, 9);
        CHECK(sc.ok() && sg.ok(), what + ": fork: " + (sc.ok() ? sg.message() : sc.message()));
        const TokenId token[1] = {next};
        if (sc.ok() && sg.ok()) {
            sc = cpu->model->forward(token, 9, *cpu->kv, false, lc, pool);
            sg = gpu->model->forward(token, 9, *gpu->kv, false, lg, pool);
            CHECK(sc.ok() && sg.ok(), what + ": forked decode: " + (sc.ok() ? sg.message() : sc.message()));
            if (sc.ok() && sg.ok()) (void)compare_position(what + " forked decode", lc.data(), lg.data(), n_vocab, worst);
            // The parent's next token still reads its own block, not the child's copy.
            sc = cpu->model->forward(token, 0, *cpu->kv, false, lc, pool);
            sg = gpu->model->forward(token, 0, *gpu->kv, false, lg, pool);
            CHECK(sc.ok() && sg.ok(), what + ": parent after fork: " + (sc.ok() ? sg.message() : sc.message()));
            if (sc.ok() && sg.ok()) (void)compare_position(what + " parent after fork", lc.data(), lg.data(), n_vocab, worst);
        }
    }
    // Three more sequences in one step (their 5-token prompts), then one decode step for all three.
    std::vector<std::vector<TokenId>> prompts(3, std::vector<TokenId>(5));
    for (auto& p : prompts)
        for (TokenId& t : p) t = static_cast<TokenId>(3 + rng() % static_cast<uint32_t>(n_vocab - 3));
    for (int round = 0; round < 2; ++round) {
        std::vector<BatchSequence> batch = batch_of(prompts);
        sc = cpu->model->forward_batch(batch, *cpu->kv, lc, pool);
        sg = gpu->model->forward_batch(batch, *gpu->kv, lg, pool);
        CHECK(sc.ok() && sg.ok(), what + ": batch: " + (sc.ok() ? sg.message() : sc.message()));
        if (!sc.ok() || !sg.ok()) return;
        for (size_t i = 0; i < prompts.size(); ++i) {
            const TokenId t = compare_position(what + " batch round " + std::to_string(round) + " sequence " + std::to_string(i),
                                               lc.data() + i * n_vocab, lg.data() + i * n_vocab, n_vocab, worst);
            prompts[i] = {t};
        }
    }
    std::printf("%-40s largest logit difference %.2e of the CPU's spread\n", what.c_str(), worst);
}


// A llama-tiny q4_0 synth model written to `path` and opened; null (the failure counted) when either fails.
std::unique_ptr<GgufFile> tiny_llama(const std::string& path, const std::string& what) {
    const Status written = write_synth_model("llama", "tiny", "q4_0", "", path);
    CHECK(written.ok(), what + ": " + written.message());
    if (!written.ok()) return nullptr;
    auto file = GgufFile::open(path);
    CHECK(file.ok(), what + ": " + file.status().message());
    return file.ok() ? std::move(file).value() : nullptr;
}

// Decode steps as CUDA graphs give the same logits, bit for bit, as the same steps launched one
// kernel at a time (WB_CUDA_GRAPHS=0 when the backend is made): one sequence's 6 steps (the
// graph of step size 1 updated in place each step, past a block boundary), then three
// sequences' 3-row steps (another step size). The graph runs must have replayed graphs.
void check_graphs(const std::filesystem::path& dir) {
    const auto file = tiny_llama((dir / "llama-tiny-q4_0-graphs.gguf").string(), "graphs");
    if (!file) return;
    auto graphed = make_run(*file, "cuda", "full", "f16");
    ::setenv("WB_CUDA_GRAPHS", "0", 1);
    auto eager = make_run(*file, "cuda", "full", "f16");
    ::unsetenv("WB_CUDA_GRAPHS");
    CHECK(graphed.ok() && eager.ok(), "graphs: " + (graphed.ok() ? eager.status().message() : graphed.status().message()));
    if (!graphed.ok() || !eager.ok()) return;
    const int64_t n_vocab = graphed->model->hparams().n_vocab;
    ThreadPool pool(2);
    std::vector<float> lg, le;
    std::vector<TokenId> prompt(13);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<TokenId>(5 + 7 * i);
    Status sg = graphed->model->forward(prompt, 0, *graphed->kv, false, lg, pool), se = eager->model->forward(prompt, 0, *eager->kv, false, le, pool);
    CHECK(sg.ok() && se.ok(), "graphs: prompt: " + (sg.ok() ? se.message() : sg.message()));
    const int64_t before = cuda_graph_steps();
    int64_t differing = 0;
    TokenId next = 11;
    for (int step = 0; step < 6 && sg.ok() && se.ok(); ++step) {
        const TokenId token[1] = {next};
        sg = graphed->model->forward(token, 0, *graphed->kv, false, lg, pool);
        se = eager->model->forward(token, 0, *eager->kv, false, le, pool);
        CHECK(sg.ok() && se.ok(), "graphs: decode: " + (sg.ok() ? se.message() : sg.message()));
        if (!sg.ok() || !se.ok()) return;
        for (int64_t i = 0; i < n_vocab; ++i) differing += std::memcmp(&lg[static_cast<size_t>(i)], &le[static_cast<size_t>(i)], 4) != 0;
        next = static_cast<TokenId>(std::max_element(lg.begin(), lg.begin() + n_vocab) - lg.begin());
    }
    std::vector<std::vector<TokenId>> prompts = {{3, 4, 5}, {6, 7}, {8}};
    for (int round = 0; round < 3; ++round) {
        std::vector<BatchSequence> batch = batch_of(prompts);
        sg = graphed->model->forward_batch(batch, *graphed->kv, lg, pool);
        se = eager->model->forward_batch(batch, *eager->kv, le, pool);
        CHECK(sg.ok() && se.ok(), "graphs: batch: " + (sg.ok() ? se.message() : sg.message()));
        if (!sg.ok() || !se.ok()) return;
        for (size_t i = 0; i < prompts.size() * static_cast<size_t>(n_vocab); ++i) differing += std::memcmp(&lg[i], &le[i], 4) != 0;
        for (size_t i = 0; i < prompts.size(); ++i)
            prompts[i] = {static_cast<TokenId>(std::max_element(lg.begin() + i * n_vocab, lg.begin() + (i + 1) * n_vocab) - (lg.begin() + i * n_vocab))};
    }
    const int64_t replayed = cuda_graph_steps() - before;
    std::printf("graphs: %lld steps replayed as CUDA graphs; %lld logits differ from the uncaptured steps'\n", static_cast<long long>(replayed),
                static_cast<long long>(differing));
    // The first 1-row and 3-row steps may run uncaptured while buffers grow; most must replay.
    CHECK(replayed >= 5, "graphs: decode steps did not run as CUDA graphs");
    CHECK(differing == 0, "graphs: a graph's logits differ from the same kernels launched one by one");
}

// Three sequences in each step: the first and last ask for their best 40 and 1 logits (so 40
// each come back), the middle one for its whole row; a 5-token prompt step (uncaptured), then
// decode steps (captured). A second run of the same model gives every row whole, to select from.
void check_top_logits(const std::filesystem::path& dir) {
    const std::string path = (dir / "llama-tiny-q4_0-top.gguf").string();
    const auto file = tiny_llama(path, "top logits");
    if (!file) return;
    auto whole = make_run(*file, "cuda", "full", "f16"), best = make_run(*file, "cuda", "full", "f16");
    CHECK(whole.ok() && best.ok(), "top logits: " + (whole.ok() ? best.status().message() : whole.status().message()));
    if (!whole.ok() || !best.ok()) return;
    const size_t n_vocab = static_cast<size_t>(whole->model->hparams().n_vocab);
    ThreadPool pool(2);
    std::vector<std::vector<TokenId>> prompts = {{3, 4, 5, 6, 7}, {8, 9, 10, 11, 12}, {13, 14, 15, 16, 17}};
    const int32_t ks[3] = {40, 0, 1};
    int64_t differing = 0, compared = 0;
    for (int round = 0; round < 5; ++round) {
        std::vector<BatchSequence> batch = batch_of(prompts);
        std::vector<float> lw, lb;
        std::vector<TopLogit> top;
        Status sw = whole->model->forward_batch(batch, *whole->kv, lw, pool);
        for (size_t i = 0; i < batch.size(); ++i) batch[i].top_logits = ks[i];
        Status sb = best->model->forward_batch(batch, *best->kv, lb, pool, &top);
        CHECK(sw.ok() && sb.ok(), "top logits: " + (sw.ok() ? sb.message() : sw.message()));
        if (!sw.ok() || !sb.ok()) return;
        CHECK(lb.size() == n_vocab && top.size() == 2 * 40, "top logits: the step's outputs have the wrong sizes");
        if (lb.size() != n_vocab || top.size() != 2 * 40) return;
        differing += std::memcmp(lb.data(), lw.data() + n_vocab, n_vocab * 4) != 0;
        for (size_t j = 0; j < 2; ++j) {
            const size_t row = j == 0 ? 0 : 2;
            std::vector<TopLogit> expected(40);
            select_top_logits(lw.data() + row * n_vocab, n_vocab, expected.data(), expected.size());
            for (size_t r = 0; r < 40; ++r, ++compared)
                differing += top[j * 40 + r].token != expected[r].token || std::memcmp(&top[j * 40 + r].logit, &expected[r].logit, 4) != 0;
        }
        for (size_t i = 0; i < prompts.size(); ++i)
            prompts[i] = {static_cast<TokenId>(std::max_element(lw.begin() + i * n_vocab, lw.begin() + (i + 1) * n_vocab) - (lw.begin() + i * n_vocab))};
    }
    std::printf("top logits: %lld of %lld selected on the device differ from the host's selection\n", static_cast<long long>(differing),
                static_cast<long long>(compared));
    CHECK(differing == 0, "top logits: the device's best logits differ from the host's selection of the same rows");

    // The engine: greedy and top-k tokens from the device's best logits equal those from whole rows.
    EngineConfig config;
    config.model_path = path;
    config.backend = "cuda";
    auto engine = Engine::load(config);
    CHECK(engine.ok(), "top logits: " + (engine.ok() ? std::string() : engine.status().message()));
    if (!engine.ok()) return;
    for (float temperature : {0.0f, 0.8f}) {
        std::vector<std::vector<TokenId>> tokens;
        for (bool keep : {true, false}) {
            GenerationRequest r;
            r.max_tokens = 12;
            r.ignore_eos = true;
            r.sampling.temperature = temperature;
            r.sampling.top_k = 40;
            r.sampling.seed = 3;
            r.token_logits = keep;
            (*engine)->reset();
            auto out = (*engine)->generate_tokens({5, 6, 7, 8}, r);
            CHECK(out.ok(), "top logits: engine: " + (out.ok() ? std::string() : out.status().message()));
            if (!out.ok()) return;
            tokens.push_back(out->tokens);
        }
        CHECK(tokens[0] == tokens[1], "top logits: the engine's tokens from the device's best logits differ from those from whole rows");
    }
}

}  // namespace

int main() {
    if (auto devices = cuda_devices(); !devices.ok()) cudacheck::skip(devices.status().message());
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("wb-cuda-backend-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const std::string& arch : architecture_names())
        for (const char* type : {"q4_0", "q8_0", "f16", "q5_1"}) check_model(dir, {arch, type});   // gemma3: sliding local layers
    check_model(dir, {"llama", "q4_0", "sliding:window=8,sinks=2"});
    check_model(dir, {"llama", "q4_0", "sliding:window=24,sinks=4", 300});
    check_model(dir, {"llama", "q4_0", "full", 300});
    check_model(dir, {"llama", "q4_0", "cross_layer:group=2,merge=none"});
    check_model(dir, {"llama", "q4_0", "cross_layer:group=2,merge=mean"});
    check_model(dir, {"llama", "q4_0", "topk:k=16,recent=8"});
    check_model(dir, {"llama", "q4_0", "compressed:block=4,recent=8,sinks=2"});
    // k above the candidates: per-head lists without a selection the device's rounding could flip.
    check_model(dir, {"llama", "q4_0", "heavy:k=16,block=4,recent=8"});
    check_model(dir, {"llama", "q4_0", "topk:k=16,recent=8,layers=0;sliding:window=8,sinks=2"});
    for (const char* kv_types : {"q8_0", "bf16", "f32", "k=q8_0,v=q4_0", "q4_0", "fp8", "k=fp8,v=f16", "k=q4_0,v=q2_0,recent=16"})
        check_model(dir, {"llama", "q4_0", "full", 40, kv_types, "small"});
    check_model(dir, {"llama", "q4_0", "topk:k=16,recent=8", 40, "q4_0", "small"});
    check_graphs(dir);
    check_top_logits(dir);
    const int64_t crossover = cuda_gemv_max_tokens();
    std::printf("the GEMV serves steps up to %lld tokens on this device (measured at load)\n", static_cast<long long>(crossover));
    CHECK(crossover >= 8 && crossover <= 128, "the measured GEMV/cuBLASLt crossover is out of range");

    // The latent variant stays on the CPU: Engine::load says so before loading anything.
    EngineConfig config;
    config.model_path = (dir / "llama-tiny-q4_0.gguf").string();
    config.backend = "cuda";
    config.attention = "latent:rank=16";
    auto engine = Engine::load(config);
    CHECK(!engine.ok() && engine.status().code() == StatusCode::unsupported &&
              engine.status().message().find("latent variant is not supported on cuda") != std::string::npos,
          engine.ok() ? "a latent cache loaded on cuda" : engine.status().message());
    std::filesystem::remove_all(dir);
    return cudacheck::finish();
}
