// Attention over span lists, FlashAttention-style, per (query tile, KV head): keys stream in
// blocks of kKeyBlock by their index in the list; each block yields a partial (its max, the sum of
// e^(s − max) and the weighted values) that merges into the row's state in list order, so a
// worker holds one block of scores and decoded rows (never a context-long row, never T×T). The
// query heads sharing a KV head (GQA) and up to kQueryTile queries go together over the keys their
// lists share (in a causal prompt all but the last few), so each loaded K/V row serves all of
// them. A decode step's few units are cut into block ranges on different threads, their partials
// merged afterwards by the same merge. Block edges depend only on a key's index in its own list,
// and per (query, head) every operation is the same whichever queries share the tile and however
// the blocks are spread over threads: a result never depends on the batch or the thread count.
#include "kernels/cpu/attention.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/cpu/attention_blocks.h"
#include "tensor/half_convert.h"
#include "kv_blocks/kv_row_codec.h"
#include "tensor/dequantize.h"

namespace workbench {
namespace {
constexpr int64_t kQueryTile = 4;   // queries of one KV head sharing each loaded K/V row
constexpr int64_t kKeyBlock = 128;  // keys per online-softmax step
using namespace attention_blocks;

// A position in a list of spans, moved forward key by key in list order.
struct KeyCursor {
    std::span<const KvSpan> list;
    size_t span = 0;
    int32_t entry = 0;  // the next key: an entry of list[span]

    void start(std::span<const KvSpan> l) {
        list = l;
        span = 0;
        entry = l.empty() ? 0 : l[0].begin;
    }
    void step(int32_t to) {  // to ≤ list[span].end
        entry = to;
        if (entry == list[span].end && ++span < list.size()) entry = list[span].begin;
    }
    void skip(int64_t n) {
        while (n > 0 && span < list.size()) {
            const int32_t to = static_cast<int32_t>(std::min<int64_t>(list[span].end, entry + n));
            n -= to - entry;
            step(to);
        }
    }
};

// q8_0, q4_0 and q2_0 keys are scored by int8 dot products in place (their blocks need whole
// 32-value rows).
Int8Key int8_keys_of(const KvStreamView& st, int64_t hd) {
    if (hd % 32 != 0) return Int8Key::none;
    switch (st.k.type) {
    case KvDType::q8_0: return Int8Key::q8_0;
    case KvDType::q4_0: return Int8Key::q4_0;
    case KvDType::q2_0: return Int8Key::q2_0;
    default: return Int8Key::none;
    }
}

// Appends the cursor's next `n` keys to `refs` and moves past them; rows of types other than
// f16/f32 (int8-scored keys apart) are decoded into `scratch` from `used` on (the caller sized it for 2·n rows).
void resolve_next(KeyCursor& c, int64_t n, std::span<const KvStreamView> streams, int64_t kvh, int64_t hd, int64_t hdv,
                  std::vector<KeyRef>& refs, std::vector<float>& scratch, size_t& used) {
    while (n > 0 && c.span < c.list.size()) {
        const KvSpan& sp = c.list[c.span];
        const KvStreamView& st = streams[static_cast<size_t>(sp.stream)];
        const bool k16 = st.k.type == KvDType::f16, v16 = st.v.type == KvDType::f16;
        const bool k32 = st.k.type == KvDType::f32, v32 = st.v.type == KvDType::f32;
        const Int8Key k8 = int8_keys_of(st, hd);
        const int32_t end = static_cast<int32_t>(std::min<int64_t>(sp.end, c.entry + n));
        // Walk block by block: one table lookup and no division per key.
        int64_t blk = c.entry / st.block_tokens, slot = c.entry % st.block_tokens;
        const uint8_t* kb = st.k_base + st.blocks[blk] * st.k.block_stride + kvh * st.k.head_stride;
        const uint8_t* vb = st.v_base + st.blocks[blk] * st.v.block_stride + kvh * st.v.head_stride;
        for (int64_t j = c.entry; j < end; ++j, ++slot) {
            if (slot == st.block_tokens) {
                slot = 0;
                ++blk;
                kb = st.k_base + st.blocks[blk] * st.k.block_stride + kvh * st.k.head_stride;
                vb = st.v_base + st.blocks[blk] * st.v.block_stride + kvh * st.v.head_stride;
            }
            const uint8_t* kr = kb + slot * st.k.token_stride;
            const uint8_t* vr = vb + slot * st.v.token_stride;
            KeyRef r{kr, vr, k16, v16, k8, st.score_bias};
            if (!k16 && !k32 && k8 == Int8Key::none) {
                kv_decode_row(st.k.type, kr, &scratch[used], hd);
                r.k = &scratch[used];
                used += static_cast<size_t>(hd);
            }
            if (!v16 && !v32) {
                kv_decode_row(st.v.type, vr, &scratch[used], hdv);
                r.v = &scratch[used];
                used += static_cast<size_t>(hdv);
            }
            refs.push_back(r);
        }
        n -= end - c.entry;
        c.step(end);
    }
}

// How many keys, from the first, every list of the tile reads in the same order.
int64_t common_prefix(const std::span<const KvSpan>* lists, int64_t nq) {
    int64_t n = 0;
    for (size_t si = 0; si < lists[0].size(); ++si) {
        const KvSpan& s0 = lists[0][si];
        int32_t end = s0.end;
        for (int64_t a = 1; a < nq; ++a) {
            if (si >= lists[a].size()) return n;
            const KvSpan& sa = lists[a][si];
            if (sa.stream != s0.stream || sa.begin != s0.begin) return n;
            end = std::min(end, sa.end);
        }
        n += end - s0.begin;
        for (int64_t a = 0; a < nq; ++a)
            if (lists[a][si].end != end) return n;  // one list goes on past `end`: the rest differs
    }
    return n;
}

// Scores of NQ (query, head) rows against each key, one FMA chain per pair. NQ is a template
// argument so the chains live in registers (a runtime count spills them to the stack).
// Folds block b's partial (its own max m_b, sum l_b = Σ e^(s − m_b) and values acc_b) into a row's
// state (max m, sum l, values in o): the one place blocks meet, used in list order by every path.
inline void merge_block(float& m, double& l, float* o, float m_b, double l_b, const float* acc_b, int64_t hd) {
    const float m_new = std::max(m, m_b);
    const float a = m == -INFINITY ? 0.0f : std::exp(m - m_new), c = std::exp(m_b - m_new);
    int64_t i = 0;
    if (hd % 8 == 0)
        for (; i < hd; i += 8)
            _mm256_storeu_ps(o + i, _mm256_fmadd_ps(_mm256_loadu_ps(acc_b + i), _mm256_set1_ps(c), _mm256_mul_ps(_mm256_loadu_ps(o + i), _mm256_set1_ps(a))));
    for (; i < hd; ++i) o[i] = std::fma(acc_b[i], c, o[i] * a);
    l = l * a + l_b * c;
    m = m_new;
}

// What a row's values are multiplied by once its keys are folded (max m, sum l): 1/l, or with a
// sink logit z the softmax that also counts e^z: e^(m − m')/(l·e^(m − m') + e^(z − m')), m' = max(m, z).
inline float row_normaliser(float m, double l, const float* sink) {
    if (!sink) return static_cast<float>(1.0 / l);
    const float m_new = std::max(m, *sink);
    const double a = std::exp(static_cast<double>(m - m_new));
    return static_cast<float>(a / (l * a + std::exp(static_cast<double>(*sink - m_new))));
}

}  // namespace

void attend_spans(const float* q, int64_t n_tokens, std::span<const KvStreamView> streams, const AttendPlan& plan,
                  const AttentionShape& s, float scale, float* out, ThreadPool& pool, std::span<const float> sink_logits) {
    auto sink_of = [&](int64_t head) { return sink_logits.empty() ? nullptr : &sink_logits[static_cast<size_t>(head)]; };
    const int64_t group = s.n_head / s.n_head_kv;
    const int64_t hd = s.head_dim, hdv = s.value_dim();
    const bool simd = hd % 8 == 0, simd_v = hdv % 8 == 0;
    // Queries are tiled so each K/V row loaded serves several of them; per (query, head, key)
    // the arithmetic is exactly the untiled one, so tiling never changes a result.
    const int64_t tile = simd && group * kQueryTile <= kMaxAcc ? kQueryTile : 1;
    const bool any_q8_keys =
        std::any_of(streams.begin(), streams.end(), [&](const KvStreamView& st) { return int8_keys_of(st, hd) != Int8Key::none; });
    const int64_t n_tiles = (n_tokens + tile - 1) / tile;
    const int64_t n_units = n_tiles * s.n_head_kv;  // (tile, KV head)
    auto list_of = [&](int64_t t, int64_t kvh) { return plan.list(plan.per_kv_head ? t * s.n_head_kv + kvh : t); };
    auto keys_of = [](std::span<const KvSpan> list) {
        int64_t n = 0;
        for (const KvSpan& sp : list) n += sp.end - sp.begin;
        return n;
    };
    // Few units (a decode step) leave threads idle over long lists: then each unit's blocks are
    // cut into ranges computed apart, their partials kept and merged in list order afterwards —
    // the same merges a unit computed whole makes, so the split never shows in a result.
    int64_t max_blocks = 1;
    if (n_units < 2 * pool.n_threads())
        for (int64_t t = 0; t < n_tokens; ++t)
            for (int64_t kvh = 0; kvh < (plan.per_kv_head ? s.n_head_kv : 1); ++kvh)
                max_blocks = std::max(max_blocks, (keys_of(list_of(t, kvh)) + kKeyBlock - 1) / kKeyBlock);
    // As many ranges as make the items a multiple of the threads: 3 KV heads cut in 3 on 2
    // threads left one thread a ninth of the step idle.
    int64_t ranges = n_units < 2 * pool.n_threads() ? (4 * pool.n_threads() + n_units - 1) / n_units : 1;
    while (ranges > 1 && (n_units * ranges) % pool.n_threads() != 0) ++ranges;
    ranges = std::min(ranges, max_blocks);
    const int64_t rows_per_unit = tile * group;
    // Split partials: per (unit, block, row) the max, the sum and hd values.
    thread_local std::vector<float> part_m, part_acc;
    thread_local std::vector<double> part_l;
    if (ranges > 1) {
        const size_t n_parts = static_cast<size_t>(n_units * max_blocks * rows_per_unit);
        part_m.assign(n_parts, -INFINITY);  // -inf: the row has no key in that block
        part_l.assign(n_parts, 0.0);
        part_acc.resize(n_parts * static_cast<size_t>(hdv));
    }
    float* const pm = part_m.data();
    double* const pl = part_l.data();
    float* const pacc = part_acc.data();
    // A split unit's ranges still to finish: the range that finishes last merges the unit's
    // partials, in list order, inside the same parallel region (no extra barrier per layer).
    thread_local std::vector<int32_t> ranges_left;
    if (ranges > 1) ranges_left.assign(static_cast<size_t>(n_units), static_cast<int32_t>(ranges));
    int32_t* const left = ranges_left.data();
    auto merge_unit = [&](int64_t unit) {
        const int64_t t0 = (unit / s.n_head_kv) * tile, kvh = unit % s.n_head_kv;
        for (int64_t qh = 0; qh < rows_per_unit && t0 + qh / group < n_tokens; ++qh) {
            float* o = out + ((t0 + qh / group) * s.n_head + kvh * group + qh % group) * hdv;
            std::fill(o, o + hdv, 0.0f);
            float m = -INFINITY;
            double l = 0;
            for (int64_t b = 0; b < max_blocks; ++b) {
                const size_t at = static_cast<size_t>((unit * max_blocks + b) * rows_per_unit + qh);
                if (pm[at] != -INFINITY) merge_block(m, l, o, pm[at], pl[at], pacc + at * static_cast<size_t>(hdv), hdv);
            }
            if (l == 0) continue;  // an empty list: zeros
            const float inv = row_normaliser(m, l, sink_of(kvh * group + qh % group));
            for (int64_t i = 0; i < hdv; ++i) o[i] *= inv;
        }
    };

    pool.run(n_units * ranges, [&](int64_t item) {
        const int64_t unit = item / ranges, range = item % ranges;
        const int64_t t0 = (unit / s.n_head_kv) * tile, kvh = unit % s.n_head_kv;
        const int64_t nq = std::min(tile, n_tokens - t0);
        const int64_t n_qh = nq * group;  // (query, head) rows: index a · group + g
        std::span<const KvSpan> lists[kQueryTile];
        int64_t n_keys[kQueryTile];
        int64_t max_keys = 0;
        for (int64_t a = 0; a < nq; ++a) {
            lists[a] = list_of(t0 + a, kvh);
            n_keys[a] = keys_of(lists[a]);
            max_keys = std::max(max_keys, n_keys[a]);
        }
        const int64_t n_common = common_prefix(lists, nq);
        const int64_t unit_blocks = (max_keys + kKeyBlock - 1) / kKeyBlock;
        const int64_t b_begin = ranges > 1 ? range * max_blocks / ranges : 0;
        const int64_t b_end = ranges > 1 ? std::min(unit_blocks, (range + 1) * max_blocks / ranges) : unit_blocks;

        thread_local std::vector<KeyRef> common, own[kQueryTile];
        thread_local std::vector<float> scratch, scores, qr, block_acc, row_max;
        thread_local std::vector<double> row_sum;
        thread_local std::vector<float*> out_rows;  // per (query, head) row: no division in the inner loops
        out_rows.resize(static_cast<size_t>(n_qh));
        for (int64_t qh = 0; qh < n_qh; ++qh) {
            out_rows[qh] = out + ((t0 + qh / group) * s.n_head + kvh * group + qh % group) * hdv;
            if (ranges == 1) std::fill(out_rows[qh], out_rows[qh] + hdv, 0.0f);
        }
        scratch.resize(static_cast<size_t>(kKeyBlock * (nq + 1) * (hd + hdv)));
        scores.resize(static_cast<size_t>(n_qh * kKeyBlock));
        qr.resize(static_cast<size_t>(n_qh * hd));
        block_acc.resize(static_cast<size_t>(n_qh * hdv));
        row_max.assign(static_cast<size_t>(n_qh), -INFINITY);
        row_sum.assign(static_cast<size_t>(n_qh), 0.0);
        auto acc_row = [&](int64_t qh) { return block_acc.data() + qh * hdv; };
        // Q is rounded to f16, as llama.cpp's CPU path does when it multiplies it with the f16
        // cache; matching it keeps our logits within its noise.
        for (int64_t a = 0; a < nq; ++a)
            for (int64_t g = 0; g < group; ++g)
                for (int64_t i = 0; i < hd; ++i)
                    qr[(a * group + g) * hd + i] = half_to_float(float_to_half(q[((t0 + a) * s.n_head + kvh * group + g) * hd + i]));

        // The query rows as q8_0 blocks (their steps as floats), for int8-scored keys.
        thread_local std::vector<uint8_t> q8, q8_row;
        thread_local std::vector<const uint8_t*> q8_rows;
        if (any_q8_keys) {
            const int64_t n_blocks = hd / 32, row_bytes = n_blocks * kQueryBlockBytes;
            q8.resize(static_cast<size_t>(n_qh * row_bytes));
            q8_row.resize(static_cast<size_t>(n_blocks * Q8Keys::kBlockBytes));   // quantize_row's q8_0 blocks
            q8_rows.resize(static_cast<size_t>(n_qh));
            for (int64_t qh = 0; qh < n_qh; ++qh) {
                quantize_row(DType::q8_0, &qr[qh * hd], q8_row.data(), hd);
                query_blocks_from_q8_0(q8_row.data(), &q8[qh * row_bytes], n_blocks);
                q8_rows[qh] = &q8[qh * row_bytes];
            }
        }

        // Scores of rows [r0, r1) against n keys, into columns col0.. of their score rows. Each is
        // one FMA chain over the head's dimensions, 8 lanes wide, then the same horizontal sum:
        // the order of these additions shows in the logits (tests/core_engine/model/test_model_oracle.cpp).
        // Quantized keys go by runs of one format to int8_scores.
        auto score_f = [&](const KeyRef* keys, int64_t n, int64_t col0, int64_t r0, int64_t r1) {
            for (int64_t g0 = r0; g0 < r1; g0 += kMaxAcc) {
                const int64_t g1 = std::min(r1, g0 + kMaxAcc);
                if (simd) {
                    kScoreRows[static_cast<size_t>(g1 - g0 - 1)](keys, n, &qr[g0 * hd], hd, &scores[g0 * kKeyBlock + col0], kKeyBlock, scale);
                    continue;
                }
                for (int64_t j = 0; j < n; ++j)
                    for (int64_t qh = g0; qh < g1; ++qh) {
                        float dot = 0;
                        for (int64_t i = 0; i < hd; ++i) dot += qr[qh * hd + i] * load1(keys[j].k, keys[j].k16, i);
                        scores[qh * kKeyBlock + col0 + j] = dot * scale + keys[j].bias;
                    }
            }
        };
        auto score = [&](const KeyRef* keys, int64_t n, int64_t col0, int64_t r0, int64_t r1) {
            if (!any_q8_keys) return score_f(keys, n, col0, r0, r1);
            for (int64_t j0 = 0; j0 < n;) {
                const Int8Key k8 = keys[j0].k8;
                int64_t j1 = j0 + 1;
                while (j1 < n && keys[j1].k8 == k8) ++j1;
                if (k8 != Int8Key::none) int8_scores(keys + j0, j1 - j0, &q8_rows[r0], r1 - r0, hd, &scores[r0 * kKeyBlock + col0 + j0], kKeyBlock, scale);
                else score_f(keys + j0, j1 - j0, col0 + j0, r0, r1);
                j0 = j1;
            }
        };
        // Adds Σ p·V over n keys (score columns col0..) to rows [r0, r1) of the block's values.
        // Per output lane the keys are added in list order; a block split between calls changes
        // nothing (the sums pass through block_acc exactly).
        auto add_values = [&](const KeyRef* keys, int64_t n, int64_t col0, int64_t r0, int64_t r1) {
            if (!simd_v) {
                for (int64_t qh = r0; qh < r1; ++qh) {
                    float* o = acc_row(qh);
                    const float* p = &scores[qh * kKeyBlock + col0];
                    for (int64_t j = 0; j < n; ++j)
                        for (int64_t i = 0; i < hdv; ++i) o[i] += p[j] * load1(keys[j].v, keys[j].v16, i);
                }
                return;
            }
            const int64_t pass_rows = value_pass_rows(hdv / 8);
            for (int64_t g0 = r0; g0 < r1; g0 += pass_rows) {
                const int64_t g1 = std::min(r1, g0 + pass_rows), nqh = g1 - g0;
                const int64_t nl = lane_groups(nqh, hdv / 8);
                const ValueFn fn = value_fn(nqh, nl);
                for (int64_t i0 = 0; i0 < hdv; i0 += 8 * nl) {
                    __m256 acc[kMaxAcc];
                    for (int64_t k = 0; k < nqh; ++k)
                        for (int64_t c = 0; c < nl; ++c) acc[k * nl + c] = _mm256_loadu_ps(acc_row(g0 + k) + i0 + 8 * c);
                    fn(keys, n, &scores[g0 * kKeyBlock + col0], kKeyBlock, i0, acc);
                    for (int64_t k = 0; k < nqh; ++k)
                        for (int64_t c = 0; c < nl; ++c) _mm256_storeu_ps(acc_row(g0 + k) + i0 + 8 * c, acc[k * nl + c]);
                }
            }
        };

        KeyCursor common_keys, own_keys[kQueryTile];
        common_keys.start(lists[0]);
        common_keys.skip(std::min(b_begin * kKeyBlock, n_common));
        for (int64_t a = 0; a < nq; ++a) {
            own_keys[a].start(lists[a]);
            own_keys[a].skip(std::min(b_begin * kKeyBlock, n_keys[a]));
        }
        for (int64_t b = b_begin; b < b_end; ++b) {
            const int64_t j0 = b * kKeyBlock, j1 = std::min(j0 + kKeyBlock, max_keys);
            // The block's shared keys [j0, jc) once for the tile, then each query's own [jc, its end).
            const int64_t jc = std::clamp(n_common, j0, j1);
            size_t used = 0;
            common.clear();
            resolve_next(common_keys, jc - j0, streams, kvh, hd, hdv, common, scratch, used);
            score(common.data(), jc - j0, 0, 0, n_qh);
            for (int64_t a = 0; a < nq; ++a) {
                own[a].clear();
                own_keys[a].skip(jc - j0);
                resolve_next(own_keys[a], std::min(j1, n_keys[a]) - jc, streams, kvh, hd, hdv, own[a], scratch, used);
                score(own[a].data(), static_cast<int64_t>(own[a].size()), jc - j0, a * group, (a + 1) * group);
            }
            // Each row's block: its own max, weights e^(s − max), their sum, then the values.
            thread_local std::vector<float> bm;
            thread_local std::vector<double> bs;
            bm.resize(static_cast<size_t>(n_qh));
            bs.resize(static_cast<size_t>(n_qh));
            for (int64_t qh = 0; qh < n_qh; ++qh) {
                const int64_t nb = std::min(j1, n_keys[qh / group]) - j0;
                bm[qh] = -INFINITY;
                if (nb <= 0) continue;
                float* sc = &scores[qh * kKeyBlock];
                bm[qh] = block_max(sc, nb);
                bs[qh] = exponentiate(sc, nb, bm[qh]);
                std::fill(acc_row(qh), acc_row(qh) + hdv, 0.0f);
            }
            if (jc > j0) add_values(common.data(), jc - j0, 0, 0, n_qh);
            for (int64_t a = 0; a < nq; ++a)
                if (!own[a].empty()) add_values(own[a].data(), static_cast<int64_t>(own[a].size()), jc - j0, a * group, (a + 1) * group);
            for (int64_t qh = 0; qh < n_qh; ++qh) {
                if (bm[qh] == -INFINITY) continue;
                if (ranges == 1) {
                    merge_block(row_max[qh], row_sum[qh], out_rows[qh], bm[qh], bs[qh], acc_row(qh), hdv);
                } else {
                    const size_t at = static_cast<size_t>((unit * max_blocks + b) * rows_per_unit + qh);
                    pm[at] = bm[qh];
                    pl[at] = bs[qh];
                    std::copy(acc_row(qh), acc_row(qh) + hdv, pacc + at * static_cast<size_t>(hdv));
                }
            }
        }
        // acq_rel: the last range sees every other range's partials.
        if (ranges > 1 && std::atomic_ref<int32_t>(left[unit]).fetch_sub(1, std::memory_order_acq_rel) == 1) merge_unit(unit);
        if (ranges == 1)
            for (int64_t qh = 0; qh < n_qh; ++qh) {
                if (row_sum[qh] == 0) continue;  // an empty list: zeros
                const float inv = row_normaliser(row_max[qh], row_sum[qh], sink_of(kvh * group + qh % group));
                float* o = out_rows[qh];
                for (int64_t i = 0; i < hdv; ++i) o[i] *= inv;
            }
    });
}

void unrotate_attention_rows(float* out, int64_t n_tokens, const AttentionShape& shape, ThreadPool& pool) {
    const int64_t hd = shape.value_dim();
    const int64_t rows = n_tokens * shape.n_head;
    auto unrotate = [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) hadamard_rotate(out + r * hd, hd);
    };
    // A decode step's few head rows take well under a microsecond: inline, a pool round costs more.
    if (rows * hd <= 16384) unrotate(0, rows);
    else pool.parallel_for(rows, unrotate);
}

}  // namespace workbench
