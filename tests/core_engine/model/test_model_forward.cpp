// The forward pass on tiny random models against a plain double-precision reference written
// here from the formulas (llama and qwen2 flavours, f32 and Q8_0 weights), and loader errors
// that name the tensor or key at fault.
#include <QTest>

#include <algorithm>
#include <cmath>

#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model/decoder_model.h"
#include "model/weights.h"
#include "tiny_arch_specs.h"

using namespace workbench;

namespace {

using Vec = std::vector<double>;

// y[o] = Σ_i W[o][i] x[i]
Vec matvec(const std::vector<float>& w, const Vec& x, int n_out) {
    const size_t n_in = x.size();
    Vec y(static_cast<size_t>(n_out), 0.0);
    for (int o = 0; o < n_out; ++o)
        for (size_t i = 0; i < n_in; ++i) y[o] += w[o * n_in + i] * x[i];
    return y;
}

Vec rmsnorm(const Vec& x, const std::vector<float>& g) {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + 1e-5);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * g[i];
    return y;
}

void rope(Vec& v, int n_heads, int hd, int pos, bool neox) {
    for (int h = 0; h < n_heads; ++h)
        for (int i = 0; i < hd / 2; ++i) {
            const double theta = pos * std::pow(10000.0, -2.0 * i / hd);
            const int i0 = neox ? i : 2 * i, i1 = neox ? i + hd / 2 : 2 * i + 1;
            double& a = v[static_cast<size_t>(h * hd + i0)];
            double& b = v[static_cast<size_t>(h * hd + i1)];
            const double x0 = a, x1 = b;
            a = x0 * std::cos(theta) - x1 * std::sin(theta);
            b = x0 * std::sin(theta) + x1 * std::cos(theta);
        }
}

// Each head of v RMS-normalized by g ([hd]), as qwen3's QK-norm.
void head_norm(Vec& v, int n_heads, int hd, const std::vector<float>& g) {
    for (int h = 0; h < n_heads; ++h) {
        const Vec head(v.begin() + h * hd, v.begin() + (h + 1) * hd);
        const Vec normed = rmsnorm(head, g);
        std::copy(normed.begin(), normed.end(), v.begin() + h * hd);
    }
}

Vec swiglu_mlp(const std::vector<float>& gate, const std::vector<float>& up, const std::vector<float>& down, const Vec& h, int n_ff,
               int n_embd) {
    Vec g = matvec(gate, h, n_ff), u = matvec(up, h, n_ff);
    for (int i = 0; i < n_ff; ++i) g[static_cast<size_t>(i)] = g[static_cast<size_t>(i)] / (1 + std::exp(-g[static_cast<size_t>(i)])) * u[static_cast<size_t>(i)];
    return matvec(down, g, n_embd);
}

// A layer of experts as Qwen3-MoE runs it: softmax over the router's logits, the k largest,
// their probabilities renormalized, the weighted sum of those experts' SwiGLU outputs.
Vec experts_mlp(const tiny::Model& m, const std::string& b, const Vec& h) {
    const auto& s = m.spec;
    const Vec logits = matvec(m.tensors.at(b + "ffn_gate_inp.weight"), h, s.n_expert);
    std::vector<int> order(static_cast<size_t>(s.n_expert));
    for (int e = 0; e < s.n_expert; ++e) order[static_cast<size_t>(e)] = e;
    std::sort(order.begin(), order.end(), [&](int a, int c) { return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(c)]; });
    double z = 0;
    for (int i = 0; i < s.n_expert_used; ++i) z += std::exp(logits[static_cast<size_t>(order[static_cast<size_t>(i)])]);
    Vec out(static_cast<size_t>(s.n_embd), 0.0);
    const size_t gate_size = static_cast<size_t>(s.n_embd) * static_cast<size_t>(s.n_ff_exp);
    for (int i = 0; i < s.n_expert_used; ++i) {
        const int e = order[static_cast<size_t>(i)];
        auto slice = [&](const std::string& name) {
            const auto& all = m.tensors.at(b + name);
            return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(gate_size) * e, all.begin() + static_cast<std::ptrdiff_t>(gate_size) * (e + 1));
        };
        const Vec y = swiglu_mlp(slice("ffn_gate_exps.weight"), slice("ffn_up_exps.weight"), slice("ffn_down_exps.weight"), h, s.n_ff_exp, s.n_embd);
        const double w = std::exp(logits[static_cast<size_t>(e)]) / z;
        for (size_t j = 0; j < out.size(); ++j) out[j] += w * y[j];
    }
    return out;
}

// Logits for every position of `tokens`, [n_tokens][n_vocab].
std::vector<Vec> reference_forward(const tiny::Model& m, const std::vector<TokenId>& tokens) {
    const auto& s = m.spec;
    const int hd = s.n_embd / s.n_head, group = s.n_head / s.n_head_kv;
    const bool neox = s.arch == "qwen2" || s.arch == "qwen3moe";
    auto T = [&](const std::string& n) -> const std::vector<float>& { return m.tensors.at(n); };
    std::vector<Vec> x;
    for (TokenId t : tokens) x.emplace_back(T("token_embd.weight").begin() + t * s.n_embd, T("token_embd.weight").begin() + (t + 1) * s.n_embd);
    for (int il = 0; il < s.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        std::vector<Vec> ks, vs, qs;
        for (size_t t = 0; t < tokens.size(); ++t) {
            Vec h = rmsnorm(x[t], T(b + "attn_norm.weight"));
            Vec q = matvec(T(b + "attn_q.weight"), h, s.n_head * hd);
            Vec k = matvec(T(b + "attn_k.weight"), h, s.n_head_kv * hd);
            Vec v = matvec(T(b + "attn_v.weight"), h, s.n_head_kv * hd);
            if (s.qkv_bias) {
                for (size_t i = 0; i < q.size(); ++i) q[i] += T(b + "attn_q.bias")[i];
                for (size_t i = 0; i < k.size(); ++i) k[i] += T(b + "attn_k.bias")[i];
                for (size_t i = 0; i < v.size(); ++i) v[i] += T(b + "attn_v.bias")[i];
            }
            if (s.qk_norm) {
                head_norm(q, s.n_head, hd, T(b + "attn_q_norm.weight"));
                head_norm(k, s.n_head_kv, hd, T(b + "attn_k_norm.weight"));
            }
            rope(q, s.n_head, hd, static_cast<int>(t), neox);
            rope(k, s.n_head_kv, hd, static_cast<int>(t), neox);
            qs.push_back(q);
            ks.push_back(k);
            vs.push_back(v);
        }
        for (size_t t = 0; t < tokens.size(); ++t) {
            Vec attn(static_cast<size_t>(s.n_head * hd), 0.0);
            for (int h = 0; h < s.n_head; ++h) {
                const int kh = h / group;
                Vec sc(t + 1);
                double mx = -1e300;
                for (size_t j = 0; j <= t; ++j) {
                    double d = 0;
                    for (int i = 0; i < hd; ++i) d += qs[t][h * hd + i] * ks[j][kh * hd + i];
                    sc[j] = d / std::sqrt(static_cast<double>(hd));
                    mx = std::max(mx, sc[j]);
                }
                double sum = 0;
                for (auto& v : sc) sum += (v = std::exp(v - mx));
                for (size_t j = 0; j <= t; ++j)
                    for (int i = 0; i < hd; ++i) attn[h * hd + i] += sc[j] / sum * vs[j][kh * hd + i];
            }
            Vec o = matvec(T(b + "attn_output.weight"), attn, s.n_embd);
            for (int i = 0; i < s.n_embd; ++i) x[t][i] += o[i];
            Vec h = rmsnorm(x[t], T(b + "ffn_norm.weight"));
            const Vec d = s.n_expert > 0 ? experts_mlp(m, b, h)
                                         : swiglu_mlp(T(b + "ffn_gate.weight"), T(b + "ffn_up.weight"), T(b + "ffn_down.weight"), h, s.n_ff, s.n_embd);
            for (int i = 0; i < s.n_embd; ++i) x[t][i] += d[i];
        }
    }
    std::vector<Vec> logits;
    for (auto& xt : x) logits.push_back(matvec(T("token_embd.weight"), rmsnorm(xt, T("output_norm.weight")), s.n_vocab));
    return logits;
}

struct Loaded {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<DecoderModel> model;
};

Result<Loaded> load(const tiny::Model& m) {
    Loaded l;
    WB_ASSIGN_OR_RETURN(l.file, GgufFile::from_memory(m.gguf, "tiny.gguf"));
    WB_ASSIGN_OR_RETURN(ModelHparams hp, load_hparams(*l.file, m.spec.n_vocab));
    WB_ASSIGN_OR_RETURN(ModelWeights w, load_weights(*l.file, hp));
    WB_ASSIGN_OR_RETURN(l.model, DecoderModel::create(hp, std::move(w)));
    return l;
}

Result<std::unique_ptr<PagedKv>> full_kv(const DecoderModel& model, int32_t n_ctx) {
    return PagedKv::create(AttentionSpec{}, KvTypes{}, model.kv_shape(), 0, n_ctx);
}

// A model of `spec` given 20 tokens as one prompt and one token a step: the same logits bit for
// bit (each step's ops depend on nothing but their own rows), and with experts, the router's
// margins reported per row.
void expect_prompt_equals_steps(const tiny::Spec& spec, bool experts) {
    auto m = tiny::make(spec);
    auto a = load(m), b = load(m);
    QVERIFY(a.ok() && b.ok());
    std::vector<TokenId> tokens;
    for (int i = 0; i < 20; ++i) tokens.push_back((i * 31 + 7) % m.spec.n_vocab);
    auto kv1 = full_kv(*a->model, 64), kv2 = full_kv(*b->model, 64);
    ThreadPool pool(2);
    std::vector<float> prompt, step, steps;
    QVERIFY(a->model->forward(tokens, 0, **kv1, true, prompt, pool).ok());
    if (experts) QCOMPARE(a->model->router_margins().size(), tokens.size());
    for (TokenId t : tokens) {
        QVERIFY(b->model->forward(std::vector<TokenId>{t}, 0, **kv2, true, step, pool).ok());
        steps.insert(steps.end(), step.begin(), step.end());
    }
    QVERIFY2(steps == prompt, spec.arch.c_str());
}

// Largest |ours − reference| over all positions, relative to the reference's logit spread. With
// layers of experts, only the positions before the first whose router margin is under
// `router_tie` (from there on either side may run other experts by rounding alone).
double compare(const tiny::Model& m, int n_threads, float router_tie = 0) {
    auto loaded = load(m);
    if (!loaded.ok()) qFatal("%s", loaded.status().message().c_str());
    std::vector<TokenId> tokens;
    for (int i = 0; i < 40; ++i) tokens.push_back((i * 37 + 11) % m.spec.n_vocab);
    auto kv = full_kv(*loaded->model, m.spec.n_ctx);
    ThreadPool pool(n_threads);
    std::vector<float> logits;
    Status s = loaded->model->forward(tokens, 0, **kv, true, logits, pool);
    if (!s.ok()) qFatal("%s", s.message().c_str());
    auto ref = reference_forward(m, tokens);
    size_t compared = tokens.size();
    const std::span<const float> margins = loaded->model->router_margins();
    for (size_t t = 0; t < margins.size() && compared == tokens.size(); ++t)
        if (margins[t] < router_tie) compared = t;
    if (compared < tokens.size()) qInfo("%zu of %zu positions from a router near tie on: not compared", tokens.size() - compared, tokens.size());
    if (compared < 4) qFatal("a router near tie within the first positions: reseed the model");
    double worst = 0, spread = 0;
    for (size_t t = 0; t < compared; ++t)
        for (int v = 0; v < m.spec.n_vocab; ++v) {
            worst = std::max(worst, std::abs(logits[t * m.spec.n_vocab + v] - ref[t][v]));
            spread = std::max(spread, std::abs(ref[t][v]));
        }
    return worst / spread;
}

}  // namespace

class TestModelForward : public QObject {
    Q_OBJECT
private slots:
    void llama_f32_matches_reference() {
        // f32 weights: the only rounding is the f16 KV cache (~1e-3 relative).
        const double err = compare(tiny::make({}), 1);
        qInfo("llama f32: max relative error %.2e", err);
        QVERIFY(err < 5e-3);
    }

    void qwen2_bias_and_neox_rope_match_reference() {
        tiny::Spec s;
        s.arch = "qwen2";
        s.qkv_bias = true;
        const double err = compare(tiny::make(s), 2);
        qInfo("qwen2 f32: max relative error %.2e", err);
        QVERIFY(err < 5e-3);
    }

    void q8_0_weights_match_dequantized_reference() {
        // The reference uses the dequantized weights; activations are quantized to 8 bits here.
        tiny::Spec s;
        s.weight_type = DType::q8_0;
        const double err = compare(tiny::make(s), 2);
        qInfo("llama q8_0: max relative error %.2e", err);
        QVERIFY(err < 3e-2);
    }

    // Layers of experts (qwen3moe: QK-norm, NeoX RoPE, 8 experts, 2 a token) in f32 and with
    // q8_0 experts, against the double-precision reference's routing and sums.
    void experts_match_reference() {
        for (DType type : {DType::f32, DType::q8_0}) {
            tiny::Spec s = *tiny::arch_spec("qwen3moe");
            s.weight_type = type;
            // 8-bit activations move the router's probabilities by ~1e-2: a near tie there may
            // choose other experts than the reference.
            const double err = compare(tiny::make(s), 2, type == DType::f32 ? 1e-4f : 2e-2f);
            qInfo("qwen3moe %s: max relative error %.2e", dtype_name(type).data(), err);
            QVERIFY(err < (type == DType::f32 ? 5e-3 : 3e-2));
        }
    }

    // A token's experts run over whichever tokens chose them in the step: the prompt and token by
    // token give the same logits bit for bit.
    void experts_are_batch_invariant() {
        tiny::Spec s = *tiny::arch_spec("qwen3moe");
        s.weight_type = DType::q8_0;
        expect_prompt_equals_steps(s, true);
    }

    // A layer of experts: its counts and shapes checked, each mistake named.
    void expert_mistakes_are_named() {
        tiny::Spec s = *tiny::arch_spec("qwen3moe");
        auto r = load(tiny::make(s, {"blk.1.ffn_up_exps.weight"}));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: tensor 'blk.1.ffn_up_exps.weight' is missing"));
        r = load(tiny::make(s, {}, "blk.0.ffn_down_exps.weight"));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()),
                 QString("tiny.gguf: tensor 'blk.0.ffn_down_exps.weight' has shape [64, 64, 8], expected [32, 64, 8]"));
        s.n_expert_used = 9;
        r = load(tiny::make(s));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: metadata 'qwen3moe.expert_used_count' = 9 is out of range (1..8)"));
        s.n_expert_used = 2;
        s.n_expert = 0;  // a qwen3moe file without experts
        r = load(tiny::make(s));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: required metadata key 'qwen3moe.expert_count' is missing"));
    }

    // Latent attention (deepseek2): its ranks and head sizes checked against each other, each
    // mistake named by its key or tensor.
    void latent_attention_mistakes_are_named() {
        auto message = [&](const tiny::Spec& s, const std::vector<std::string>& skip = {}) {
            auto r = load(tiny::make(s, skip));
            return r.ok() ? QString("loaded") : QString::fromStdString(r.status().message());
        };
        const tiny::Spec base = *tiny::arch_spec("deepseek2");
        QCOMPARE(message(base), QString("loaded"));
        tiny::Spec s = base;
        s.kv_lora_rank = 100;   // wider than the model
        QCOMPARE(message(s), QString("tiny.gguf: metadata 'deepseek2.attention.kv_lora_rank' = 100 is out of range (1..64)"));
        s = base;
        s.mla_nope = 0;         // a key head that is all RoPE (its k_b would have no rows: left out)
        QCOMPARE(message(s, {"blk.0.attn_k_b.weight", "blk.1.attn_k_b.weight", "blk.2.attn_k_b.weight"}), QString("tiny.gguf: the key head (16) leaves no dimensions without RoPE (rope.dimension_count 16)"));
        s = base;
        s.n_head_kv = 2;
        QCOMPARE(message(s), QString("tiny.gguf: attention.head_count_kv is 2; a latent-attention file has 1"));
        s = base;
        s.n_shared = 0;         // (its shared experts would have no rows: left out)
        QCOMPARE(message(s, {"blk.1.ffn_gate_shexp.weight", "blk.1.ffn_up_shexp.weight", "blk.1.ffn_down_shexp.weight",
                             "blk.2.ffn_gate_shexp.weight", "blk.2.ffn_up_shexp.weight", "blk.2.ffn_down_shexp.weight"}), QString("tiny.gguf: metadata 'deepseek2.expert_shared_count' = 0 is out of range (1..64)"));
        QCOMPARE(message(base, {"blk.2.attn_k_b.weight"}), QString("tiny.gguf: tensor 'blk.2.attn_k_b.weight' is missing"));
        QCOMPARE(message(base, {"blk.0.ffn_up.weight"}), QString("tiny.gguf: tensor 'blk.0.ffn_up.weight' is missing"));  // the dense lead layer
        s = *tiny::arch_spec("deepseek2_legacy");
        QCOMPARE(message(s, {"blk.1.attn_kv_b.weight"}), QString("tiny.gguf: tensor 'blk.1.attn_kv_b.weight' is missing"));
    }

    // Latent attention and shared experts: the prompt, token by token, give the same logits bit
    // for bit (8-bit weights: the heads' products quantize their gathered rows).
    void latent_attention_is_batch_invariant() {
        for (const char* arch : {"deepseek2", "deepseek2_legacy", "deepseek2_v3"}) {
            tiny::Spec s = *tiny::arch_spec(arch);
            s.weight_type = DType::q8_0;
            expect_prompt_equals_steps(s, true);
        }
    }

    // Biases, RoPE and SwiGLU run inside the matmul for a few tokens and in passes over token
    // rows for a prompt: feeding the same tokens one at a time must give the prompt's logits
    // bit for bit (qwen2: QKV biases and neox RoPE; q8_0: the fused activation quantization).
    void prompt_and_token_by_token_paths_agree() {
        for (bool qwen : {true, false}) {
            tiny::Spec s;
            if (qwen) {
                s.arch = "qwen2";
                s.qkv_bias = true;
            } else {
                s.weight_type = DType::q8_0;
            }
            auto m = tiny::make(s);
            auto a = load(m), b = load(m);
            std::vector<TokenId> tokens;
            for (int i = 0; i < 24; ++i) tokens.push_back((i * 29 + 5) % m.spec.n_vocab);
            auto kv1 = full_kv(*a->model, 64), kv2 = full_kv(*b->model, 64);
            ThreadPool pool(2);
            std::vector<float> prompt, step, steps;
            QVERIFY(a->model->forward(tokens, 0, **kv1, true, prompt, pool).ok());
            for (TokenId t : tokens) {
                QVERIFY(b->model->forward(std::vector<TokenId>{t}, 0, **kv2, true, step, pool).ok());
                steps.insert(steps.end(), step.begin(), step.end());
            }
            QCOMPARE(steps, prompt);
        }
    }

    // The same logits bit for bit whatever the pool's size, up to 64 threads (more than this
    // machine's cores: the pool must also make progress oversubscribed), for a prompt and for
    // the decode steps after it.
    void thread_count_does_not_change_results() {
        for (DType type : {DType::f32, DType::q8_0}) {
            tiny::Spec spec;
            spec.weight_type = type;
            auto m = tiny::make(spec);
            std::vector<TokenId> prompt = {1, 5, 9, 33, 2, 7};
            std::vector<float> first;
            for (int n_threads : {1, 3, 64}) {
                auto loaded = load(m);
                QVERIFY(loaded.ok());
                auto kv = full_kv(*loaded->model, 64);
                ThreadPool pool(n_threads);
                std::vector<float> all, step;
                QVERIFY(loaded->model->forward(prompt, 0, **kv, true, all, pool).ok());
                for (int i = 0; i < 4; ++i) {
                    const TokenId next = static_cast<TokenId>((11 * i + 3) % m.spec.n_vocab);
                    QVERIFY(loaded->model->forward(std::span<const TokenId>(&next, 1), 0, **kv, true, step, pool).ok());
                    all.insert(all.end(), step.begin(), step.end());
                }
                if (first.empty()) first = all;
                else QVERIFY2(all == first, qPrintable(QString("%1 threads, %2 weights").arg(n_threads).arg(dtype_name(type).data())));
            }
        }
    }

    void missing_tensor_is_named() {
        auto r = load(tiny::make({}, {"blk.1.ffn_up.weight"}));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: tensor 'blk.1.ffn_up.weight' is missing"));
    }

    void wrong_shape_is_named_with_expected() {
        auto r = load(tiny::make({}, {}, "blk.0.attn_q.weight"));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()),
                 QString("tiny.gguf: tensor 'blk.0.attn_q.weight' has shape [96, 64], expected [64, 64]"));
    }

    void unsupported_architecture() {
        tiny::Spec s;
        s.arch = "mamba";
        auto r = load(tiny::make(s));
        QVERIFY(!r.ok());
        QCOMPARE(r.status().code(), StatusCode::unsupported);
        QVERIFY(r.status().message().find("architecture 'mamba' is not supported (supported: llama, mistral, qwen2, qwen3, phi3, gemma3, qwen3moe, gpt-oss, deepseek2)") !=
                std::string::npos);
    }

    // What an architecture file declares is what loading checks: qwen2 requires its Q/K/V biases,
    // and a RoPE scaling its file does not list is refused by name.
    void architecture_files_decide_tensors_and_rope_scaling() {
        tiny::Spec s;
        s.arch = "qwen2";
        s.qkv_bias = true;
        QVERIFY(load(tiny::make(s)).ok());
        auto r = load(tiny::make(s, {"blk.0.attn_k.bias"}));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: tensor 'blk.0.attn_k.bias' is missing"));
        s.arch = "llama";
        s.rope_scaling = "yarn";
        r = load(tiny::make(s));
        QVERIFY(!r.ok());
        QCOMPARE(r.status().code(), StatusCode::unsupported);
        QCOMPARE(QString::fromStdString(r.status().message()),
                 QString("tiny.gguf: rope scaling 'yarn' is not supported for llama (none, linear)"));
        // A fused tensor is bound whole and split; a missing one is named.
        s = {};
        s.arch = "phi3";
        QVERIFY(load(tiny::make(s)).ok());
        r = load(tiny::make(s, {"blk.1.attn_qkv.weight"}));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.status().message()), QString("tiny.gguf: tensor 'blk.1.attn_qkv.weight' is missing"));
        s.long_rope = true;
        r = load(tiny::make(s));
        QVERIFY(!r.ok());
        QCOMPARE(r.status().code(), StatusCode::unsupported);
        QCOMPARE(QString::fromStdString(r.status().message()),
                 QString("tiny.gguf: tensor 'rope_factors_long.weight' means LongRoPE (the 128k-context Phi-3 models), which this "
                         "engine does not run"));
    }

    void out_of_vocab_token_and_full_cache_are_errors() {
        auto m = tiny::make({});
        auto l = load(m);
        // A pool of two blocks: the reserved null block and one of 16 tokens.
        const PagedKvShape shape = l->model->kv_shape();
        const uint64_t block_bytes = 16ull * 2 * shape.n_layers * shape.n_kv_heads * shape.head_dim * 2;
        auto kv = PagedKv::create(AttentionSpec{}, KvTypes{}, shape, 2 * block_bytes, 0);
        QVERIFY(kv.ok());
        ThreadPool pool(1);
        std::vector<float> logits;
        std::vector<TokenId> bad = {1, 500};
        Status s = l->model->forward(bad, 0, **kv, false, logits, pool);
        QCOMPARE(s.code(), StatusCode::out_of_range);
        QVERIFY(s.message().find("token id 500") != std::string::npos);
        std::vector<TokenId> many(17, 3);
        s = l->model->forward(many, 0, **kv, false, logits, pool);
        QCOMPARE(s.code(), StatusCode::out_of_range);
        QVERIFY(s.message().find("--kv-budget") != std::string::npos);
        QCOMPARE((*kv)->n_tokens(0), 0);  // nothing committed on failure
        QVERIFY(l->model->forward(std::vector<TokenId>(16, 3), 0, **kv, false, logits, pool).ok());
    }
};

QTEST_APPLESS_MAIN(TestModelForward)
#include "test_model_forward.moc"
