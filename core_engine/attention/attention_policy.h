// One attention variant as the paged KV cache runs it: what a step writes for its new tokens,
// which spans each query reads, what is released once the step is done, how it sizes the pool,
// what a sequence under it can do (fork, adopt a cached prefix, truncate), and its byte formula.
// PagedKv owns the mechanism (sequences, blocks, the store, byte accounting) and calls these
// hooks; a variant is one subclass in one file, made by make_attention_policy() (the registry).
//
// Streams a plan may index, per sequence: 0 its token cache (entry = token index; released blocks
// leave holes), 1 its pooled cache (entry = pooled group), 2 + i the policy's own extra streams.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv_blocks/attend_plan.h"
#include "model_data/rope_params.h"
#include "kv_blocks/kv_block_manager.h"
#include "kv_blocks/kv_store.h"
#include "workbench/attention.h"

namespace workbench {

class ThreadPool;
class AttentionPolicy;

constexpr int32_t kTokenStream = 0, kPooledStream = 1, kFirstExtraStream = 2;
// Most tokens one step may append to a sequence (the model's prompt chunk).
constexpr int32_t kMaxStepTokens = 256;

struct PagedKvShape {
    int32_t n_layers = 0, n_kv_heads = 0, head_dim = 0, n_head = 0;
    RopeParams rope;
    // As stored, where the row width differs by storage layer (the widest is head_dim); empty:
    // head_dim everywhere.
    std::vector<int32_t> layer_head_dim;
    // The model's latent rank per layer once its factors exist (latent:ranks=measured gives them
    // per layer); empty: the spec's rank.
    std::vector<int32_t> latent_ranks;
    float attention_scale = 0.0f;   // the query's scale before QK^T (0: 1/sqrt(head_dim)), for scores a policy computes itself
    // Values narrower than keys (head_dim_v; 0: head_dim): DeepSeek's latent attention. Absorbed,
    // one row per token holds [c | RoPE key] and V is its first head_dim_v values
    // (values_in_keys: KvCacheConfig::values_in_keys); expanded per head, V rows of head_dim_v
    // have their own arena. RoPE turns a key's values from rope_offset on (0 elsewhere: a head's
    // first n_rot values).
    bool values_in_keys = false;
    int32_t head_dim_v = 0;
    int32_t rope_offset = 0;
    int32_t head_dim_of(int32_t storage) const {
        return layer_head_dim.empty() ? head_dim : layer_head_dim[static_cast<size_t>(storage)];
    }
    // The values a V row holds: head_dim_v where set (inside the K row when values_in_keys).
    int32_t value_dim_of(int32_t storage) const { return head_dim_v > 0 ? head_dim_v : head_dim_of(storage); }
};

// What a policy keeps per sequence beyond the fields below (a press's kept rows); its own type.
struct PolicySequenceState {
    virtual ~PolicySequenceState() = default;
};

// One sequence's cache state, shared by the mechanism and its policy.
struct KvSequence {
    SeqId token_id = 0, pooled_id = 0;   // the manager's ids of the two streams
    std::vector<TokenId> tokens;
    int32_t n_pooled = 0;                // pooled groups written
    int32_t release_cursor = 0;          // token-table blocks before this were considered for release
    bool lossy = false;                  // tokens were evicted or pooled: no truncation into the past
    std::vector<float> policy_rows;      // rows the policy keeps beside the blocks (sliding: its sinks' keys)
    uint64_t read_bytes_last_step = 0;   // attention reads of its last query in the last step
    std::vector<std::vector<bool>> read_last;  // per model layer, token blocks its last query read (when marked)
    // KvTypes::recent: the f16 ring of its last tokens' rows, [storage][ring slot][kv head][head_dim]
    // (keys as stored: rotated with the quantized ones), token j in slot j % ring size.
    std::vector<uint16_t> recent_k, recent_v;
    // The policy's own state (shared by a fork's copy: policies that keep one refuse forks).
    std::shared_ptr<PolicySequenceState> policy_state;
};

// One sequence's part of the step in flight.
struct StepPart {
    KvSequence* s = nullptr;
    SeqId id = 0;
    int32_t index = 0;                   // its place in the step
    int32_t t0 = 0, n = 0, row0 = 0;     // first new token index, new tokens, first row in the step
    bool ends_prompt = false;            // its tokens end a request's prompt (StepSequence::ends_prompt)
    bool generated = false;              // its tokens were generated (StepSequence::generated)
    AttendPlan token_plan;               // built by begin_part
    uint64_t read_bytes = 0;
    uint64_t index_bytes_last = 0;       // indexer bytes of the last query, this layer
    double index_ops = 0;                // indexer operations of all its queries, this layer
    // KvTypes::recent: the policy's plan with each query's last tokens read from the ring, and the
    // ring rows this layer's write displaced that the step's queries still read (f16, token
    // displaced_first onward).
    AttendPlan recent_plan;
    std::vector<uint16_t> displaced_k, displaced_v;
    int32_t displaced_first = 0, displaced_n = 0;
};

// The mechanism's state every policy works through: the stored geometry, the block manager and
// store, and which layers share which storage. Owned by PagedKv.
struct KvArena {
    KvTypes types;
    PagedKvShape shape;                   // as stored (latent: one head of rank/2)
    bool rotate_k = false;                // keys are Hadamard-rotated before storage (4- and 2-bit K)
    bool rotate_v = false;                // values likewise (4- and 2-bit V): KvGroup::write rotates them
    int32_t tokens_per_block = 0;         // set before the pool exists (its size depends on the policy's aux bytes)
    std::vector<int32_t> owner;           // model layer → the layer whose KV it reads
    std::vector<int32_t> storage_of;      // model layer → storage index (of its owner)
    std::vector<std::vector<int32_t>> members;  // storage index → the model layers sharing it
    std::unique_ptr<KvBlockManager> manager;
    std::unique_ptr<KvStore> store;

    int32_t block_tokens() const { return tokens_per_block; }
    std::span<const BlockId> token_table(const KvSequence& s) const { return manager->block_table(s.token_id); }
    std::span<const BlockId> pooled_table(const KvSequence& s) const { return manager->block_table(s.pooled_id); }
    KvStreamView token_stream(int32_t storage, const KvSequence& s) const;
    KvStreamView pooled_stream(int32_t storage, const KvSequence& s, float score_bias) const;
    // A stream over `n_rows` contiguous f32 rows per KV head (scratch data a policy built).
    KvStreamView f32_stream(const float* k, const float* v, int32_t n_rows) const;
};

// Told of each key row as it is stored (after rotation), for an index over stored keys.
class KeyRowObserver {
public:
    virtual void key_row(int32_t storage, BlockId block, int32_t slot, int32_t head, const float* key) = 0;

protected:
    ~KeyRowObserver() = default;
};

// invalid_argument when `types` keeps a recent window in f16 that the policy's rows cannot have.
Status check_recent_window(const AttentionPolicy& policy, KvTypes types);
// invalid_argument when 4- and 2-bit rows, which the policy stores Hadamard-rotated, are not a power of two wide.
Status check_rotated_rows(const AttentionPolicy& policy, const PagedKvShape& shape, KvTypes types);
// invalid_argument naming what a policy cannot do when values are narrower than keys
// (PagedKvShape::head_dim_v, DeepSeek's latent attention): the SVD latent (the attention is latent
// already), a layer merge (it blends whole rows of one width), an f16 recent window (its ring
// keeps rows of one width); on rows whose values are inside their keys also max pooling (V would
// become each channel's largest latent). Everything else moves whole rows, V with its K.
Status check_value_rows(const AttentionPolicy& policy, const PagedKvShape& shape, KvTypes types);
// Bytes one sequence's recent-window ring takes per storage layer (0 without a window).
uint64_t recent_ring_bytes_per_layer(KvTypes types, const PagedKvShape& stored);
// A recent window's ring holds this many tokens beyond it, so a sequence cut back by at most this
// much (speculative decoding's longest draft) still has its last tokens' f16 rows.
constexpr int32_t kRecentRollback = 64;

// Encodes the rows of tokens [first_token, first_token + n) of `s` into `storage`.
void write_token_rows(KvArena& arena, int32_t storage, const KvSequence& s, int32_t first_token, const float* k,
                      const float* v, int64_t n, bool rotate, KeyRowObserver* observer = nullptr);
// The same into any table's entries [first, first + n): a policy's own rows in the pooled table.
void write_rows(KvArena& arena, int32_t storage, std::span<const BlockId> table, int32_t first, const float* k, const float* v,
                int64_t n, bool rotate, KeyRowObserver* observer = nullptr);

class AttentionPolicy {
public:
    explicit AttentionPolicy(const AttentionSpec& spec) : spec_(spec) {}
    virtual ~AttentionPolicy() = default;
    const AttentionSpec& spec() const { return spec_; }

    // -- Layout, fixed when the pool is made.
    // invalid_argument naming the parameter when the model cannot run this spec.
    virtual Status check(const PagedKvShape& model, KvTypes types) const;
    virtual PagedKvShape stored_shape(const PagedKvShape& model) const { return model; }
    virtual int32_t owner_layer(int32_t layer, int32_t /*n_layers*/) const { return layer; }
    // Its plans read token rows by token index, so KvTypes::recent may serve the last ones from
    // the f16 ring (false where stored rows are not the layer's own token rows).
    virtual bool reads_token_rows() const { return true; }
    // Whether 4- and 2-bit rows are rotated (needs a power-of-two head_dim); false where K/V rows are not stored.
    virtual bool rotates_low_bit_rows() const { return true; }
    // Index bytes kept per block beside its K and V (all storage layers).
    virtual uint64_t aux_bytes_per_block(const KvArena&) const { return 0; }
    virtual void on_pool_created(const KvArena&, int32_t /*n_blocks*/) {}
    // Most tokens one sequence holds at once when it may grow to n_ctx; pooled blocks beside them.
    virtual int64_t held_tokens_bound(int64_t n_ctx, int32_t /*block_tokens*/) const { return n_ctx; }
    virtual uint64_t pooled_blocks(uint64_t /*token_blocks*/) const { return 0; }

    // -- What a sequence under it can do.
    virtual bool unbounded_context() const { return false; }
    virtual bool can_fork() const { return true; }
    // A cached prefix's blocks are all a new sequence needs (no per-sequence state, no
    // dependence on how the prefix was chunked).
    virtual bool can_adopt_prefix() const { return true; }
    // A sequence cut back to an earlier token (keep_prefix; speculative decoding's rollback)
    // holds exactly what a fresh run of the kept tokens would. False where the cache forgets or
    // pools tokens as it goes (a cut is then exact only before the first release, and
    // keep_prefix starts the sequence over after it) or depends on how steps were chunked.
    virtual bool can_truncate() const { return true; }
    virtual bool one_sequence_per_step() const { return false; }
    virtual bool layer_computes_kv(const KvArena&, int32_t /*layer*/) const { return true; }
    // Its write stores each row at its token slot and nothing else, and its plans read no
    // queries: a backend keeping its own copy of the store may write the rows there itself.
    virtual bool writes_token_rows_only() const { return false; }
    // The token blocks each query read are marked for the block map (they may be skipped).
    virtual bool marks_read_blocks() const { return false; }
    // What a released token block holds on for the block map.
    virtual bool pools_released_blocks() const { return false; }

    // -- The step.
    // Pooled entries query t reads (sizes the pooled stream).
    virtual int32_t pooled_count(int32_t /*t*/) const { return 0; }
    // Added to every score read from the pooled stream.
    virtual float pooled_score_bias() const { return 0.0f; }
    // Builds part.token_plan and anything else the part needs before its layers run.
    virtual void begin_part(const KvArena& arena, StepPart& part);
    virtual void on_block_copied(const KvArena&, BlockId /*src*/, BlockId /*dst*/) {}
    // Pooled-table entries the step allocates beside the tokens for what on_committed() will
    // write there (a press's kept rows), so a step without room fails before it runs.
    virtual int32_t reserved_pooled_entries(const KvArena&, const KvSequence&, int32_t /*t0*/, int32_t /*n*/,
                                            bool /*ends_prompt*/) const {
        return 0;
    }
    virtual void write(KvArena& arena, int32_t layer, StepPart& part, const float* k, const float* v);
    virtual int32_t n_extra_streams(const KvArena&, int32_t /*layer*/, const StepPart&) const { return 0; }
    virtual void add_extra_streams(const KvArena&, int32_t /*layer*/, StepPart&, std::vector<KvStreamView>&) {}
    // The plan for the part's rows in `layer`; q: the part's queries. May set index_bytes_last
    // and index_ops.
    virtual const AttendPlan& plan(const KvArena&, int32_t /*layer*/, StepPart& part, const float* /*q*/, ThreadPool& /*pool*/) {
        return part.token_plan;
    }
    // The part's step is committed, before releasable() is asked (a press moves the rows it keeps).
    virtual void on_committed(KvArena&, StepPart&) {}
    // Token-table blocks [first, end) no future query reads, once the step is committed.
    virtual void releasable(const KvArena&, const KvSequence&, int32_t& /*first*/, int32_t& /*end*/) const {}
    virtual void on_truncate(KvArena&, KvSequence&, int32_t /*n_tokens*/) {}

    // -- The byte formula: what one sequence of n tokens holds and its last query reads, per
    // storage layer, after its steps are committed (block-granular, as the pool allocates).
    struct Footprint {
        int64_t token_blocks = 0, pooled_blocks = 0;  // blocks live in the two tables
        int64_t entries_read = 0;                     // entries the last query reads (per KV head)
        int64_t index_rows_read = 0;                  // index rows it scores (per KV head), each
        enum class IndexRow : uint8_t { key_range, key, token_code };
        IndexRow index_row = IndexRow::key_range;     // f16 min and max (2 · head_dim), a stored K row, or a token code
        std::string note;                             // where the engine may differ
    };
    virtual Footprint footprint(int64_t n_tokens, int32_t block_tokens) const;

protected:
    AttentionSpec spec_;
};

// An integer parameter for a variant's describe().
inline AttentionParameter integer_parameter(std::string key, std::string label, int32_t default_value, int32_t min_value,
                                            int32_t max_value, std::string help) {
    AttentionParameter p;
    p.key = std::move(key);
    p.label = std::move(label);
    p.default_value = default_value;
    p.min_value = min_value;
    p.max_value = max_value;
    p.help = std::move(help);
    return p;
}

// A choice parameter (default: the first choice) for a variant's describe().
inline AttentionParameter choice_parameter(std::string key, std::string label, std::vector<std::string> choices, std::string help) {
    AttentionParameter p;
    p.key = std::move(key);
    p.label = std::move(label);
    p.max_value = static_cast<int32_t>(choices.size()) - 1;
    p.help = std::move(help);
    p.type = AttentionParameter::Type::choice;
    p.choices = std::move(choices);
    return p;
}

// A fraction parameter (a share of something, e.g. of a prompt's tokens kept) for a variant's describe().
inline AttentionParameter fraction_parameter(std::string key, std::string label, double default_value, double min_value,
                                             double max_value, std::string help) {
    AttentionParameter p;
    p.key = std::move(key);
    p.label = std::move(label);
    p.type = AttentionParameter::Type::fraction;
    p.fraction_default = default_value;
    p.fraction_min = min_value;
    p.fraction_max = max_value;
    p.help = std::move(help);
    return p;
}

// What a variant's file registers; policy_registry.cpp lists one line per variant.
struct PolicyRegistration {
    AttentionVariant (*describe)();                              // name, parameters, defaults, help
    std::string (*spec_parameters)(const AttentionSpec& spec);  // the canonical ":key=value,..." part
    std::unique_ptr<AttentionPolicy> (*make)(const AttentionSpec& spec);
};
const PolicyRegistration& policy_registration(AttentionKind kind);

std::unique_ptr<AttentionPolicy> make_attention_policy(const AttentionSpec& spec);

// One policy and the model layers it runs (empty: every layer).
struct LayerGroupPlan {
    AttentionSpec spec;
    std::vector<int32_t> layers;
};
// The groups of a layout on a model of n_layers: a single term runs every layer itself (a
// cross_layer range included); otherwise each term its layers, the term without layers= the
// rest, and full attention any layer left. invalid_argument naming a layer out of range, a
// layer named twice or a term left with none.
Result<std::vector<LayerGroupPlan>> resolve_attention_layout(const AttentionLayout& layout, int32_t n_layers);

}  // namespace workbench
