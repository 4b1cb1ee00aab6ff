// The device KV cache against the CPU's: rows written by kv_append into arenas laid out as the
// host KvStore's (f32, f16, bf16, q8_0), or the CPU's own encoded arenas copied up (q4_0, fp8, q2_0: the
// host writes those), then the split-key attention kernel over a plan, against kv_encode_row and
// the CPU's attend_spans over the same plan — for every KV type. Two sequences with scattered
// block tables; lists of one span (600 keys: three splits), of two spans (sinks and a window),
// an empty one (zeros), and one reading host-built f32 rows (a third stream, as a sliding
// window's re-rotated sinks) with a score bias (as pooled entries) beside a window; then through
// the tiled kernel a prompt's plan (causal rows, sinks + windows sharing keys across two spans,
// mixed rows) with its tiles' shared key counts checked, and a plan with lists per KV head. GQA:
// 4 query heads on 2 KV heads. Bound: 2e-4 of the largest output (the device sums in another
// order; both round Q to f16). Last, K rotated by RoPE inside the append equals, byte for byte,
// rope_rows followed by the plain append.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/attention_tiles.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/kv_attention.h"
#include "kv_blocks/kv_row_codec.h"
#include "tests/cuda/cuda_check.h"
#include "workbench/backends.h"

using namespace workbench;

namespace {

constexpr int32_t kHeads = 4, kKvHeads = 2, kHeadDim = 64, kBlockTokens = 16, kBlocks = 48;

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& host) {
    auto b = cuda::DeviceBuffer::allocate(std::max<size_t>(host.size() * sizeof(T), 4));
    if (!b.ok() || !b->upload(host.data(), host.size() * sizeof(T)).ok()) {
        std::printf("device buffer: %s\n", b.ok() ? "upload failed" : b.status().message().c_str());
        std::exit(1);
    }
    return std::move(*b);
}

void check_type(KvDType type, cuda::DeviceKvType device_type, bool device_writes) {
    const std::string name(kv_dtype_layout(type).name);
    KvRowLayout layout;
    layout.type = type;
    layout.row_bytes = static_cast<int64_t>(kv_bytes(type, kHeadDim));
    layout.token_stride = layout.row_bytes;   // as KvStore lays a block out: one head's rows together
    layout.head_stride = layout.row_bytes * kBlockTokens;
    layout.block_stride = layout.head_stride * kKvHeads;
    // Sequence A: 600 tokens on blocks in a scattered order; B: 100 tokens on the rest.
    std::vector<BlockId> blocks(kBlocks);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::shuffle(blocks.begin(), blocks.end(), std::mt19937(3));
    const std::vector<BlockId> table_a(blocks.begin(), blocks.begin() + 38), table_b(blocks.begin() + 38, blocks.begin() + 45);
    const int32_t n_a = 600, n_b = 100, row = kKvHeads * kHeadDim;
    const std::vector<float> k = cudacheck::random_floats(static_cast<size_t>((n_a + n_b) * row), 1.0f, 1),
                             v = cudacheck::random_floats(k.size(), 1.0f, 2);
    // Host arenas, encoded by the CPU's codec; the slot of every token of both sequences.
    std::vector<uint8_t> k_host(static_cast<size_t>(layout.block_stride * kBlocks)), v_host(k_host.size());
    std::vector<int32_t> slots;
    for (int32_t i = 0; i < n_a + n_b; ++i) {
        const int32_t pos = i < n_a ? i : i - n_a;
        const BlockId b = (i < n_a ? table_a : table_b)[static_cast<size_t>(pos / kBlockTokens)];
        slots.push_back(b * kBlockTokens + pos % kBlockTokens);
        for (int32_t h = 0; h < kKvHeads; ++h) {
            const int64_t at = b * layout.block_stride + (pos % kBlockTokens) * layout.token_stride + h * layout.head_stride;
            kv_encode_row(type, k.data() + i * row + h * kHeadDim, k_host.data() + at, kHeadDim);
            kv_encode_row(type, v.data() + i * row + h * kHeadDim, v_host.data() + at, kHeadDim);
        }
    }
    // The CPU scores q8_0, q4_0 and q2_0 keys by int8 dot products, the query quantized to q8_0
    // too; the device dequantizes the keys and keeps the query as it does for every type, so its
    // expected result is the CPU's over the decoded rows, read as f32.
    KvRowLayout ref_layout = layout;
    std::vector<uint8_t> k_ref = k_host, v_ref = v_host;
    if (type == KvDType::q8_0 || type == KvDType::q4_0 || type == KvDType::q2_0) {
        ref_layout.type = KvDType::f32;
        ref_layout.row_bytes = 4 * kHeadDim;
        ref_layout.token_stride = ref_layout.row_bytes;
        ref_layout.head_stride = ref_layout.row_bytes * kBlockTokens;
        ref_layout.block_stride = ref_layout.head_stride * kKvHeads;
        k_ref.assign(static_cast<size_t>(ref_layout.block_stride * kBlocks), 0);
        v_ref.assign(k_ref.size(), 0);
        for (int64_t b = 0; b < kBlocks; ++b)
            for (int64_t slot = 0; slot < kBlockTokens; ++slot)
                for (int64_t h = 0; h < kKvHeads; ++h) {
                    const int64_t at = b * layout.block_stride + slot * layout.token_stride + h * layout.head_stride;
                    const int64_t at32 = b * ref_layout.block_stride + slot * ref_layout.token_stride + h * ref_layout.head_stride;
                    kv_decode_row(type, k_host.data() + at, reinterpret_cast<float*>(k_ref.data() + at32), kHeadDim);
                    kv_decode_row(type, v_host.data() + at, reinterpret_cast<float*>(v_ref.data() + at32), kHeadDim);
                }
    }
    // Queries: A at positions 599, 255 and 40 (one span each), A with sinks [0, 4) + window [560, 600),
    // an empty list, and B at 99.
    AttendPlan plan;
    for (int32_t pos : {599, 255, 40}) {
        plan.add({0, 0, pos + 1});
        plan.close_list();
    }
    plan.add({0, 0, 4});
    plan.add({0, 560, 600});
    plan.close_list();
    plan.close_list();
    plan.add({1, 0, 100});
    plan.close_list();
    plan.add({2, 0, 8});
    plan.add({0, 560, 600});
    plan.close_list();
    const int64_t n_rows = 7;
    const int32_t n_flat = 8;
    const std::vector<float> flat_k = cudacheck::random_floats(static_cast<size_t>(n_flat * row), 1.0f, 5),
                             flat_v = cudacheck::random_floats(flat_k.size(), 1.0f, 6);
    const float flat_bias = std::log(4.0f);
    const std::vector<float> q = cudacheck::random_floats(static_cast<size_t>(n_rows * kHeads * kHeadDim), 1.0f, 4);
    KvStreamView streams[3];
    streams[2] = flat_f32_stream(flat_k.data(), flat_v.data(), n_flat, kKvHeads, kHeadDim);
    streams[2].score_bias = flat_bias;
    for (int s = 0; s < 2; ++s) {
        streams[s].k_base = k_ref.data();
        streams[s].v_base = v_ref.data();
        streams[s].blocks = (s == 0 ? table_a : table_b).data();
        streams[s].block_tokens = kBlockTokens;
        streams[s].k = ref_layout;
        streams[s].v = ref_layout;
    }
    std::vector<float> expected(q.size());
    ThreadPool pool(2);
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
    attend_spans(q.data(), n_rows, streams, plan, {kHeads, kKvHeads, kHeadDim}, scale, expected.data(), pool);

    // The device: rows appended by kv_append, the plan flattened as the backend does (a table per
    // span here; the host-built rows after each other, K then V).
    std::vector<float> flat(flat_k);
    flat.insert(flat.end(), flat_v.begin(), flat_v.end());
    struct Flattened {
        std::vector<int32_t> offsets, spans, tables;
        int32_t max_keys = 0;
    };
    const auto flatten = [&](const AttendPlan& p, int64_t rows) {
        Flattened f;
        f.offsets.assign(p.offsets.begin(), p.offsets.end());
        for (int64_t t = 0; t < rows; ++t) {
            int32_t keys = 0;
            for (const KvSpan& sp : p.list(t)) {
                int32_t bias_bits = 0;
                if (sp.stream == 2) {
                    std::memcpy(&bias_bits, &flat_bias, 4);
                    f.spans.insert(f.spans.end(), {sp.begin, sp.end, 0, 0, n_flat * row, bias_bits});
                } else {
                    const std::vector<BlockId>& table = sp.stream == 0 ? table_a : table_b;
                    f.spans.insert(f.spans.end(), {sp.begin, sp.end, static_cast<int32_t>(f.tables.size()), -1, -1, bias_bits});
                    for (int32_t b = sp.begin / kBlockTokens; b <= (sp.end - 1) / kBlockTokens; ++b) f.tables.push_back(table[static_cast<size_t>(b)]);
                }
                keys += sp.end - sp.begin;
            }
            f.max_keys = std::max(f.max_keys, keys);
        }
        return f;
    };
    const Flattened fl = flatten(plan, n_rows);
    const std::vector<int32_t>&offsets = fl.offsets, &spans = fl.spans, &tables = fl.tables;
    const int32_t max_keys = fl.max_keys;
    cuda::DeviceBuffer dk = to_device(k), dv = to_device(v), dslots = to_device(slots), dq = to_device(q), doff = to_device(offsets),
                       dspans = to_device(spans), dtables = to_device(tables), dflat = to_device(flat);
    auto k_arena = cuda::DeviceBuffer::allocate(k_host.size()), v_arena = cuda::DeviceBuffer::allocate(v_host.size());
    auto out = cuda::DeviceBuffer::allocate(q.size() * 4);
    auto scratch = cuda::DeviceBuffer::allocate(cuda::attend_kv_scratch_bytes(n_rows, kHeads, kHeadDim, max_keys));
    CHECK(k_arena.ok() && v_arena.ok() && out.ok() && scratch.ok(), name + ": device buffers");
    if (!k_arena.ok() || !v_arena.ok() || !out.ok() || !scratch.ok()) return;
    const cuda::DeviceKvLayout dl{device_type, device_type, layout.row_bytes, layout.token_stride, layout.block_stride, layout.row_bytes, layout.token_stride,
                                  layout.block_stride, kBlockTokens, kKvHeads, kHeadDim, layout.head_stride, layout.head_stride};
    Status s = device_writes ? cuda::kv_append(dk.as<float>(), dv.as<float>(), dslots.as<int32_t>(), n_a + n_b, dl, k_arena->as<uint8_t>(),
                                               v_arena->as<uint8_t>(), nullptr)
                             : k_arena->upload(k_host.data(), k_host.size());
    if (s.ok() && !device_writes) s = v_arena->upload(v_host.data(), v_host.size());
    cuda::DeviceKvPlan dp;
    dp.offsets = doff.as<int32_t>();
    dp.spans = dspans.as<cuda::DeviceKvSpan>();
    dp.tables = dtables.as<int32_t>();
    dp.flat = dflat.as<float>();
    dp.max_keys = max_keys;
    if (s.ok()) s = cudaMemset(out->data(), 0xFF, out->size()) == cudaSuccess ? Status::ok_status() : error(StatusCode::internal, "NaN fill");
    if (s.ok()) s = cuda::attend_kv(dq.as<float>(), n_rows, kHeads, scale, dp, dl, k_arena->as<uint8_t>(), v_arena->as<uint8_t>(), scratch->as<float>(), out->as<float>(), nullptr);
    if (s.ok()) s = cuda::check(cudaDeviceSynchronize(), "attention");
    std::vector<float> got(q.size());
    std::vector<uint8_t> k_back(k_host.size()), v_back(v_host.size());
    if (s.ok()) s = out->download(got.data(), got.size() * 4);
    if (s.ok()) s = k_arena->download(k_back.data(), k_back.size());
    if (s.ok()) s = v_arena->download(v_back.data(), v_back.size());
    CHECK(s.ok(), name + ": " + s.message());
    if (!s.ok()) return;
    // The device encodes as the CPU does (q8_0: ggml's rounding): every written K and V row has the same bytes.
    int64_t rows_differing = 0;
    for (int32_t at : slots)
        for (int32_t h = 0; h < kKvHeads; ++h) {
            const int64_t off = (at / kBlockTokens) * layout.block_stride + (at % kBlockTokens) * layout.token_stride + h * layout.head_stride;
            for (const auto* pair : {&k_host, &v_host}) {
                const std::vector<uint8_t>& back = pair == &k_host ? k_back : v_back;
                rows_differing += !std::equal(pair->begin() + off, pair->begin() + off + layout.row_bytes, back.begin() + off);
            }
        }
    const auto [worst, largest] = cudacheck::difference(got, expected);
    const int64_t empty_row = 4;
    bool zeros = true;
    for (int64_t i = empty_row * kHeads * kHeadDim; i < (empty_row + 1) * kHeads * kHeadDim; ++i) zeros = zeros && got[static_cast<size_t>(i)] == 0.0f;
    std::printf("kv %-5s appended rows differing from the CPU codec's: %lld; attention: largest difference %.2e of %.2f\n", name.c_str(),
                static_cast<long long>(rows_differing), worst, largest);
    CHECK(rows_differing == 0, name + ": kv_append's rows differ from the CPU codec's");
    CHECK(worst <= 2e-4 * largest, name + ": the device attention departs from the CPU's");
    CHECK(zeros, name + ": an empty list must give zeros");

    // Plans through the tiled kernel, over the same arenas: its tiles' shared key counts as
    // expected (when given), its result as the CPU's.
    const auto check_tiled = [&](const AttendPlan& prompt, int64_t n_prompt, const std::string& what, const std::vector<int32_t>& expected_tiles) {
        const std::vector<float> pq = cudacheck::random_floats(static_cast<size_t>(n_prompt * kHeads * kHeadDim), 1.0f, 7);
        std::vector<float> p_expected(pq.size()), p_got(pq.size());
        attend_spans(pq.data(), n_prompt, streams, prompt, {kHeads, kKvHeads, kHeadDim}, scale, p_expected.data(), pool);
        std::vector<int32_t> tiles;
        CHECK(cuda::tile_shared_keys(prompt, n_prompt, kKvHeads, tiles), name + " " + what + ": the plan should take the tiled kernel");
        if (!expected_tiles.empty()) CHECK(tiles == expected_tiles, name + " " + what + ": the tiles' shared key counts");
        CHECK(cuda::attend_kv_scratch_bytes(n_prompt, kHeads, kHeadDim, 0, true) == 0, name + ": the tiled kernel needs no scratch");
        const Flattened pf = flatten(prompt, static_cast<int64_t>(prompt.offsets.size()) - 1);
        cuda::DeviceBuffer pdq = to_device(pq), pdoff = to_device(pf.offsets), pdspans = to_device(pf.spans), pdtables = to_device(pf.tables),
                           pdtiles = to_device(tiles);
        auto p_out = cuda::DeviceBuffer::allocate(pq.size() * 4);
        CHECK(p_out.ok(), name + ": device buffers");
        if (!p_out.ok()) return;
        cuda::DeviceKvPlan pp;
        pp.offsets = pdoff.as<int32_t>();
        pp.spans = pdspans.as<cuda::DeviceKvSpan>();
        pp.tables = pdtables.as<int32_t>();
        pp.flat = dflat.as<float>();
        pp.tile_shared = pdtiles.as<int32_t>();
        pp.per_kv_head = prompt.per_kv_head;
        pp.max_keys = pf.max_keys;
        Status ps = cuda::check(cudaMemset(p_out->data(), 0xFF, p_out->size()), "NaN fill");
        if (ps.ok())
            ps = cuda::attend_kv(pdq.as<float>(), n_prompt, kHeads, scale, pp, dl, k_arena->as<uint8_t>(), v_arena->as<uint8_t>(), nullptr, p_out->as<float>(), nullptr);
        if (ps.ok()) ps = cuda::check(cudaDeviceSynchronize(), "tiled attention");
        if (ps.ok()) ps = p_out->download(p_got.data(), p_got.size() * 4);
        CHECK(ps.ok(), name + " " + what + ": " + ps.message());
        if (!ps.ok()) return;
        const auto [p_worst, p_largest] = cudacheck::difference(p_got, p_expected);
        std::printf("kv %-5s tiled attention, %s (%lld rows): largest difference %.2e of %.2f\n", name.c_str(), what.c_str(),
                    static_cast<long long>(n_prompt), p_worst, p_largest);
        CHECK(p_worst <= 2e-4 * p_largest, name + " " + what + ": the tiled attention departs from the CPU's");
    };
    // A prompt: 192 rows of A reading [0, t + 1) (tile k shares 16k + 1 keys); a tile of 16 rows
    // reading the sinks and windows [500, 501 + r) (5 keys shared, across the two spans); a tile of
    // a sinks + window row and a row over the host-built rows (none shared).
    AttendPlan prompt;
    std::vector<int32_t> expected_tiles;
    for (int32_t t = 0; t < 192; ++t) {
        prompt.add({0, 0, t + 1});
        prompt.close_list();
        if (t % cuda::kAttendTileRows == 0) expected_tiles.push_back(t + 1);
    }
    for (int32_t r = 0; r < 16; ++r) {
        prompt.add({0, 0, 4});
        prompt.add({0, 500, 501 + r});
        prompt.close_list();
    }
    expected_tiles.push_back(5);
    prompt.add({0, 0, 4});
    prompt.add({0, 560, 600});
    prompt.close_list();
    prompt.add({2, 0, 8});
    prompt.add({0, 560, 600});
    prompt.close_list();
    expected_tiles.push_back(0);
    check_tiled(prompt, 210, "prompt", expected_tiles);
    // Lists per KV head (as top-k's): head 0 reads A causally, head 1 reads B.
    AttendPlan per_head;
    per_head.per_kv_head = true;
    for (int32_t t = 0; t < 40; ++t)
        for (int32_t kvh = 0; kvh < kKvHeads; ++kvh) {
            per_head.add({kvh == 0 ? 0 : 1, 0, t + 1});
            per_head.close_list();
        }
    check_tiled(per_head, 40, "per KV head", {});
}


// K rotated by the append (KeyRope) gives the same bytes as rope_rows followed by a plain
// append (both use rope_rotate.cuh's rotation), for both RoPE styles and a partial rotation;
// V is never rotated.
void check_append_rope(KvDType type, cuda::DeviceKvType device_type, RopeStyle style, int32_t n_rot) {
    const std::string name = std::string(kv_dtype_layout(type).name) + (style == RopeStyle::neox ? " neox" : " normal") + " n_rot " + std::to_string(n_rot);
    const int64_t row_bytes = static_cast<int64_t>(kv_bytes(type, kHeadDim));
    const cuda::DeviceKvLayout dl{device_type, device_type, row_bytes, row_bytes * kKvHeads, row_bytes * kKvHeads * kBlockTokens,
                                  row_bytes, row_bytes * kKvHeads, row_bytes * kKvHeads * kBlockTokens, kBlockTokens, kKvHeads, kHeadDim,
                                  row_bytes, row_bytes};   // a token's heads together (the layout flat rows use)
    const int32_t n = 37, width = kKvHeads * kHeadDim;
    std::vector<int32_t> positions(n), slots(n);
    for (int32_t t = 0; t < n; ++t) {
        positions[static_cast<size_t>(t)] = 5 + 3 * t;
        slots[static_cast<size_t>(t)] = (n - 1 - t) * 2;   // scattered, within 5 blocks
    }
    RopeParams params;
    params.n_rot = n_rot;
    params.style = style;
    RopeAngles angles;
    rope_angles(positions.data(), n, params, angles);
    const std::vector<float> k = cudacheck::random_floats(static_cast<size_t>(n * width), 1.0f, 21), v = cudacheck::random_floats(k.size(), 1.0f, 22);
    cuda::DeviceBuffer dk = to_device(k), dk_rotated = to_device(k), dv = to_device(v), dslots = to_device(slots), dcos = to_device(angles.cos),
                       dsin = to_device(angles.sin);
    const size_t arena = static_cast<size_t>(dl.k_block_stride * 5);
    const std::vector<uint8_t> zeros(arena, 0);
    cuda::DeviceBuffer k_fused = to_device(zeros), v_fused = to_device(zeros), k_apart = to_device(zeros), v_apart = to_device(zeros);
    Status s = cuda::kv_append(dk.as<float>(), dv.as<float>(), dslots.as<int32_t>(), n, dl, k_fused.as<uint8_t>(), v_fused.as<uint8_t>(), nullptr,
                               {dcos.as<float>(), dsin.as<float>(), n_rot, style == RopeStyle::neox});
    if (s.ok()) s = cuda::rope_rows(dk_rotated.as<float>(), n, width, kHeadDim, n_rot, style == RopeStyle::neox, dcos.as<float>(), dsin.as<float>(), nullptr);
    if (s.ok()) s = cuda::kv_append(dk_rotated.as<float>(), dv.as<float>(), dslots.as<int32_t>(), n, dl, k_apart.as<uint8_t>(), v_apart.as<uint8_t>(), nullptr);
    if (s.ok()) s = cuda::check(cudaDeviceSynchronize(), "append");
    std::vector<uint8_t> kf(arena), ka(arena), vf(arena), va(arena);
    if (s.ok()) s = k_fused.download(kf.data(), arena);
    if (s.ok()) s = k_apart.download(ka.data(), arena);
    if (s.ok()) s = v_fused.download(vf.data(), arena);
    if (s.ok()) s = v_apart.download(va.data(), arena);
    CHECK(s.ok(), name + ": " + s.message());
    if (!s.ok()) return;
    int64_t k_differ = 0;
    for (size_t i = 0; i < arena; ++i) k_differ += kf[i] != ka[i];
    std::printf("kv append with RoPE (%s): %lld K bytes differ from rope_rows + append\n", name.c_str(), static_cast<long long>(k_differ));
    CHECK(k_differ == 0, name + ": the fused RoPE differs from rope_rows");
    CHECK(vf == va, name + ": V must not be rotated");
    CHECK(kf != zeros, name + ": nothing appended");
}

}  // namespace

int main() {
    if (auto devices = cuda_devices(); !devices.ok()) cudacheck::skip(devices.status().message());
    check_type(KvDType::f32, cuda::DeviceKvType::f32, true);
    check_type(KvDType::f16, cuda::DeviceKvType::f16, true);
    check_type(KvDType::bf16, cuda::DeviceKvType::bf16, true);
    check_type(KvDType::q8_0, cuda::DeviceKvType::q8_0, true);
    check_type(KvDType::q4_0, cuda::DeviceKvType::q4_0, false);
    check_type(KvDType::fp8, cuda::DeviceKvType::fp8, false);
    check_type(KvDType::q2_0, cuda::DeviceKvType::q2_0, false);
    for (const RopeStyle style : {RopeStyle::normal, RopeStyle::neox}) {
        check_append_rope(KvDType::f16, cuda::DeviceKvType::f16, style, kHeadDim);
        check_append_rope(KvDType::q8_0, cuda::DeviceKvType::q8_0, style, kHeadDim);
    }
    check_append_rope(KvDType::f32, cuda::DeviceKvType::f32, RopeStyle::neox, 32);   // half the head rotated
    return cudacheck::finish();
}
