// Attention over span lists, per (query token, KV head): the query heads that share a KV head (GQA) are handled
// together, so each cached K and V row is converted from f16 once for all of them. Scores for one
// query live in a row of length ≤ context (O(T) memory, never a T×T matrix); softmax subtracts
// the max, exponentiates eight lanes at a time and sums in double; each result depends only on
// its own inputs, whatever the batch.
#include "kernels/cpu/attention.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <cmath>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/vector_math.h"
#include "kv_cache/kv_row_codec.h"

namespace workbench {
namespace {

constexpr int kMaxGroup = 16;  // query heads per KV head handled together

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

}  // namespace

namespace {

constexpr int64_t kQueryTile = 4;   // queries of one KV head sharing each loaded K/V row
constexpr int64_t kMaxAcc = 12;     // (query, head) accumulators kept in registers

// One key's K and V rows, resolved: f16 and f32 rows are read in place, any other type is decoded
// once into the tile's scratch and read as f32.
struct KeyRef {
    const void* k;
    const void* v;
    bool k16, v16;
    float bias;
};

inline __m256 load8(const void* row, bool is_f16, int64_t i) {
    return is_f16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)))
                  : _mm256_loadu_ps(static_cast<const float*>(row) + i);
}
inline float load1(const void* row, bool is_f16, int64_t i) {
    return is_f16 ? half_to_float(static_cast<const uint16_t*>(row)[i]) : static_cast<const float*>(row)[i];
}

// Appends the keys of spans [first, last) (the last one cut to [begin, end_cut)) to `refs`,
// decoding non-f16 rows into `scratch` (reserved big enough by the caller).
void resolve(std::span<const KvSpan> list, size_t n_spans, int32_t last_end, std::span<const KvStreamView> streams,
             int64_t kvh, int64_t hd, std::vector<KeyRef>& refs, std::vector<float>& scratch, size_t& used) {
    for (size_t si = 0; si < n_spans; ++si) {
        const KvSpan& sp = list[si];
        const KvStreamView& st = streams[static_cast<size_t>(sp.stream)];
        const bool k16 = st.k.type == KvDType::f16, v16 = st.v.type == KvDType::f16;
        const bool k32 = st.k.type == KvDType::f32, v32 = st.v.type == KvDType::f32;
        const int32_t end = si + 1 == n_spans ? last_end : sp.end;
        // Walk block by block: one table lookup and no division per key.
        int64_t blk = sp.begin / st.block_tokens, slot = sp.begin % st.block_tokens;
        const uint8_t* kb = st.k_base + st.blocks[blk] * st.k.block_stride + kvh * st.k.row_bytes;
        const uint8_t* vb = st.v_base + st.blocks[blk] * st.v.block_stride + kvh * st.v.row_bytes;
        for (int64_t j = sp.begin; j < end; ++j, ++slot) {
            if (slot == st.block_tokens) {
                slot = 0;
                ++blk;
                kb = st.k_base + st.blocks[blk] * st.k.block_stride + kvh * st.k.row_bytes;
                vb = st.v_base + st.blocks[blk] * st.v.block_stride + kvh * st.v.row_bytes;
            }
            const uint8_t* kr = kb + slot * st.k.token_stride;
            const uint8_t* vr = vb + slot * st.v.token_stride;
            KeyRef r{kr, vr, k16, v16, st.score_bias};
            if (!k16 && !k32) {
                kv_decode_row(st.k.type, kr, &scratch[used], hd);
                r.k = &scratch[used];
                used += static_cast<size_t>(hd);
            }
            if (!v16 && !v32) {
                kv_decode_row(st.v.type, vr, &scratch[used], hd);
                r.v = &scratch[used];
                used += static_cast<size_t>(hd);
            }
            refs.push_back(r);
        }
    }
}


// Scores of NQ (query, head) rows against each key, one FMA chain per pair. NQ is a template
// argument so the chains live in registers (a runtime count spills them to the stack).
template <int NQ>
void score_rows(const KeyRef* keys, int64_t n, const float* qr, int64_t hd, float* out, int64_t out_stride, float scale) {
    for (int64_t j = 0; j < n; ++j) {
        const KeyRef& r = keys[j];
        __m256 acc[NQ];
#pragma GCC unroll 12
        for (int k = 0; k < NQ; ++k) acc[k] = _mm256_setzero_ps();
        for (int64_t i = 0; i < hd; i += 8) {
            const __m256 kv = load8(r.k, r.k16, i);
#pragma GCC unroll 12
            for (int k = 0; k < NQ; ++k) acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(qr + k * hd + i), kv, acc[k]);
        }
#pragma GCC unroll 12
        for (int k = 0; k < NQ; ++k) out[k * out_stride + j] = hsum(acc[k]) * scale + r.bias;
    }
}

using ScoreFn = void (*)(const KeyRef*, int64_t, const float*, int64_t, float*, int64_t, float);
template <int... N>
constexpr std::array<ScoreFn, sizeof...(N)> score_table(std::integer_sequence<int, N...>) { return {&score_rows<N + 1>...}; }
constexpr auto kScoreRows = score_table(std::make_integer_sequence<int, 12>{});

// Adds Σ_j p[k][j] · V_j[i0 .. i0 + 8·NL) to acc[k·NL + c], key by key in order.
template <int NQ, int NL>
void value_rows(const KeyRef* keys, int64_t n, const float* p, int64_t p_stride, int64_t i0, __m256* acc) {
    __m256 a[NQ * NL];
#pragma GCC unroll 12
    for (int k = 0; k < NQ * NL; ++k) a[k] = acc[k];
    for (int64_t j = 0; j < n; ++j) {
        const KeyRef& r = keys[j];
#pragma GCC unroll 8
        for (int c = 0; c < NL; ++c) {
            const __m256 vv = load8(r.v, r.v16, i0 + 8 * c);
#pragma GCC unroll 12
            for (int k = 0; k < NQ; ++k) a[k * NL + c] = _mm256_fmadd_ps(_mm256_set1_ps(p[k * p_stride + j]), vv, a[k * NL + c]);
        }
    }
#pragma GCC unroll 12
    for (int k = 0; k < NQ * NL; ++k) acc[k] = a[k];
}

using ValueFn = void (*)(const KeyRef*, int64_t, const float*, int64_t, int64_t, __m256*);

// The lane groups a pass keeps per (query, head): the most that fit the registers and divide the
// head's 8-lane chunks.
int64_t lane_groups(int64_t nqh, int64_t chunks) {
    for (int64_t nl : {8, 4, 2, 1})
        if (nl * nqh <= kMaxAcc && chunks % nl == 0) return nl;
    return 1;
}

ValueFn value_fn(int64_t nqh, int64_t nl) {
    switch (nqh * 16 + nl) {
    case 1 * 16 + 8: return &value_rows<1, 8>;
    case 1 * 16 + 4: return &value_rows<1, 4>;
    case 1 * 16 + 2: return &value_rows<1, 2>;
    case 1 * 16 + 1: return &value_rows<1, 1>;
    case 2 * 16 + 4: return &value_rows<2, 4>;
    case 2 * 16 + 2: return &value_rows<2, 2>;
    case 2 * 16 + 1: return &value_rows<2, 1>;
    case 3 * 16 + 4: return &value_rows<3, 4>;
    case 3 * 16 + 2: return &value_rows<3, 2>;
    case 3 * 16 + 1: return &value_rows<3, 1>;
    case 4 * 16 + 2: return &value_rows<4, 2>;
    case 4 * 16 + 1: return &value_rows<4, 1>;
    case 5 * 16 + 2: return &value_rows<5, 2>;
    case 5 * 16 + 1: return &value_rows<5, 1>;
    case 6 * 16 + 2: return &value_rows<6, 2>;
    case 6 * 16 + 1: return &value_rows<6, 1>;
    case 7 * 16 + 1: return &value_rows<7, 1>;
    case 8 * 16 + 1: return &value_rows<8, 1>;
    case 9 * 16 + 1: return &value_rows<9, 1>;
    case 10 * 16 + 1: return &value_rows<10, 1>;
    case 11 * 16 + 1: return &value_rows<11, 1>;
    case 12 * 16 + 1: return &value_rows<12, 1>;
    default: return nullptr;
    }
}

int64_t decoded_rows_bound(std::span<const KvSpan> list) {
    int64_t n = 0;
    for (const KvSpan& sp : list) n += sp.end - sp.begin;
    return 2 * n;
}

}  // namespace

void attend_spans(const float* q, int64_t n_tokens, std::span<const KvStreamView> streams, const AttendPlan& plan,
                  const AttentionShape& s, float scale, float* out, ThreadPool& pool) {
    const int64_t group = s.n_head / s.n_head_kv;
    const int64_t hd = s.head_dim;
    const bool simd = hd % 8 == 0 && hd <= 128;
    // Queries are tiled so each K/V row loaded serves several of them; per (query, head, key)
    // the arithmetic is exactly the untiled one, so tiling never changes a result.
    const int64_t tile = simd && group * kQueryTile <= kMaxAcc ? kQueryTile : 1;
    const int64_t n_tiles = (n_tokens + tile - 1) / tile;
    pool.run(n_tiles * s.n_head_kv, [&](int64_t item) {
        const int64_t t0 = (item / s.n_head_kv) * tile, kvh = item % s.n_head_kv;
        const int64_t nq = std::min(tile, n_tokens - t0);
        std::span<const KvSpan> lists[kQueryTile];
        int64_t n_keys[kQueryTile];
        for (int64_t a = 0; a < nq; ++a) {
            lists[a] = plan.list(plan.per_kv_head ? (t0 + a) * s.n_head_kv + kvh : t0 + a);
            n_keys[a] = 0;
            for (const KvSpan& sp : lists[a]) n_keys[a] += sp.end - sp.begin;
        }
        // The keys every query of the tile reads first, in the same order: whole equal spans,
        // then the shortest tail of the first span that differs only in its end.
        size_t n_common_spans = 0;
        int32_t common_last_end = 0;
        int64_t n_common = 0;
        for (;; ++n_common_spans) {
            if (n_common_spans >= lists[0].size()) break;
            const KvSpan& s0 = lists[0][n_common_spans];
            int32_t end = s0.end;
            bool same = true;
            for (int64_t a = 1; a < nq && same; ++a) {
                if (n_common_spans >= lists[a].size()) { same = false; break; }
                const KvSpan& sa = lists[a][n_common_spans];
                if (sa.stream != s0.stream || sa.begin != s0.begin) same = false;
                else end = std::min(end, sa.end);
            }
            if (!same) break;
            n_common += end - s0.begin;
            common_last_end = end;
            bool whole = true;
            for (int64_t a = 0; a < nq; ++a) whole = whole && lists[a][n_common_spans].end == end;
            if (!whole) { ++n_common_spans; break; }
        }
        if (n_common_spans > 0 && common_last_end == 0) common_last_end = lists[0][n_common_spans - 1].end;

        thread_local std::vector<KeyRef> common, rest;
        thread_local std::vector<float> scratch, scores, qr;
        int64_t bound = 0;
        for (int64_t a = 0; a < nq; ++a) bound += decoded_rows_bound(lists[a]);
        if (static_cast<int64_t>(scratch.size()) < bound * hd) scratch.resize(static_cast<size_t>(bound * hd));
        size_t used = 0;
        common.clear();
        resolve(lists[0], n_common_spans, common_last_end, streams, kvh, hd, common, scratch, used);

        int64_t max_keys = 1;
        for (int64_t a = 0; a < nq; ++a) max_keys = std::max(max_keys, n_keys[a]);
        const int64_t n_qh = nq * group;  // (query, head) pairs: index a * group + g
        scores.resize(static_cast<size_t>(n_qh * max_keys));
        qr.resize(static_cast<size_t>(n_qh * hd));
        // Q and the softmax weights are rounded to f16, as llama.cpp's CPU path does when it
        // multiplies them with the f16 cache; matching it keeps our logits within its noise.
        for (int64_t a = 0; a < nq; ++a)
            for (int64_t g = 0; g < group; ++g)
                for (int64_t i = 0; i < hd; ++i)
                    qr[(a * group + g) * hd + i] = half_to_float(float_to_half(q[((t0 + a) * s.n_head + kvh * group + g) * hd + i]));

        // Scores. Each is one FMA chain over the head's dimensions, 8 lanes wide, then the same
        // horizontal sum: the order of these additions shows in the logits (see
        // tests/core_engine/model/test_model_oracle.cpp).
        auto score_keys = [&](const KeyRef* keys, int64_t n, int64_t col0, int64_t qh0, int64_t qh1) {
            for (int64_t j = 0; j < n && !simd; ++j) {
                const KeyRef& r = keys[j];
                {
                    for (int64_t qh = qh0; qh < qh1; ++qh) {
                        float dot = 0;
                        for (int64_t i = 0; i < hd; ++i) dot += qr[qh * hd + i] * load1(r.k, r.k16, i);
                        scores[qh * max_keys + col0 + j] = dot * scale + r.bias;
                    }
                }
            }
            if (simd) kScoreRows[static_cast<size_t>(qh1 - qh0 - 1)](keys, n, &qr[qh0 * hd], hd, &scores[qh0 * max_keys + col0], max_keys, scale);
        };
        for (int64_t qh0 = 0; qh0 < n_qh; qh0 += kMaxAcc) score_keys(common.data(), n_common, 0, qh0, std::min(n_qh, qh0 + kMaxAcc));
        // Each query's own keys after the common ones.
        std::pair<size_t, size_t> rest_range[kQueryTile];  // per query: its own keys in `rest` (no allocation per item)
        rest.clear();
        for (int64_t a = 0; a < nq; ++a) {
            const size_t r0 = rest.size();
            // The remainder of the list: the cut span's tail, then the spans after it.
            std::span<const KvSpan> list = lists[a];
            size_t si = n_common_spans;
            if (si > 0 && list[si - 1].end > common_last_end) {
                KvSpan tail = list[si - 1];
                tail.begin = common_last_end;
                resolve(std::span(&tail, 1), 1, tail.end, streams, kvh, hd, rest, scratch, used);
            }
            if (si < list.size()) resolve(list.subspan(si), list.size() - si, list.back().end, streams, kvh, hd, rest, scratch, used);
            rest_range[static_cast<size_t>(a)] = {r0, rest.size()};
            score_keys(rest.data() + r0, static_cast<int64_t>(rest.size() - r0), n_common, a * group, (a + 1) * group);
        }

        for (int64_t a = 0; a < nq; ++a) {
            const int64_t nk = n_keys[a];
            for (int64_t g = 0; g < group; ++g) {
                float* sc = &scores[(a * group + g) * max_keys];
                if (nk == 0) continue;
                const float mx = *std::max_element(sc, sc + nk);
                double sum = 0;
                int64_t j = 0;
                for (; j + 8 <= nk; j += 8) {
                    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(sc + j), _mm256_set1_ps(mx)));
                    _mm256_storeu_ps(sc + j, e);
                    alignas(32) float lanes[8];
                    _mm256_store_ps(lanes, e);
                    for (float v : lanes) sum += v;
                }
                for (; j < nk; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
                const float inv = static_cast<float>(1.0 / sum);
                for (j = 0; j < nk; ++j) sc[j] = half_to_float(float_to_half(sc[j] * inv));
            }
        }

        // Values: per 8 output lanes, the tile's accumulators stay in registers while the common
        // rows stream past, then each query adds its own rows — per output the same key order.
        for (int64_t a = 0; a < nq; ++a)
            if (n_keys[a] == 0) std::fill(out + (t0 + a) * s.n_head * hd + kvh * group * hd, out + (t0 + a) * s.n_head * hd + (kvh + 1) * group * hd, 0.0f);
        if (!simd) {
            for (int64_t a = 0; a < nq; ++a) {
                if (n_keys[a] == 0) continue;
                for (int64_t g = 0; g < group; ++g) {
                    float* og = out + ((t0 + a) * s.n_head + kvh * group + g) * hd;
                    const float* p = &scores[(a * group + g) * max_keys];
                    std::fill(og, og + hd, 0.0f);
                    for (int64_t j = 0; j < n_keys[a]; ++j) {
                        const KeyRef& r = j < n_common ? common[static_cast<size_t>(j)] : rest[rest_range[static_cast<size_t>(a)].first + static_cast<size_t>(j - n_common)];
                        for (int64_t i = 0; i < hd; ++i) og[i] += p[j] * load1(r.v, r.v16, i);
                    }
                }
            }
            return;
        }
        // Each pass keeps (query-head, 8 lanes) accumulators for as many lane groups as the
        // registers allow, so a decode step reads each V row in one or two passes; per output
        // lane the keys are added in list order, the common ones first. The common rows pass
        // once for the whole tile; then each query continues its own heads' sums (reloaded from
        // `out`, the same values) over its own rows, with as many lanes per pass as its heads
        // leave room for — in a batched decode step every key is a query's own, and one head at
        // a time would read each V row 8 times per head.
        auto out_at = [&](int64_t a, int64_t g, int64_t i) { return out + ((t0 + a) * s.n_head + kvh * group + g) * hd + i; };
        if (n_common > 0)
            for (int64_t qh0 = 0; qh0 < n_qh; qh0 += kMaxAcc) {
                const int64_t qh1 = std::min(n_qh, qh0 + kMaxAcc), nqh = qh1 - qh0;
                const int64_t nl = lane_groups(nqh, hd / 8);
                const ValueFn common_fn = value_fn(nqh, nl);
                for (int64_t i0 = 0; i0 < hd; i0 += 8 * nl) {
                    __m256 acc[kMaxAcc];
                    for (int64_t k = 0; k < nqh * nl; ++k) acc[k] = _mm256_setzero_ps();
                    common_fn(common.data(), n_common, &scores[qh0 * max_keys], max_keys, i0, acc);
                    for (int64_t qh = qh0; qh < qh1; ++qh)
                        for (int64_t c = 0; c < nl; ++c) _mm256_storeu_ps(out_at(qh / group, qh % group, i0 + 8 * c), acc[(qh - qh0) * nl + c]);
                }
            }
        for (int64_t a = 0; a < nq; ++a) {
            const auto [r0, r1] = rest_range[static_cast<size_t>(a)];
            if (n_keys[a] == 0 || r1 == r0) continue;
            for (int64_t g0 = 0; g0 < group; g0 += kMaxAcc) {
                const int64_t nh = std::min(group - g0, kMaxAcc);
                const int64_t nl = lane_groups(nh, hd / 8);
                const ValueFn rest_fn = value_fn(nh, nl);
                for (int64_t i0 = 0; i0 < hd; i0 += 8 * nl) {
                    __m256 acc[kMaxAcc];
                    for (int64_t h = 0; h < nh; ++h)
                        for (int64_t c = 0; c < nl; ++c)
                            acc[h * nl + c] = n_common > 0 ? _mm256_loadu_ps(out_at(a, g0 + h, i0 + 8 * c)) : _mm256_setzero_ps();
                    rest_fn(rest.data() + r0, static_cast<int64_t>(r1 - r0), &scores[(a * group + g0) * max_keys + n_common], max_keys, i0, acc);
                    for (int64_t h = 0; h < nh; ++h)
                        for (int64_t c = 0; c < nl; ++c) _mm256_storeu_ps(out_at(a, g0 + h, i0 + 8 * c), acc[h * nl + c]);
                }
            }
        }
    });
}

}  // namespace workbench
