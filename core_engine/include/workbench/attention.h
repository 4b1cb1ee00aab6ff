// Attention variants as a caller names them: the --attention grammar, every variant's parameters
// (defaults, ranges, help), the canonical spec string the session database keys on, per-layer
// layouts, and the KV bytes a configuration holds and reads at a given context, worked out from
// the model's KV geometry alone. The CLI, the GUI's configuration panel and Compare rows all use
// this one header; the engine runs exactly what it parses.
//   full | sliding:window=W,sinks=S | cross_layer:group=G[,layers=A-B][,merge=none|mean|slerp]
//   | topk:k=K[,recent=R][,select=block|token] | compressed:block=M,recent=R[,sinks=S][,pool=mean|max|weighted]
//   | heavy:block=M,k=K,recent=R[,sinks=S][,pool=…][,read=pooled|tokens][,around=A]
//   | latent:rank=R[,rope=P][,balance=energy|none][,ranks=uniform|measured][,form=rebuild|absorbed][,pick=norm|frequency][,heads=joint|each]
//   | snapkv|pyramidkv|adakv:keep=F,window=W | knorm:keep=F | tova|h2o:keep=F[,decoding=evict|grow]
//     (eviction presses: F of a prompt's tokens kept; each also takes min_prompt=N, the fewest
//     unpressed tokens a prompt is pressed at; TOVA and H2O go on evicting while they generate)
// Omitted parameters take the variant's defaults (attention_variants()). Pure: no model needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbench/status.h"

namespace workbench {

enum class AttentionKind : uint8_t { full, sliding, cross_layer, topk, compressed, heavy, latent, snapkv, pyramidkv, adakv, tova, knorm, h2o };
enum class LayerMerge : uint8_t { none, mean, slerp };
enum class TopkSelect : uint8_t { block, token };
enum class PoolMode : uint8_t { mean, max, weighted };
enum class PooledRead : uint8_t { pooled, tokens };
enum class LatentBalance : uint8_t { energy, none };
enum class LatentRanks : uint8_t { uniform, measured };
enum class LatentForm : uint8_t { rebuild, absorbed };
enum class LatentPick : uint8_t { norm, frequency };
enum class LatentHeads : uint8_t { joint, each };
enum class PressDecoding : uint8_t { evict, grow };

struct AttentionSpec {
    AttentionKind kind = AttentionKind::full;
    int32_t window = 1020, sinks = 4;            // sliding; compressed/heavy: first tokens never pooled; presses: observed queries
    int32_t group = 2;                           // cross_layer
    int32_t first_layer = 0, last_layer = -1;    // cross_layer range, inclusive; -1: the last layer
    LayerMerge merge = LayerMerge::none;         // cross_layer
    int32_t k = 1024;                            // topk: tokens; heavy: pooled entries
    TopkSelect select = TopkSelect::block;       // topk: Quest's blocks, or tokens by their codes
    int32_t block = 4;                           // compressed / heavy: tokens pooled into one entry
    int32_t recent = 64;                         // topk / compressed / heavy: newest tokens always read as they are
    PoolMode pool = PoolMode::mean;              // compressed / heavy: how a group's rows become one entry
    PooledRead read = PooledRead::pooled;        // heavy: the selected groups' pooled entries, or their tokens
    int32_t around = 0;                          // heavy, read=tokens: tokens read beside each selected group
    int32_t rank = 96;                           // latent
    int32_t rope_pairs = 0;                      // latent: RoPE pairs per KV head kept exact beside the latent
    LatentBalance balance = LatentBalance::energy;  // latent: K scaled to V's energy before the joint SVD
    LatentRanks ranks = LatentRanks::uniform;    // latent: R in every layer, or per layer by measured sensitivity (R on average)
    LatentForm form = LatentForm::rebuild;       // latent: K rebuilt every step, or U_k folded into the queries (kept pairs exact, the rest position-free)
    LatentPick pick = LatentPick::norm;          // latent: which RoPE pairs rope=P keeps, by MHA2MLA's norm score or the fastest-turning
    LatentHeads heads = LatentHeads::joint;      // latent: one latent for all KV heads, or R / n_kv_heads values for each
    double keep = 1.0;                           // presses: the fraction of a prompt's tokens kept once it is read
    int32_t min_prompt = 128;                    // presses: fewer tokens unpressed than this are kept whole (a short turn, a question)
    PressDecoding decoding = PressDecoding::evict;  // tova / h2o: generated tokens compete for the prompt's budget, or are all kept
};

// One parameter of a variant, as a form shows it.
struct AttentionParameter {
    enum class Type : uint8_t { integer, layer_range, choice, fraction };
    std::string key;          // as the grammar spells it: "window"
    std::string label;        // "Window (tokens)"
    int32_t default_value = 0;               // integer; choice: index into choices
    int32_t min_value = 0;                   // integer: the parser refuses less
    int32_t max_value = 0;                   // integer: a form's upper end (the model limits it at load)
    std::string help;         // one sentence: what it trades
    Type type = Type::integer;
    std::vector<std::string> choices;        // choice
    double fraction_default = 0, fraction_min = 0, fraction_max = 1;  // fraction: the parser refuses values outside
};

struct AttentionVariant {
    AttentionKind kind = AttentionKind::full;
    std::string name;         // "sliding"
    std::string summary;      // one line for a tooltip or --help
    std::vector<AttentionParameter> parameters;  // in the order the canonical spec names them
};

// The variants, in the order the engine lists them (AttentionKind's).
const std::vector<AttentionVariant>& attention_variants();
const AttentionVariant& attention_variant(AttentionKind kind);
// The spec with `kind`'s defaults.
AttentionSpec default_attention_spec(AttentionKind kind);

// invalid_argument naming the bad part and what is accepted.
Result<AttentionSpec> parse_attention_spec(std::string_view spec);
// Every parameter of the kind, so the string parses back to the same spec.
std::string attention_spec_name(const AttentionSpec& spec);
const char* attention_kind_name(AttentionKind kind);
// The eviction presses (snapkv, pyramidkv, adakv, tova, knorm, h2o): full attention while a prompt is
// read, then the tokens they rank lowest are evicted from the cache.
bool is_eviction_press(AttentionKind kind);
// A fraction parameter as a spec writes it: the shortest text that reads back as `value` ("0.25").
std::string fraction_text(double value);

// Policies chosen per layer: terms joined by ';', each naming its layers with `layers=` (ranges
// A-B or single layers joined by '+'); at most one term leaves them out and takes every layer
// no other term names; layers no term takes run full attention.
//   "sliding:window=512,sinks=4,layers=0-9+20-29;topk:k=256"
// A cross_layer term's layers=A-B is its sharing range as in a single spec (one range). latent
// runs on every layer or none. A single term without layers= is the single spec above.
struct AttentionTerm {
    AttentionSpec spec;
    std::vector<std::pair<int32_t, int32_t>> layers;  // inclusive ranges; empty: the layers left over
};
using AttentionLayout = std::vector<AttentionTerm>;
Result<AttentionLayout> parse_attention_layout(std::string_view spec);
// The canonical string: each term's spec name, with its layers where it names them.
std::string attention_layout_name(const AttentionLayout& layout);

// A model's trained attention pattern (Gemma 3): its local layers attend over the newest
// `window` tokens only (a query reads itself and the window − 1 before it); the others are
// global. No local layers: every layer global.
struct NativeAttention {
    int32_t window = 0;
    std::vector<int32_t> local_layers;  // ascending
};
// The layout such a model runs for `layout`: its local layers keep their trained window (a
// sliding term without sinks) and the terms of `layout` apply to its global layers — a term
// without layers= takes the global layers no other term names. Refused with the reason: a term
// naming a local layer, cross_layer (neighbouring layers attend differently) and latent (every
// layer or none). With no local layers, `layout` itself.
Result<AttentionLayout> apply_native_attention(const AttentionLayout& layout, const NativeAttention& native, int32_t n_layers);
// "local layers 0-4+6-10+12-16 (window 512), global 5+11+17"; empty when every layer is global.
std::string native_attention_name(const NativeAttention& native, int32_t n_layers);

// The KV element types (--kv-type): "f32", "f16", "bf16", "q8_0", "q4_0", "fp8", "q2_0".
const std::vector<std::string>& kv_type_names();
// Most tokens a --kv-type recent window keeps in f16 (longer: choose a wider type instead).
constexpr int32_t kMaxRecentKvTokens = 4096;
// A --kv-type spec's parts: the K and V type names and the recent window kept in f16 (0: none).
struct KvTypesParts {
    std::string k, v;
    int32_t recent = 0;
};
// "f16" → {f16, f16, 0}; "k=q8_0,v=q4_0,recent=128" → {q8_0, q4_0, 128}; invalid_argument naming
// the bad part.
Result<KvTypesParts> split_kv_types(std::string_view kv_types);
// The canonical spec: "f16" when K and V agree, else "k=q8_0,v=q4_0"; then ",recent=N" when set.
std::string kv_types_spec(std::string_view k_type, std::string_view v_type, int32_t recent = 0);
// Whether a type name is block-quantized (q8_0, q4_0, fp8, q2_0): a recent window applies to it.
bool kv_type_is_quantized(std::string_view type);

// The KV cache's geometry as the GGUF gives it (no weights needed).
struct KvGeometry {
    int32_t n_layers = 0, n_kv_heads = 0, head_dim = 0;
    int32_t n_head = 0;          // query heads (0: n_kv_heads); the byte figures do not depend on it
    int32_t block_tokens = 16;   // the engine's KV block
    // Latent attention (DeepSeek's MLA): values of head_dim_v (0: head_dim), the first of each K
    // row when values_in_keys (stored once), else rows of their own; RoPE on a key from rope_offset.
    bool values_in_keys = false;
    int32_t head_dim_v = 0, rope_offset = 0;
    NativeAttention native;      // trained local layers, applied before the layout (apply_native_attention)
    int32_t n_rot = 0;           // RoPE dimensions of a head (0: head_dim); the latent's rope= needs them all
};

// What one sequence holding `n_tokens` tokens costs under a layout, once its steps are done:
// exactly what the engine's KvUsage reports for such a sequence (the same blocks, rounding and
// index data), so the two differ only when the engine held the tokens differently (see note).
struct KvPrediction {
    uint64_t bytes_held = 0;       // blocks held, index data included (KvUsage::bytes_in_use)
    uint64_t bytes_read = 0;       // what its last query reads in all layers (bytes_read_last_step)
    uint64_t bytes_full = 0;       // full attention with the same KV types (bytes_full)
    uint64_t bytes_full_read = 0;  // what full attention's last query reads
    int64_t blocks_held = 0;       // blocks held, over all groups of layers
    // Where a measured figure may differ from these, in words (empty: nowhere).
    std::string note;
};

// invalid_argument for KV types that do not parse, or a layout this geometry cannot run (a
// latent rank, a layer range, a variant its trained local layers refuse), named as loading the
// model would name them. bytes_full stays every layer global at the given KV types.
Result<KvPrediction> predict_kv(const AttentionLayout& layout, std::string_view kv_types, const KvGeometry& geometry,
                                int64_t n_tokens);

}  // namespace workbench
