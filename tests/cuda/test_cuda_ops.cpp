// The CUDA backend's elementwise and per-row kernels against the CPU's on random data: RoPE
// (normal and neox pairing, a partial rotation, the CPU's angle table), SwiGLU and GeGLU, the
// embedding lookup (a quantized and a plain table, a scale), soft-capping, row gathering, biases
// and the residual add, the Hadamard rows (bit for bit: the same butterflies and scale). Bound:
// 1e-5 relative to each value (RoPE, adds, gathers: 1e-6). The
// rows' best logits (top_logits) equal the host's selection exactly, through ties, NaN, ±inf,
// rows with nothing or too little finite, rows narrower and wider than the block (at k > 1 the
// rows with few equal values take the shortlist, the others overflow it and take the rounds,
// except at 2048 wide, where they fill it exactly).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/top_logits.h"
#include "kv_blocks/kv_row_codec.h"
#include "sampling/top_logits.h"
#include "tensor/dequantize.h"
#include "tests/cuda/cuda_check.h"
#include "workbench/backends.h"

using namespace workbench;

namespace {

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& host) {
    auto b = cuda::DeviceBuffer::allocate(host.size() * sizeof(T));
    if (!b.ok()) {   // nothing to test with: stop here rather than launch on null pointers
        std::printf("device buffer: %s\n", b.status().message().c_str());
        std::exit(1);
    }
    CHECK(b->upload(host.data(), host.size() * sizeof(T)).ok(), "upload");
    return std::move(*b);
}

std::vector<float> from_device(const cuda::DeviceBuffer& b, size_t count) {
    std::vector<float> out(count);
    CHECK(cuda::check(cudaDeviceSynchronize(), "kernels").ok(), "the kernels ran");
    CHECK(b.download(out.data(), count * 4).ok(), "download");
    return out;
}

void compare(const std::string& what, const std::vector<float>& got, const std::vector<float>& expected, double bound) {
    double worst = 0;
    for (size_t i = 0; i < expected.size(); ++i)
        worst = cudacheck::worse(worst, std::fabs(got[i] - expected[i]) / std::max(1.0, std::fabs(static_cast<double>(expected[i]))));
    std::printf("%-28s worst relative error %.2e (bound %.0e)\n", what.c_str(), worst, bound);
    CHECK(worst <= bound, what + ": the device result departs from the CPU's");
}

void check_rope(RopeStyle style, int32_t n_rot) {
    const int64_t n = 5, head_dim = 64, heads = 3, width = heads * head_dim;
    const std::vector<int32_t> positions = {0, 1, 7, 300, 4095};
    const RopeParams p{n_rot, 500000.0f, 1.0f, style, nullptr};
    RopeAngles a;
    rope_angles(positions.data(), n, p, a);
    std::vector<float> x = cudacheck::random_floats(static_cast<size_t>(n * width), 1.0f, 3), expected = x;
    rope_features(expected.data(), width, head_dim, 0, width, p, a, 0, n);
    cuda::DeviceBuffer dx = to_device(x), dc = to_device(a.cos), ds = to_device(a.sin);
    CHECK(cuda::rope_rows(dx.as<float>(), n, width, head_dim, n_rot, style == RopeStyle::neox, dc.as<float>(), ds.as<float>(), nullptr).ok(), "rope launch");
    compare(std::string("rope ") + (style == RopeStyle::neox ? "neox" : "normal") + " n_rot " + std::to_string(n_rot),
            from_device(dx, x.size()), expected, 1e-6);
}

void check_glu(bool gelu) {
    const size_t n = 3 * 1536 + 5;
    const std::vector<float> gate = cudacheck::random_floats(n, 3.0f, 5), up = cudacheck::random_floats(n, 1.0f, 6);
    std::vector<float> expected(n);
    if (gelu) geglu_tanh(gate.data(), up.data(), expected.data(), static_cast<int64_t>(n));
    else swiglu(gate.data(), up.data(), expected.data(), static_cast<int64_t>(n));
    cuda::DeviceBuffer dg = to_device(gate), du = to_device(up);
    CHECK(cuda::gated_activation(dg.as<float>(), du.as<float>(), static_cast<int64_t>(n), gelu, nullptr).ok(), "glu launch");
    compare(gelu ? "geglu (tanh)" : "swiglu", from_device(dg, n), expected, 1e-5);
}

void check_embed(DType type, float scale) {
    const int64_t n_embd = 96, n_vocab = 50;
    const int64_t row_bytes = static_cast<int64_t>(dtype_row_bytes(dtype_traits(type), n_embd));
    const std::vector<float> table = cudacheck::random_floats(static_cast<size_t>(n_vocab * n_embd), 1.0f, 8);
    std::vector<uint8_t> blocks(static_cast<size_t>(row_bytes * n_vocab));
    for (int64_t r = 0; r < n_vocab; ++r) CHECK(quantize_row(type, table.data() + r * n_embd, blocks.data() + r * row_bytes, n_embd), "quantize");
    const std::vector<int32_t> tokens = {0, 49, 7, 7, 23};
    std::vector<float> expected(tokens.size() * n_embd);
    for (size_t t = 0; t < tokens.size(); ++t) {
        dequantize_row(type, blocks.data() + tokens[t] * row_bytes, expected.data() + t * n_embd, n_embd);
        for (int64_t i = 0; i < n_embd; ++i) expected[t * n_embd + i] *= scale;
    }
    std::vector<uint8_t> laid(static_cast<size_t>(cuda::device_matrix_bytes(type, n_embd, n_vocab).total));
    cuda::to_device_layout(type, blocks.data(), n_embd, n_vocab, laid.data());
    cuda::DeviceBuffer dt = to_device(laid), dtok = to_device(tokens);
    auto out = cuda::DeviceBuffer::allocate(expected.size() * 4);
    CHECK(out.ok(), "buffer");
    if (!out.ok()) return;
    const cuda::DeviceMatrix m = cuda::device_matrix_at(type, dt.as<uint8_t>(), n_embd, n_vocab);
    CHECK(cuda::embed_rows(m, dtok.as<int32_t>(), static_cast<int64_t>(tokens.size()), scale, out->as<float>(), nullptr).ok(), "embed launch");
    compare(std::string("embedding ") + std::string(dtype_name(type)), from_device(*out, expected.size()), expected, 1e-6);
}

void check_rows() {
    const int64_t rows = 6, width = 70;
    const std::vector<float> x = cudacheck::random_floats(static_cast<size_t>(rows * width), 20.0f, 9), y = cudacheck::random_floats(x.size(), 1.0f, 10),
                             bias = cudacheck::random_floats(static_cast<size_t>(width), 1.0f, 11);
    std::vector<float> capped = x, added = x, biased = x;
    for (float& v : capped) v = 30.0f * std::tanh(v / 30.0f);
    for (size_t i = 0; i < x.size(); ++i) {
        added[i] += y[i];
        biased[i] += bias[i % width];
    }
    const std::vector<int64_t> pick = {5, 0, 3};
    std::vector<float> gathered;
    for (int64_t r : pick) gathered.insert(gathered.end(), x.begin() + r * width, x.begin() + (r + 1) * width);

    cuda::DeviceBuffer dcap = to_device(x), dadd = to_device(x), dbias = to_device(x), dy = to_device(y), db = to_device(bias),
                       dx = to_device(x), drows = to_device(pick);
    auto dg = cuda::DeviceBuffer::allocate(gathered.size() * 4);
    CHECK(dg.ok(), "buffer");
    if (!dg.ok()) return;
    CHECK(cuda::soft_cap(dcap.as<float>(), rows * width, 30.0f, nullptr).ok(), "soft-cap launch");
    CHECK(cuda::add_into(dadd.as<float>(), dy.as<float>(), rows * width, nullptr).ok(), "add launch");
    CHECK(cuda::add_bias(dbias.as<float>(), db.as<float>(), rows, width, nullptr).ok(), "bias launch");
    CHECK(cuda::gather_rows(dx.as<float>(), drows.as<int64_t>(), static_cast<int64_t>(pick.size()), width, dg->as<float>(), nullptr).ok(), "gather launch");
    compare("soft-cap 30", from_device(dcap, x.size()), capped, 1e-5);
    compare("residual add", from_device(dadd, x.size()), added, 1e-6);
    compare("bias", from_device(dbias, x.size()), biased, 1e-6);
    compare("row gather", from_device(*dg, gathered.size()), gathered, 0.0);
}

void check_hadamard(int64_t head_dim) {
    const int64_t rows = 7;
    const std::vector<float> x = cudacheck::random_floats(static_cast<size_t>(rows * head_dim), 3.0f, 12);
    std::vector<float> expected = x;
    for (int64_t r = 0; r < rows; ++r) hadamard_rotate(expected.data() + r * head_dim, head_dim);
    cuda::DeviceBuffer dx = to_device(x);
    CHECK(cuda::hadamard_rows(dx.as<float>(), rows, head_dim, nullptr).ok(), "Hadamard launch");
    compare("Hadamard rows of " + std::to_string(head_dim), from_device(dx, x.size()), expected, 0.0);
}

void check_top_logits(int32_t k, size_t width) {
    const size_t rows = 40;
    const float inf = INFINITY, nan = NAN;
    std::vector<float> x = cudacheck::random_floats(rows * width, 3.0f, 21);
    for (float& v : x) v = std::round(v * 2.0f) / 2.0f;   // many ties
    float* r = x.data();
    for (size_t i = 0; i < width; i += 37) r[1 * width + i] = nan;
    for (size_t i = 5; i < width; i += 997) r[2 * width + i] = inf;
    std::fill(r + 3 * width, r + 4 * width, -inf);                       // nothing finite
    for (size_t i = 0; i < width; ++i) r[4 * width + i] = i % 2 ? -inf : nan;
    r[4 * width + width * 4 / 5] = 1.0f, r[4 * width + 17] = 1.0f, r[4 * width + width / 2] = -3.0f;   // three finite
    std::fill(r + 5 * width, r + 6 * width, 0.0f);                       // all equal
    cuda::DeviceBuffer dx = to_device(x);
    auto out = cuda::DeviceBuffer::allocate(rows * static_cast<size_t>(k) * sizeof(TopLogit));
    CHECK(out.ok(), "buffer");
    if (!out.ok()) return;
    CHECK(cuda::top_logits(dx.as<float>(), static_cast<int64_t>(rows), static_cast<int64_t>(width), k, out->as<TopLogit>(), nullptr).ok(),
          "top-logits launch");
    CHECK(cuda::check(cudaDeviceSynchronize(), "kernels").ok(), "the kernels ran");
    std::vector<TopLogit> got(rows * static_cast<size_t>(k)), expected(got.size());
    CHECK(out->download(got.data(), got.size() * sizeof(TopLogit)).ok(), "download");
    int differing = 0;
    for (size_t row = 0; row < rows; ++row) {
        select_top_logits(r + row * width, width, expected.data() + row * k, static_cast<size_t>(k));
        for (size_t i = row * k; i < (row + 1) * k; ++i)
            differing += got[i].token != expected[i].token || std::memcmp(&got[i].logit, &expected[i].logit, 4) != 0;
    }
    std::printf("top %d logits of %zu rows of %zu: %d entries differ from the host's selection\n", k, rows, width, differing);
    CHECK(differing == 0, "top logits: the device's selection differs from the host's");
}

}  // namespace

int main() {
    if (auto devices = cuda_devices(); !devices.ok()) cudacheck::skip(devices.status().message());
    check_rope(RopeStyle::normal, 64);
    check_rope(RopeStyle::neox, 64);
    check_rope(RopeStyle::normal, 32);
    check_rope(RopeStyle::neox, 32);
    check_glu(false);
    check_glu(true);
    check_embed(DType::q4_0, 1.0f);
    check_embed(DType::q4_1, 1.0f);
    check_embed(DType::q8_0, 9.797959f);
    check_embed(DType::f16, 1.0f);
    check_rows();
    for (int64_t head_dim : {32, 64, 128, 256}) check_hadamard(head_dim);
    // 100: narrower than the block (threads without entries); 2048: all-equal rows fill the shortlist exactly.
    for (size_t width : {size_t{5000}, size_t{100}, size_t{2048}})
        for (int32_t k : {1, 40, kMaxTopLogits}) check_top_logits(k, width);
    return cudacheck::finish();
}
