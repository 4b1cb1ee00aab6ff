// The CUDA backend's operations, queued on one stream. Ops return nothing (Backend's contract), so
// the first error any of them meets is kept and every later op of the step is skipped; end_step
// waits for the stream and hands that error (or a late fault) to the model, which drops the step.
// Attention and the device KV cache: cuda_attention.cpp; decode steps as CUDA graphs and the
// pinned staging of inputs: cuda_step_graph.cpp.
#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_backend_impl.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/matmul_kernels.h"
#include "kernels/cuda/rms_norm.h"
#include "kernels/cuda/top_logits.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {

constexpr size_t kAlign = 256;

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// A tensor's type on the device: its own where the kernels read it, else f16.
DType device_type(const WeightTensor& t) { return cuda::kept_on_device(t.type) ? t.type : DType::f16; }

size_t device_bytes(const WeightTensor& t) {
    if (!t.present()) return 0;
    return aligned(static_cast<size_t>(cuda::device_matrix_bytes(device_type(t), t.n_in, t.n_out).total));
}

}  // namespace

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                         const std::function<void(const uint8_t*, uint64_t)>& on_uploaded) {
    std::unique_ptr<CudaBackend> b(new CudaBackend(hp, w, options));
    WB_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking), "creating a CUDA stream");
    WB_ASSIGN_OR_RETURN(b->lt_, cuda::LtMatmul::create(b->stream_));
    WB_RETURN_IF_ERROR(b->upload_weights(on_uploaded));
    WB_RETURN_IF_ERROR(b->ensure_capacity(kGraphMaxTokens));
    b->measure_gemv_crossover();
    // The staging's first region made now: growing it mid-step would end a capture early.
    WB_RETURN_IF_ERROR(b->pinned_region(size_t{1} << 18).status());
    b->pinned_used_ = 0;
    return b;
}

// One allocation holds every weight; each tensor is copied in at its aligned offset. Matrices in
// a format the kernels do not read are converted to f16 on the host first.
Status CudaBackend::upload_weights(const std::function<void(const uint8_t*, uint64_t)>& on_uploaded) {
    std::vector<const WeightTensor*> all;
    for (const LayerWeights& l : w_.layers)
        for (const WeightTensor* t : layer_tensors(l)) all.push_back(t);  // absent ones take no bytes
    all.push_back(&w_.output_norm);
    all.push_back(&w_.output);
    if (!w_.tied_output) all.push_back(&w_.token_embd);
    size_t total = 0;
    for (const WeightTensor* t : all) total += device_bytes(*t);
    WB_ASSIGN_OR_RETURN(weight_memory_, DeviceBuffer::allocate(total));
    uint8_t* base = weight_memory_.as<uint8_t>();
    size_t offset = 0;
    std::vector<float> row;
    std::vector<uint16_t> converted;
    std::vector<uint8_t> staged;
    // Each tensor in the device layout (device_matrix.h), staged on the host and copied in.
    auto place = [&](const WeightTensor& t) -> Result<const uint8_t*> {
        if (!t.present()) return static_cast<const uint8_t*>(nullptr);
        uint8_t* at = base + offset;
        offset += device_bytes(t);
        const uint8_t* rows = t.data;
        if (!cuda::kept_on_device(t.type)) {
            row.resize(static_cast<size_t>(t.n_in));
            converted.resize(static_cast<size_t>(t.n_in * t.n_out));
            for (int64_t r = 0; r < t.n_out; ++r) {
                if (!dequantize_row(t.type, t.row(r), row.data(), t.n_in))
                    return error(StatusCode::unsupported, std::string("weights of type ") + std::string(dtype_name(t.type)) + " cannot be read");
                for (int64_t i = 0; i < t.n_in; ++i) converted[static_cast<size_t>(r * t.n_in + i)] = fp32_to_fp16(row[static_cast<size_t>(i)]);
            }
            rows = reinterpret_cast<const uint8_t*>(converted.data());
        }
        const DType type = device_type(t);
        if (cuda::split_on_device(type) && t.n_in % 32 != 0)
            return error(StatusCode::invalid_argument, std::string("a ") + std::string(dtype_name(type)) + " matrix of " + std::to_string(t.n_in) +
                                                           " columns: quantized rows must be whole 32-element blocks");
        if (cuda::split_on_device(type)) {
            staged.resize(static_cast<size_t>(cuda::device_matrix_bytes(type, t.n_in, t.n_out).total));
            cuda::to_device_layout(type, rows, t.n_in, t.n_out, staged.data());
            rows = staged.data();
        }
        const size_t bytes = static_cast<size_t>(cuda::device_matrix_bytes(type, t.n_in, t.n_out).total);
        WB_CUDA_RETURN_IF_ERROR(cudaMemcpy(at, rows, bytes, cudaMemcpyHostToDevice), "uploading the weights");
        return static_cast<const uint8_t*>(at);
    };
    auto matrix = [&](const WeightTensor& t, DeviceMatrix& out) -> Status {
        WB_ASSIGN_OR_RETURN(const uint8_t* at, place(t));
        out = cuda::device_matrix_at(device_type(t), at, t.n_in, t.n_out);
        max_n_in_ = std::max(max_n_in_, t.n_in);
        if (on_uploaded) on_uploaded(t.data, t.n_bytes);
        return Status::ok_status();
    };
    auto vector = [&](const WeightTensor& t, const float*& out) -> Status {
        WB_ASSIGN_OR_RETURN(const uint8_t* at, place(t));
        out = reinterpret_cast<const float*>(at);
        if (out) vectors_[&t] = out;
        return Status::ok_status();
    };
    layers_.resize(w_.layers.size());
    int64_t largest = 0;
    for (size_t il = 0; il < w_.layers.size(); ++il) {
        const LayerWeights& l = w_.layers[il];
        Layer& d = layers_[il];
        const float* residual_norm = nullptr;   // found through vectors_ by the op that names it
        for (auto [src, dst] : {std::pair{&l.attn_norm, &residual_norm}, {&l.ffn_norm, &residual_norm}, {&l.attn_post_norm, &residual_norm},
                                {&l.ffn_post_norm, &residual_norm}, {&l.q_norm, &d.q_norm}, {&l.k_norm, &d.k_norm}, {&l.bq, &d.bq},
                                {&l.bk, &d.bk}, {&l.bv, &d.bv}})
            WB_RETURN_IF_ERROR(vector(*src, *dst));
        const auto src = layer_matrices(l);
        const auto dst = layer_matrices(d);
        for (size_t i = 0; i < src.size(); ++i) {
            if (!src[i]->present()) continue;
            WB_RETURN_IF_ERROR(matrix(*src[i], *dst[i]));
            largest = std::max(largest, src[i]->n_in * src[i]->n_out);
        }
    }
    WB_RETURN_IF_ERROR(vector(w_.output_norm, output_norm_));
    WB_RETURN_IF_ERROR(matrix(w_.output, output_));
    largest = std::max(largest, w_.output.n_in * w_.output.n_out);
    if (w_.tied_output) token_embd_ = output_;
    else WB_RETURN_IF_ERROR(matrix(w_.token_embd, token_embd_));
    WB_ASSIGN_OR_RETURN(w_bf16_, DeviceBuffer::allocate(static_cast<size_t>(largest) * 2));
    return Status::ok_status();
}

Status CudaBackend::ensure_capacity(int64_t n) {
    if (n <= capacity_) return Status::ok_status();
    const int64_t cap = std::max<int64_t>(n, 2 * capacity_);
    const int64_t half = options_.rope.n_rot / 2, half_local = options_.rope_local.n_rot / 2;
    auto f32 = [&](DeviceBuffer& b, int64_t per_token) -> Status {
        WB_ASSIGN_OR_RETURN(b, DeviceBuffer::allocate(static_cast<size_t>(cap * std::max<int64_t>(per_token, 1)) * 4));
        return Status::ok_status();
    };
    WB_RETURN_IF_ERROR(f32(x_, hp_.n_embd));
    WB_RETURN_IF_ERROR(f32(xn_, hp_.n_embd));
    WB_RETURN_IF_ERROR(f32(head_rows_, hp_.n_embd));
    WB_RETURN_IF_ERROR(f32(proj_, hp_.n_embd));
    WB_RETURN_IF_ERROR(f32(q_, hp_.n_embd_q()));
    WB_RETURN_IF_ERROR(f32(attn_, hp_.n_embd_q()));
    WB_RETURN_IF_ERROR(f32(k_, hp_.n_embd_kv()));
    WB_RETURN_IF_ERROR(f32(v_, hp_.n_embd_kv()));
    WB_RETURN_IF_ERROR(f32(gate_, hp_.n_ff));
    WB_RETURN_IF_ERROR(f32(up_, hp_.n_ff));
    WB_RETURN_IF_ERROR(f32(logits_, hp_.n_vocab));
    WB_RETURN_IF_ERROR(f32(top_logits_, kMaxTopLogits * 2));   // TopLogit: two floats' bytes
    WB_RETURN_IF_ERROR(f32(tokens_, 1));
    WB_RETURN_IF_ERROR(f32(x_bf16_, (max_n_in_ + 1) / 2));     // bf16: half a float's bytes
    WB_RETURN_IF_ERROR(f32(rows_, 2));                          // int64
    WB_RETURN_IF_ERROR(f32(cos_, half));
    WB_RETURN_IF_ERROR(f32(sin_, half));
    WB_RETURN_IF_ERROR(f32(cos_local_, half_local));
    WB_RETURN_IF_ERROR(f32(sin_local_, half_local));
    capacity_ = cap;
    return Status::ok_status();
}

void CudaBackend::begin_step(std::span<const int32_t> positions, ThreadPool& pool) {
    error_ = Status::ok_status();
    pinned_used_ = 0;
    ++step_;                    // the last step's copies are done (end_step waited)
    (void)cudaGetLastError();   // an earlier step's reported error must not be reported again by this one's launches
    pool_ = &pool;
    n_ = static_cast<int64_t>(positions.size());
    k_rope_pending_ = false;
    host_copies_.clear();
    pinned_out_used_ = 0;
    discard_capture();   // only a step that never reached end_step leaves one
    keep(ensure_capacity(n_));
    keep(fit_staging());
    if (!error_.ok()) return;
    begin_capture();
    // The angles as the CPU computes them (the same table, so RoPE's rounding matches), uploaded.
    rope_angles(positions.data(), n_, options_.rope, angles_);
    const size_t bytes = angles_.cos.size() * 4;
    keep(upload_staged(cos_.data(), angles_.cos.data(), bytes, "uploading RoPE angles"));
    keep(upload_staged(sin_.data(), angles_.sin.data(), bytes, "uploading RoPE angles"));
    if (!hp_.local_layers.empty()) {
        rope_angles(positions.data(), n_, options_.rope_local, angles_local_);
        const size_t local_bytes = angles_local_.cos.size() * 4;
        keep(upload_staged(cos_local_.data(), angles_local_.cos.data(), local_bytes, "uploading RoPE angles"));
        keep(upload_staged(sin_local_.data(), angles_local_.sin.data(), local_bytes, "uploading RoPE angles"));
    }
}

void CudaBackend::embed(std::span<const TokenId> tokens) {
    if (!error_.ok()) return;
    static_assert(sizeof(TokenId) == 4);
    keep(upload_staged(tokens_.data(), tokens.data(), tokens.size() * 4, "uploading tokens"));
    if (!error_.ok()) return;   // the lookup would read whatever the buffer held
    keep(cuda::embed_rows(token_embd_, tokens_.as<int32_t>(), static_cast<int64_t>(tokens.size()), hp_.embedding_scale, x_.as<float>(), stream_));
}

void CudaBackend::residual_norm(const ResidualNorm& op) {
    if (!error_.ok()) return;
    const int64_t count = n_ * hp_.n_embd;
    auto device_copy = [&](const WeightTensor* t) -> const float* {
        const auto it = vectors_.find(t);
        if (it == vectors_.end()) keep(error(StatusCode::internal, "cuda: a norm that is not one of the model's tensors"));
        return it == vectors_.end() ? nullptr : it->second;
    };
    const float* norm = op.norm ? device_copy(op.norm) : nullptr;
    if (!error_.ok()) return;
    if (op.add) {
        if (op.post_norm && op.post_norm->present())
            if (const float* w = device_copy(op.post_norm))
                keep(cuda::rms_norm(proj_.as<float>(), w, proj_.as<float>(), n_, hp_.n_embd, hp_.rms_eps, stream_));
        if (!error_.ok()) return;
        // The add and the next norm in one pass over the residual stream.
        if (norm) keep(cuda::add_rms_norm(x_.as<float>(), proj_.as<float>(), norm, xn_.as<float>(), n_, hp_.n_embd, hp_.rms_eps, stream_));
        else keep(cuda::add_into(x_.as<float>(), proj_.as<float>(), count, stream_));
        return;
    }
    if (norm) keep(cuda::rms_norm(x_.as<float>(), norm, xn_.as<float>(), n_, hp_.n_embd, hp_.rms_eps, stream_));
}

Status CudaBackend::matmul(const DeviceMatrix& w, const float* x, float* y, int64_t n, const float* bias) {
    if (n <= gemv_max_tokens_) return cuda::gemv(w, x, y, n, stream_, bias);
    return matmul_lt(w, x, y, n, bias);
}

Status CudaBackend::matmul_lt(const DeviceMatrix& w, const float* x, float* y, int64_t n, const float* bias) {
    WB_RETURN_IF_ERROR(cuda::decode_to_bf16(w, w_bf16_.as<uint16_t>(), stream_));
    WB_RETURN_IF_ERROR(cuda::f32_to_bf16(x, x_bf16_.as<uint16_t>(), n * w.n_in, stream_));
    if (bias != nullptr && lt_bias_epilogue_) {
        if (lt_->run(w_bf16_.as<uint16_t>(), x_bf16_.as<uint16_t>(), y, w.n_out, n, w.n_in, bias).ok()) return Status::ok_status();
        // No algorithm with the epilogue here: the bias as its own kernel from now on (a device
        // fault would fail the plain run below as well, and be reported).
        lt_bias_epilogue_ = false;
    }
    WB_RETURN_IF_ERROR(lt_->run(w_bf16_.as<uint16_t>(), x_bf16_.as<uint16_t>(), y, w.n_out, n, w.n_in));
    return bias != nullptr ? cuda::add_bias(y, bias, n, w.n_out, stream_) : Status::ok_status();
}

cuda::KeyRope CudaBackend::rope_angles_for(bool local) const {
    const RopeParams& p = local ? options_.rope_local : options_.rope;
    const bool own_angles = local && !angles_local_.cos.empty();
    return {(own_angles ? cos_local_ : cos_).as<float>(), (own_angles ? sin_local_ : sin_).as<float>(), p.n_rot, p.style == RopeStyle::neox};
}

Status CudaBackend::rope(float* x, int64_t width, bool local) {
    const cuda::KeyRope r = rope_angles_for(local);
    return cuda::rope_rows(x, n_, width, hp_.head_dim, r.n_rot, r.neox, r.cos, r.sin, stream_);
}

Status CudaBackend::rope_pending_keys() {
    if (!k_rope_pending_) return Status::ok_status();
    k_rope_pending_ = false;
    return rope(k_.as<float>(), hp_.n_embd_kv(), k_rope_local_);
}

// As the CPU: the projections with their biases (fused into the matmuls), the per-head QK-norm,
// then RoPE on Q and K. K's RoPE waits for attend: the device's KV append rotates K as it
// encodes it (one pass over K fewer); the other paths rotate it first (rope_pending_keys).
Status CudaBackend::attention_in(int32_t il, bool own_kv) {
    const Layer& l = layers_[static_cast<size_t>(il)];
    const bool local = hp_.is_local_layer(il);
    WB_RETURN_IF_ERROR(matmul(l.wq, xn_.as<float>(), q_.as<float>(), n_, l.bq));
    if (l.q_norm) WB_RETURN_IF_ERROR(cuda::rms_norm(q_.as<float>(), l.q_norm, q_.as<float>(), n_ * hp_.n_head, hp_.head_dim, hp_.rms_eps, stream_));
    WB_RETURN_IF_ERROR(rope(q_.as<float>(), hp_.n_embd_q(), local));
    if (!own_kv) return Status::ok_status();
    WB_RETURN_IF_ERROR(matmul(l.wk, xn_.as<float>(), k_.as<float>(), n_, l.bk));
    WB_RETURN_IF_ERROR(matmul(l.wv, xn_.as<float>(), v_.as<float>(), n_, l.bv));
    if (l.k_norm) WB_RETURN_IF_ERROR(cuda::rms_norm(k_.as<float>(), l.k_norm, k_.as<float>(), n_ * hp_.n_head_kv, hp_.head_dim, hp_.rms_eps, stream_));
    k_rope_pending_ = true;
    k_rope_local_ = local;
    return Status::ok_status();
}

void CudaBackend::matmul_group(int32_t il, MatmulGroup group, bool own_kv) {
    if (!error_.ok()) return;
    const Layer& l = layers_[static_cast<size_t>(il)];
    switch (group) {
        case MatmulGroup::attention_in: keep(attention_in(il, own_kv)); break;
        case MatmulGroup::attention_out: keep(matmul(l.wo, attn_.as<float>(), proj_.as<float>(), n_)); break;
        case MatmulGroup::mlp_in:
            // A decode step's gate and up in one pass with the activation (matrices stored alike).
            if (n_ <= gemv_max_tokens_ && l.ffn_gate.type == l.ffn_up.type && l.ffn_gate.row_bytes == l.ffn_up.row_bytes && l.ffn_gate.n_in == l.ffn_up.n_in &&
                l.ffn_gate.n_out == l.ffn_up.n_out) {
                keep(cuda::gemv_gated(l.ffn_gate, l.ffn_up, xn_.as<float>(), gate_.as<float>(), n_, options_.gelu_gate, stream_));
                break;
            }
            keep(matmul(l.ffn_gate, xn_.as<float>(), gate_.as<float>(), n_));
            keep(matmul(l.ffn_up, xn_.as<float>(), up_.as<float>(), n_));
            if (error_.ok()) keep(cuda::gated_activation(gate_.as<float>(), up_.as<float>(), n_ * hp_.n_ff, options_.gelu_gate, stream_));
            break;
        case MatmulGroup::mlp_out: keep(matmul(l.ffn_down, gate_.as<float>(), proj_.as<float>(), n_)); break;
    }
}

Status CudaBackend::download(std::vector<float>& host, const DeviceBuffer& from, int64_t count) {
    if (static_cast<int64_t>(host.size()) < count) host.resize(static_cast<size_t>(count));
    return cuda::check(cudaMemcpyAsync(host.data(), from.data(), static_cast<size_t>(count) * 4, cudaMemcpyDeviceToHost, stream_),
                       "copying attention inputs to the host");
}

void CudaBackend::head_logits(std::span<const int64_t> rows) {
    if (!error_.ok()) return;
    const int64_t n_rows = static_cast<int64_t>(rows.size());
    keep(upload_staged(rows_.data(), rows.data(), rows.size() * 8, "uploading the head's rows"));
    if (!error_.ok()) return;   // the gather would read whatever the buffer held
    keep(cuda::gather_rows(x_.as<float>(), rows_.as<int64_t>(), n_rows, hp_.n_embd, head_rows_.as<float>(), stream_));
    keep(cuda::rms_norm(head_rows_.as<float>(), output_norm_, head_rows_.as<float>(), n_rows, hp_.n_embd, hp_.rms_eps, stream_));
    if (error_.ok()) keep(matmul(output_, head_rows_.as<float>(), logits_.as<float>(), n_rows));
    if (const float cap = hp_.final_logit_softcap; cap > 0 && error_.ok())
        keep(cuda::soft_cap(logits_.as<float>(), n_rows * hp_.n_vocab, cap, stream_));
}

void CudaBackend::output_head(std::span<const int64_t> rows, float* logits) {
    head_logits(rows);
    copy_to_host(logits, logits_.data(), rows.size() * static_cast<size_t>(hp_.n_vocab) * 4, "copying logits to the host");
}

void CudaBackend::output_top_logits(std::span<const int64_t> rows, int32_t k, TopLogit* top) {
    head_logits(rows);
    if (error_.ok())
        keep(cuda::top_logits(logits_.as<float>(), static_cast<int64_t>(rows.size()), hp_.n_vocab, k, top_logits_.as<TopLogit>(), stream_));
    copy_to_host(top, top_logits_.data(), rows.size() * static_cast<size_t>(k) * sizeof(TopLogit), "copying the best logits to the host");
}

bool CudaBackend::ensure_pinned_out() {
    if (pinned_out_ != nullptr) return true;
    if (pinned_out_failed_) return false;   // not asked again every step
    const size_t per_row = std::max(static_cast<size_t>(hp_.n_vocab) * 4, static_cast<size_t>(kMaxTopLogits) * sizeof(TopLogit));
    const size_t bytes = static_cast<size_t>(kGraphMaxTokens) * per_row + 64;   // + the alignment of two outputs
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        pinned_out_failed_ = true;
        return false;
    }
    pinned_out_ = static_cast<uint8_t*>(p);
    pinned_out_capacity_ = bytes;
    return true;
}

void CudaBackend::copy_to_host(void* host, const void* device, size_t bytes, const char* what) {
    if (!error_.ok()) return;
    if (!capturing_) (void)ensure_pinned_out();   // without it: the waited copy below
    if (pinned_out_used_ + bytes <= pinned_out_capacity_) {
        keep(cuda::check(cudaMemcpyAsync(pinned_out_ + pinned_out_used_, device, bytes, cudaMemcpyDeviceToHost, stream_), what));
        host_copies_.push_back({host, pinned_out_used_, bytes});
        pinned_out_used_ += (bytes + 15) / 16 * 16;
        return;
    }
    // A captured step's outputs always fit (their rows are at most kGraphMaxTokens); this step's
    // cannot wait inside a graph, so what was captured runs first.
    keep(leave_capture());
    if (!error_.ok()) return;
    keep(cuda::check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_), what));
    // `host` is the caller's: the copy finishes before it gets it back.
    keep(cuda::check(cudaStreamSynchronize(stream_), "the step's operations"));
}

DeviceMemory CudaBackend::device_memory() const {
    DeviceMemory m;
    m.weights = weight_memory_.size();
    for (const DeviceBuffer* b : {&x_, &xn_, &q_, &k_, &v_, &attn_, &proj_, &gate_, &up_, &head_rows_, &logits_, &top_logits_, &tokens_, &rows_, &cos_,
                                  &sin_, &cos_local_, &sin_local_})
        m.activations += b->size();
    m.workspace = w_bf16_.size() + x_bf16_.size() + (lt_ ? lt_->workspace_bytes() : 0) + meta_.size() + attention_scratch_.size();
    for (const auto& [id, kv] : device_kv_) m.kv += kv.k.size() + kv.v.size();
    return m;
}

Status CudaBackend::end_step() {
    if (capturing_) keep(replay_step_graph());
    keep(cuda::check(cudaStreamSynchronize(stream_), "the step's operations"));
    if (error_.ok())
        for (const HostCopy& c : host_copies_) std::memcpy(c.to, pinned_out_ + c.offset, c.bytes);
    host_copies_.clear();
    pinned_out_used_ = 0;
    return error_;
}

void CudaBackend::append_normed_rows(std::vector<float>& out) const {
    // Only the latent variant's calibration asks, and Engine::load refuses it on cuda; a failed
    // copy appends nothing (its error is the stream's, which end_step reports), and so does a
    // captured step, which cannot wait for a copy.
    if (capturing_) return;
    const size_t first = out.size(), count = static_cast<size_t>(n_ * hp_.n_embd);
    out.resize(first + count);
    if (cudaMemcpyAsync(out.data() + first, xn_.data(), count * 4, cudaMemcpyDeviceToHost, stream_) != cudaSuccess ||
        cudaStreamSynchronize(stream_) != cudaSuccess)
        out.resize(first);
}

Result<std::unique_ptr<Backend>> make_cuda_backend(const ModelHparams& hp, const ModelWeights& w, const BackendOptions& options,
                                                   const std::function<void(const uint8_t*, uint64_t)>& on_uploaded) {
    WB_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> b, CudaBackend::create(hp, w, options, on_uploaded));
    return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace workbench