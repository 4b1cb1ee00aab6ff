// workbench-matmul-bench: one matmul shape on random weights, timed in isolation, so a kernel
// change can be judged without a whole forward pass (and on a busy machine by its best run).
//   build/bin/workbench-matmul-bench TYPE N_IN N_OUT TOKENS [THREADS] [REPS]
// TYPE is a weight type name (q4_1, q8_0, f16, ...). Prints the best and median time per call
// and the best rate in GOP/s (2 · N_IN · N_OUT · TOKENS operations per call). Types the engine
// cannot quantize to (q2_k, q3_k, q5_k) get random blocks with sane fp16 scales instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/matmul.h"
#include "tensor/dequantize.h"
#include "tensor/dtype.h"
#include "tensor/quant_blocks.h"

using namespace workbench;

namespace {

// Random bytes are valid blocks of these k-quants once their fp16 super-block scales are sane.
bool fill_random_blocks(DType type, std::vector<uint8_t>& gguf, std::mt19937& rng) {
    auto fill = [&](auto block_type, auto fix) {
        using Block = decltype(block_type);
        for (auto& byte : gguf) byte = static_cast<uint8_t>(rng());
        for (size_t at = 0; at + sizeof(Block) <= gguf.size(); at += sizeof(Block)) {
            Block blk;
            std::memcpy(&blk, gguf.data() + at, sizeof blk);
            fix(blk);
            std::memcpy(gguf.data() + at, &blk, sizeof blk);
        }
    };
    const uint16_t small = fp32_to_fp16(0.01f);
    switch (type) {
        case DType::q2_k: fill(quant::BlockQ2_K{}, [&](quant::BlockQ2_K& b) { b.d = small, b.dmin = small; }); return true;
        case DType::q3_k: fill(quant::BlockQ3_K{}, [&](quant::BlockQ3_K& b) { b.d = small; }); return true;
        case DType::q5_k: fill(quant::BlockQ5_K{}, [&](quant::BlockQ5_K& b) { b.d = small, b.dmin = small; }); return true;
        default: return false;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s TYPE N_IN N_OUT TOKENS [THREADS] [REPS]\n", argv[0]);
        return 2;
    }
    const auto type = dtype_from_name(argv[1]);
    const int64_t n_in = std::atoll(argv[2]), n_out = std::atoll(argv[3]), n_tokens = std::atoll(argv[4]);
    const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
    const int reps = argc > 6 ? std::atoi(argv[6]) : 20;
    if (!type || n_in <= 0 || n_in % static_cast<int64_t>(std::max<uint32_t>(32, dtype_traits(*type).block_elements)) != 0 || n_out <= 0 || n_tokens <= 0 || threads <= 0 || reps <= 0) {
        std::fprintf(stderr, "error: need a known weight type, N_IN a positive multiple of its block (32, or 256 for k-quants), positive sizes\n");
        return 2;
    }
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(static_cast<size_t>(n_in * n_out)), x(static_cast<size_t>(n_in * n_tokens));
    for (auto& v : values) v = normal(rng);
    for (auto& v : x) v = normal(rng);
    std::vector<uint8_t> gguf(dtype_row_bytes(dtype_traits(*type), static_cast<uint64_t>(n_in)) * static_cast<uint64_t>(n_out));
    if (!quantize_row(*type, values.data(), gguf.data(), static_cast<int64_t>(values.size())) && !fill_random_blocks(*type, gguf, rng)) {
        std::fprintf(stderr, "error: cannot quantize to %s\n", argv[1]);
        return 1;
    }
    PackedMatrix w;
    if (!pack_matrix(WeightTensor{*type, gguf.data(), n_in, n_out, gguf.size()}, w)) return 1;
    std::vector<float> y(static_cast<size_t>(n_out * n_tokens));
    ThreadPool pool(threads);
    MatmulScratch scratch;
    matmul(w, x.data(), y.data(), n_tokens, pool, scratch);  // warm-up
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        matmul(w, x.data(), y.data(), n_tokens, pool, scratch);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double ops = 2.0 * static_cast<double>(n_in) * static_cast<double>(n_out) * static_cast<double>(n_tokens);
    std::printf("%s %lldx%lld tokens=%lld threads=%d kernel=%s: best %.3f ms, median %.3f ms, %.1f GOP/s\n", argv[1],
                static_cast<long long>(n_out), static_cast<long long>(n_in), static_cast<long long>(n_tokens), threads,
                matmul_kernel_name(), ms.front(), ms[ms.size() / 2], ops / (ms.front() * 1e6));
    return 0;
}
