// The decoder forward pass. Prompts run in chunks of kChunk tokens so activation memory stays
// bounded; the backend runs every op on the whole chunk so weights are read once per chunk, not
// per token.
#include "model/decoder_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attention/latent_kv.h"
#include "kernels/cpu/cpu_backend.h"
#ifdef WB_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif
#include "kv_blocks/kv_row_codec.h"
#include "model/arch/architecture.h"
#include "model/rope_scaling.h"

namespace workbench {
namespace {

constexpr int64_t kChunk = PagedKv::kMaxStepTokens;  // a sliding window's pool is sized for one such step

const float* f32(const WeightTensor& t) { return reinterpret_cast<const float*>(t.data); }

}  // namespace

Result<std::unique_ptr<DecoderModel>> DecoderModel::create(ModelHparams hp, ModelWeights weights, const std::string& backend,
                                                      const std::function<void(const uint8_t*, uint64_t)>& on_repacked) {
    std::unique_ptr<DecoderModel> m(new DecoderModel(std::move(hp), std::move(weights)));
    BackendOptions options;
    if (const Architecture* arch = find_architecture(m->hp_.arch)) {
        options.gelu_gate = arch->activation == FfnActivation::gelu_tanh;
        options.clamped_swiglu = arch->activation == FfnActivation::swiglu_clamped;
    }
    options.rope = m->rope_params(false);
    options.rope_local = m->rope_params(true);
    if (backend == "cuda") {
        if (m->hp_.experts.n_expert > 0)
            return error(StatusCode::unsupported, m->hp_.arch + ": the CUDA backend does not run layers of experts yet (use --backend cpu)");
        if (m->hp_.is_mla())
            return error(StatusCode::unsupported, m->hp_.arch + ": the CUDA backend does not run latent attention yet (use --backend cpu)");
#ifdef WB_HAVE_CUDA
        WB_ASSIGN_OR_RETURN(m->backend_, make_cuda_backend(m->hp_, m->w_, options, on_repacked));
        return m;
#else
        return error(StatusCode::unsupported, "this build has no CUDA backend");
#endif
    }
    if (backend != "cpu") return error(StatusCode::invalid_argument, "unknown backend '" + backend + "' (cpu or cuda)");
    WB_ASSIGN_OR_RETURN(m->backend_, CpuBackend::create(m->hp_, m->w_, options, on_repacked));
    return m;
}

RopeParams DecoderModel::rope_params(bool local_layer) const {
    return model_rope(hp_, local_layer, !local_layer && w_.rope_freqs.present() ? f32(w_.rope_freqs) : nullptr);
}

Status DecoderModel::check_tokens(std::span<const TokenId> tokens, const PagedKv& kv) const {
    for (TokenId t : tokens)
        if (t < 0 || t >= hp_.n_vocab)
            return error(StatusCode::out_of_range, "token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                                                       std::to_string(hp_.n_vocab - 1) + ")");
    if (kv.latent() && latent_.empty())
        return error(StatusCode::invalid_argument, "forward: a latent KV cache needs enable_latent() first");
    return Status::ok_status();
}

Status DecoderModel::forward(std::span<const TokenId> tokens, SeqId seq, PagedKv& kv, bool all_logits,
                           std::vector<float>& logits, ThreadPool& pool) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0) return error(StatusCode::invalid_argument, "forward: no tokens to process");
    WB_RETURN_IF_ERROR(check_tokens(tokens, kv));
    logits.resize(static_cast<size_t>((all_logits ? n : 1) * hp_.n_vocab));
    for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
        const int64_t cn = std::min(kChunk, n - c0);
        const bool last_chunk = c0 + cn == n;
        float* out = nullptr;
        logit_rows_.clear();
        if (all_logits) {
            out = logits.data() + c0 * hp_.n_vocab;
            for (int64_t r = 0; r < cn; ++r) logit_rows_.push_back(r);
        } else if (last_chunk) {
            out = logits.data();
            logit_rows_.push_back(cn - 1);
        }
        const auto chunk = tokens.subspan(static_cast<size_t>(c0), static_cast<size_t>(cn));
        WB_RETURN_IF_ERROR(kv.begin_step(seq, chunk));
        lat_generated_ = 0;   // a prompt, or text being scored
        HeadRows head;
        head.full = logit_rows_;
        head.logits = out;
        if (Status s = forward_rows(kv, chunk, head, pool); !s.ok()) {
            kv.abort_step();
            return s;
        }
        kv.finish_step();
    }
    return Status::ok_status();
}

Status DecoderModel::forward_batch(std::span<const BatchSequence> batch, PagedKv& kv, std::vector<float>& logits,
                                 ThreadPool& pool, std::vector<TopLogit>* top, bool* no_kv_room) {
    if (no_kv_room) *no_kv_room = false;
    if (batch.empty()) return error(StatusCode::invalid_argument, "forward: an empty batch");
    auto wants_top = [&](const BatchSequence& b) { return top && b.want_logits && !b.all_logits && b.top_logits > 0; };
    int64_t n_wanted = 0, n_top = 0;
    int32_t k = 0;
    for (const BatchSequence& b : batch) {
        if (b.tokens.empty()) return error(StatusCode::invalid_argument, "forward: sequence " + std::to_string(b.seq) + " has no tokens in the batch");
        WB_RETURN_IF_ERROR(check_tokens(b.tokens, kv));
        if (b.top_logits > kMaxTopLogits)
            return error(StatusCode::invalid_argument, "forward: " + std::to_string(b.top_logits) + " best logits asked for; at most " +
                                                           std::to_string(kMaxTopLogits));
        if (wants_top(b)) {
            ++n_top;
            k = std::max(k, std::min(b.top_logits, hp_.n_vocab));
            continue;
        }
        n_wanted += b.all_logits ? static_cast<int64_t>(b.tokens.size()) : b.want_logits;
    }
    logits.resize(static_cast<size_t>(n_wanted * hp_.n_vocab));
    if (top) top->resize(static_cast<size_t>(n_top * k));
    if (kv.latent() && !kv.latent_absorbed() && batch.size() > 1) {
        // Latent keys are rebuilt per sequence: one step per sequence.
        std::vector<float> one;
        std::vector<TopLogit> one_top;
        std::vector<int32_t> before;
        for (const BatchSequence& b : batch) before.push_back(kv.n_tokens(b.seq));
        int64_t w = 0, w_top = 0;
        for (size_t i = 0; i < batch.size(); ++i) {
            BatchSequence b = batch[i];
            if (wants_top(b)) b.top_logits = k;   // every sequence's best come k to a row
            if (Status s = forward_batch(std::span(&b, 1), kv, one, pool, top ? &one_top : nullptr, no_kv_room); !s.ok()) {
                // All or nothing, as for the other variants: the sequences already run go back.
                for (size_t j = 0; j < i; ++j) (void)kv.keep_prefix(batch[j].seq, before[j]);
                return s;
            }
            std::copy(one.begin(), one.end(), logits.begin() + w * hp_.n_vocab);
            w += static_cast<int64_t>(one.size()) / hp_.n_vocab;
            if (top) {
                std::copy(one_top.begin(), one_top.end(), top->begin() + w_top);
                w_top += static_cast<int64_t>(one_top.size());
            }
        }
        return Status::ok_status();
    }
    std::vector<StepSequence> steps;
    steps.reserve(batch.size());
    batch_tokens_.clear();
    logit_rows_.clear();
    top_rows_.clear();
    for (const BatchSequence& b : batch) {
        // A prompt's last chunk asks for logits and holds no generated rows; a prompt scored for
        // every row's logits is read as it is, not pressed.
        steps.push_back({b.seq, b.tokens, b.want_logits && b.n_generated == 0 && !b.all_logits,
                         b.n_generated > 0 && static_cast<size_t>(b.n_generated) == b.tokens.size()});
        const int64_t first = static_cast<int64_t>(batch_tokens_.size());
        batch_tokens_.insert(batch_tokens_.end(), b.tokens.begin(), b.tokens.end());
        const int64_t last = static_cast<int64_t>(batch_tokens_.size()) - 1;
        if (wants_top(b))
            top_rows_.push_back(last);
        else if (b.all_logits)
            for (int64_t r = first; r <= last; ++r) logit_rows_.push_back(r);
        else if (b.want_logits)
            logit_rows_.push_back(last);
    }
    if (Status s = kv.begin_step(steps); !s.ok()) {
        // The cache's codes for a pool without room now (resource_exhausted) or ever (out_of_range).
        if (no_kv_room) *no_kv_room = s.code() == StatusCode::resource_exhausted || s.code() == StatusCode::out_of_range;
        return s;
    }
    lat_generated_ = batch.size() == 1 ? std::min<int64_t>(batch[0].n_generated, static_cast<int64_t>(batch[0].tokens.size())) : 0;
    const HeadRows head{logit_rows_, logits.data(), top_rows_, k, top ? top->data() : nullptr};
    if (Status s = forward_rows(kv, batch_tokens_, head, pool); !s.ok()) {
        kv.abort_step();
        return s;
    }
    kv.finish_step();
    return Status::ok_status();
}

PagedKvShape DecoderModel::kv_shape() const {
    PagedKvShape shape{hp_.n_layer, hp_.n_head_kv, hp_.head_dim, hp_.n_head, rope_params(), {}, latent_ranks(), hp_.attention_scale};
    if (hp_.is_mla()) {
        // Absorbed rows are [c | RoPE key] with V = c; expanded keys are [W_UK·c | RoPE key].
        shape.values_in_keys = !hp_.mla.expanded;
        shape.head_dim_v = hp_.head_dim_v;
        shape.rope_offset = hp_.mla.expanded ? hp_.mla_nope() : hp_.mla.kv_lora_rank;
    }
    return shape;
}

std::vector<int32_t> DecoderModel::latent_ranks() const {
    std::vector<int32_t> ranks;
    for (const LatentLayer& l : latent_) ranks.push_back(static_cast<int32_t>(l.down_m.n_out));
    return ranks;
}

Result<std::vector<double>> DecoderModel::latent_sensitivity(const AttentionSpec& latent, std::span<const TokenId> held_out, int32_t rank,
                                                             ThreadPool& pool, const std::function<void(int, int)>& progress) {
    const int64_t n = static_cast<int64_t>(held_out.size()), n_vocab = hp_.n_vocab, first = n / 2;
    auto run = [&](std::vector<float>& logits) -> Status {
        WB_ASSIGN_OR_RETURN(auto kv, PagedKv::create(latent, KvTypes{}, kv_shape(), 0, static_cast<int32_t>(n)));
        return forward(held_out, 0, *kv, true, logits, pool);
    };
    // The reference's log-probabilities over the scored half.
    std::vector<float> logits;
    WB_RETURN_IF_ERROR(run(logits));
    std::vector<double> ref_logp(static_cast<size_t>((n - first) * n_vocab));
    auto log_softmax = [&](const float* row, double* out) {
        const double mx = *std::max_element(row, row + n_vocab);
        double sum = 0;
        for (int64_t v = 0; v < n_vocab; ++v) sum += std::exp(row[v] - mx);
        const double lse = mx + std::log(sum);
        for (int64_t v = 0; v < n_vocab; ++v) out[v] = row[v] - lse;
    };
    for (int64_t t = first; t < n; ++t) log_softmax(logits.data() + t * n_vocab, ref_logp.data() + (t - first) * n_vocab);
    std::vector<double> kl(static_cast<size_t>(hp_.n_layer), 0.0), logp(static_cast<size_t>(n_vocab));
    for (int32_t il = 0; il < hp_.n_layer; ++il) {
        // Zeroing the directions past `rank` (the matmuls read the f32 factors in place) is that
        // rank's factorization inside a cache of the full width; the copies put them back.
        LatentLayer& l = latent_[static_cast<size_t>(il)];
        const int64_t full = l.down_m.n_out, n_kv = static_cast<int64_t>(l.up_k.size()) / full;
        const std::vector<float> down = l.down, up_k = l.up_k, up_v = l.up_v;
        std::fill(l.down.begin() + rank * hp_.n_embd, l.down.end(), 0.0f);
        for (int64_t r = 0; r < n_kv; ++r) {
            std::fill(l.up_k.begin() + r * full + rank, l.up_k.begin() + (r + 1) * full, 0.0f);
            std::fill(l.up_v.begin() + r * full + rank, l.up_v.begin() + (r + 1) * full, 0.0f);
        }
        const Status s = run(logits);
        std::copy(down.begin(), down.end(), l.down.begin());
        std::copy(up_k.begin(), up_k.end(), l.up_k.begin());
        std::copy(up_v.begin(), up_v.end(), l.up_v.begin());
        WB_RETURN_IF_ERROR(s);
        double sum = 0;
        for (int64_t t = first; t < n; ++t) {
            log_softmax(logits.data() + t * n_vocab, logp.data());
            const double* ref = ref_logp.data() + (t - first) * n_vocab;
            for (int64_t v = 0; v < n_vocab; ++v) sum += std::exp(ref[v]) * (ref[v] - logp[static_cast<size_t>(v)]);
        }
        kl[static_cast<size_t>(il)] = sum / static_cast<double>(n - first);
        if (progress) progress(il + 1, hp_.n_layer);
    }
    return kl;
}

Result<std::vector<double>> DecoderModel::enable_latent(const AttentionSpec& latent, std::span<const TokenId> calibration,
                                                        std::span<const TokenId> held_out, int32_t rank_step, ThreadPool& pool,
                                                        const std::function<void(int, int)>& progress) {
    if (hp_.is_mla())
        return error(StatusCode::invalid_argument, "latent: " + hp_.arch + "'s attention is latent already (its KV rows are " +
                                                       std::to_string(hp_.mla.kv_lora_rank) + "-value latents and a RoPE key); use full attention");
    if (calibration.empty()) return error(StatusCode::invalid_argument, "latent: the calibration text is empty");
    if (!w_.layers.empty() && w_.layers.front().q_norm.present())
        return error(StatusCode::unsupported, "latent: " + hp_.arch + " normalizes each key head before RoPE, which the latent "
                                              "path (keys rebuilt from the cache) does not do yet");
    WB_ASSIGN_OR_RETURN(auto kv, PagedKv::create(AttentionSpec{}, KvTypes{}, kv_shape(), 0, static_cast<int32_t>(calibration.size())));
    std::vector<std::vector<float>> inputs(static_cast<size_t>(hp_.n_layer));
    std::vector<float> logits;
    capture_ = &inputs;
    const Status s = forward(calibration, 0, *kv, false, logits, pool);
    capture_ = nullptr;
    WB_RETURN_IF_ERROR(s);
    if (latent.ranks == LatentRanks::uniform) {
        WB_ASSIGN_OR_RETURN(latent_, build_latent_layers(w_, hp_, inputs, static_cast<int32_t>(calibration.size()), latent, progress));
    } else {
        if (held_out.size() < 16)
            return error(StatusCode::invalid_argument, "latent:ranks=measured: the held-out calibration text has " +
                                                           std::to_string(held_out.size()) + " tokens, at least 16 are needed");
        const int32_t max_rank = max_latent_rank(hp_, latent.rope_pairs);
        if (latent.rank < 1 || latent.rank > max_rank)   // build_latent_layers names the range
            return build_latent_layers(w_, hp_, inputs, static_cast<int32_t>(calibration.size()), latent).status();
        AttentionSpec full = latent;
        full.rank = max_rank;
        full.ranks = LatentRanks::uniform;
        std::vector<std::vector<double>> singular_values;
        // Progress: the factors, then one probe per layer.
        const auto half_progress = [&](int offset) {
            return [&progress, offset, this](int done, int) { if (progress) progress(offset + done, 2 * hp_.n_layer); };
        };
        WB_ASSIGN_OR_RETURN(latent_, build_latent_layers(w_, hp_, inputs, static_cast<int32_t>(calibration.size()), full,
                                                         half_progress(0), &singular_values));
        // Probed below the target, where one layer's cut moves the output clearly above rounding.
        const int32_t probe_rank = std::max(1, 2 * latent.rank / 3);
        auto sensitivity = latent_sensitivity(full, held_out, probe_rank, pool, half_progress(hp_.n_layer));
        if (!sensitivity.ok()) {
            latent_.clear();
            return sensitivity.status();
        }
        const std::vector<int32_t> ranks = allocate_latent_ranks(singular_values, *sensitivity, probe_rank, latent.rank, std::max(rank_step, 2), max_rank);
        for (int32_t il = 0; il < hp_.n_layer; ++il)
            if (Status s = truncate_latent_layer(latent_[static_cast<size_t>(il)], ranks[static_cast<size_t>(il)], hp_.n_embd,
                                                 singular_values[static_cast<size_t>(il)]);
                !s.ok()) {
                latent_.clear();
                return s;
            }
    }
    std::vector<double> errors;
    for (const auto& l : latent_) errors.push_back(l.output_error);
    return errors;
}

Status DecoderModel::forward_rows(PagedKv& kv, std::span<const TokenId> tokens, const HeadRows& head, ThreadPool& pool) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    const auto t_step = std::chrono::steady_clock::now();
    Backend& b = *backend_;
    attention_ = {};
    b.begin_step(kv.positions(), pool);
    b.embed(tokens);
    for (int32_t il = 0; il < hp_.n_layer; ++il) {
        const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
        // the previous layer's MLP output joins here
        b.residual_norm({il > 0, il > 0 ? &w_.layers[static_cast<size_t>(il) - 1].ffn_post_norm : nullptr, &l.attn_norm, il,
                         MatmulGroup::attention_in});
        if (capture_) b.append_normed_rows((*capture_)[static_cast<size_t>(il)]);
        if (kv.latent_absorbed()) {
            attend_latent_absorbed(il, kv, pool);
        } else if (kv.latent()) {
            attend_latent(il, kv, pool);
        } else {
            b.matmul_group(il, MatmulGroup::attention_in, kv.layer_computes_kv(il));
            attend(il, kv, pool);
        }
        b.matmul_group(il, MatmulGroup::attention_out);
        b.residual_norm({true, &l.attn_post_norm, &l.ffn_norm, il, MatmulGroup::mlp_in});
        b.matmul_group(il, MatmulGroup::mlp_in);
        b.matmul_group(il, MatmulGroup::mlp_out);
    }
    b.residual_norm({hp_.n_layer > 0, hp_.n_layer > 0 ? &w_.layers.back().ffn_post_norm : nullptr, nullptr, 0, MatmulGroup::attention_in});
    int64_t n_head_rows = 0;
    if (head.logits && !head.full.empty()) {
        b.output_head(head.full, head.logits);
        n_head_rows += static_cast<int64_t>(head.full.size());
    }
    if (head.best && !head.top.empty()) {
        b.output_top_logits(head.top, head.k, head.best);
        n_head_rows += static_cast<int64_t>(head.top.size());
    }
    WB_RETURN_IF_ERROR(b.end_step());
    record_step(n, n_head_rows, kv, t_step);
    return Status::ok_status();
}

LayerKvStorage DecoderModel::layer_kv(PagedKv& kv, int32_t layer) {
    KvGroup& group = kv.group_of(layer);
    return {&group.store(), group.storage_of(layer), group.writes_token_rows_only(), group.rotates_keys(), group.rotates_values()};
}

Status DecoderModel::attach_kv(PagedKv& kv) {
    std::vector<LayerKvStorage> layers;
    for (int32_t il = 0; il < hp_.n_layer; ++il) layers.push_back(layer_kv(kv, il));
    return backend_->attach_kv(layers);
}

void DecoderModel::attend(int32_t il, PagedKv& kv, ThreadPool& pool) {
    const auto t_attention = std::chrono::steady_clock::now();
    Backend& b = *backend_;
    LayerAttention a;
    a.kv = layer_kv(kv, il);
    const bool own_kv = kv.layer_computes_kv(il);
    const float* q = nullptr;   // the queries, where the cache's policy may read them
    if (b.writes_kv(a.kv)) {
        a.row_slots = kv.group_of(il).token_slots();
        a.write_kv = own_kv;
    } else {
        const HostRows rows = b.host_rows(il, a.kv, own_kv);
        if (!rows.q) return;   // the backend's step already failed (its end_step reports it): nothing to keep
        if (own_kv) kv.write(il, rows.k, rows.v, pool);
        if (a.kv.rotated_keys) {
            // Keys were stored rotated: the queries turn alike (dot products unchanged).
            for (int64_t r = 0; r < static_cast<int64_t>(kv.positions().size()) * hp_.n_head; ++r)
                hadamard_rotate(rows.q + r * hp_.head_dim, hp_.head_dim);
            a.queries_changed = true;
        }
        q = rows.q;
    }
    const auto t_index = std::chrono::steady_clock::now();
    const AttendPlan& plan = kv.plan(il, q, pool);
    attention_.index_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_index).count();
    a.plan = &plan;
    a.streams = kv.streams(il);
    b.attend(il, a);
    // Operations: per key read, a dot product and a weighted add per query head (2·head_dim + 2·value width).
    const double heads_per_list = static_cast<double>(plan.per_kv_head ? hp_.n_head / hp_.n_head_kv : hp_.n_head);
    double keys = 0;
    for (const KvSpan& sp : plan.spans) keys += sp.end - sp.begin;
    const int32_t value_dim = hp_.head_dim_v > 0 ? hp_.head_dim_v : hp_.head_dim;
    attention_.ops += 2.0 * keys * heads_per_list * static_cast<double>(hp_.head_dim + value_dim);
    attention_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_attention).count();
}

void DecoderModel::attend_latent(int32_t il, PagedKv& kv, ThreadPool& pool) {
    Backend& b = *backend_;
    const LatentLayer& latent = latent_[static_cast<size_t>(il)];
    const LatentRows step = b.latent_in(il, latent);
    if (!step.k) return;   // a backend without the operation (its end_step reports it)
    kv.write(il, step.k, step.v, pool);
    const int32_t n_all = kv.positions().back() + 1;
    const size_t cached_floats = static_cast<size_t>(n_all) * static_cast<size_t>(latent.stored_half);
    if (lat_cached_k_.size() < cached_floats) {
        lat_cached_k_.resize(cached_floats);
        lat_cached_v_.resize(cached_floats);
    }
    kv.read_rows(il, n_all, lat_cached_k_.data(), lat_cached_v_.data());
    (void)kv.plan(il, nullptr, pool);   // keeps the cache's read accounting: the latent rows
    b.attend_latent(il, latent, {lat_cached_k_.data(), lat_cached_v_.data()}, n_all, lat_generated_);
}

void DecoderModel::attend_latent_absorbed(int32_t il, PagedKv& kv, ThreadPool& pool) {
    Backend& b = *backend_;
    const LatentLayer& latent = latent_[static_cast<size_t>(il)];
    const HostRows rows = b.latent_absorbed_in(il, latent);
    if (!rows.q) return;   // the backend's step already failed (its end_step reports it)
    const auto t_attention = std::chrono::steady_clock::now();
    kv.write(il, rows.k, rows.v, pool);
    LayerAttention a;
    a.kv = layer_kv(kv, il);
    const AttendPlan& plan = kv.plan(il, nullptr, pool);
    a.plan = &plan;
    a.streams = kv.streams(il);
    a.latent = &latent;
    b.attend(il, a);
    // Every head scores its latent's whole row and sums its first latent_rank values.
    double keys = 0;
    for (const KvSpan& sp : plan.spans) keys += sp.end - sp.begin;
    const double heads_per_list = static_cast<double>(plan.per_kv_head ? hp_.n_head / latent.n_latents : hp_.n_head);
    attention_.ops += 2.0 * keys * heads_per_list * static_cast<double>(latent.row_width() + latent.latent_rank());
    attention_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_attention).count();
    b.latent_absorbed_out(il, latent);
}

void DecoderModel::record_step(int64_t n, int64_t n_logit_rows, const PagedKv& kv, std::chrono::steady_clock::time_point t_step) {
    StepRoofline& r = last_step_;
    r.n_tokens = n;
    const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_step).count();
    double params = 0, bytes = 0;
    for (size_t il = 0; il < w_.layers.size(); ++il) {
        const LayerWeights& l = w_.layers[il];
        // Latent attention's head matrices: their products' size from the file, their bytes as
        // the backend holds them (it makes some at load, of another type).
        double head_bytes = 0;
        for (const WeightTensor* t : layer_matrices(l)) {
            params += static_cast<double>(t->n_in) * static_cast<double>(t->n_out);
            (t == &l.wkv_b ? head_bytes : bytes) += static_cast<double>(t->n_bytes);
        }
        for (const WeightTensor* t : layer_head_matrices(l)) {
            params += static_cast<double>(t->n_in) * static_cast<double>(t->n_out) * static_cast<double>(t->n_mat);
            head_bytes += static_cast<double>(t->n_bytes);
        }
        const std::optional<uint64_t> held = backend_->latent_head_bytes(static_cast<int32_t>(il));
        bytes += held ? static_cast<double>(*held) : head_bytes;
    }
    if (kv.latent())
        for (size_t il = 0; il < latent_.size(); ++il) {
            // The latent reads its f32 factors in place of W_v (and of W_k when no RoPE pair is kept).
            const LatentLayer& lat = latent_[il];
            const LayerWeights& l = w_.layers[il];
            for (const WeightTensor* t : {&l.wv, lat.rope_dims.empty() ? &l.wk : nullptr}) {
                if (!t) continue;
                params -= static_cast<double>(t->n_in) * static_cast<double>(t->n_out);
                bytes -= static_cast<double>(t->n_bytes);
            }
            const double factors = static_cast<double>(lat.down.size() + lat.up_k.size() + lat.up_v.size());
            params += factors;
            bytes += 4.0 * factors;
        }
    // Of the experts, only what the step's tokens chose (each active expert read once).
    const ExpertReads experts = backend_->expert_reads_last_step();
    bytes += experts.bytes;
    const double head_params = static_cast<double>(w_.output.n_in) * static_cast<double>(w_.output.n_out);
    r.matmul.ops = 2.0 * (params * static_cast<double>(n) + experts.params_x_tokens + head_params * static_cast<double>(n_logit_rows));
    r.matmul.bytes = bytes + (n_logit_rows > 0 ? static_cast<double>(w_.output.n_bytes) : 0.0);
    const AttentionWork& attention = attention_;
    r.matmul.seconds = std::max(0.0, total_s - attention.seconds);
    // Attention reads each KV entry once per step (the queries of a tile share it) plus Q and its
    // output; the indexer's reads and time are its own point.
    const KvUsage usage = kv.usage();
    r.index.ops = usage.index_ops_last_step;
    r.index.bytes = static_cast<double>(usage.index_bytes_last_step);
    r.index.seconds = attention.index_seconds;
    r.attention.ops = attention.ops;
    r.attention.bytes = static_cast<double>(usage.bytes_read_last_step - usage.index_bytes_last_step) +
                        2.0 * 4.0 * static_cast<double>(n * hp_.n_head * hp_.head_dim * hp_.n_layer);
    r.attention.seconds = attention.seconds - attention.index_seconds;
}

}  // namespace workbench
