// Attention variants as a caller names them: the --attention grammar, every variant's parameters
// (defaults, ranges, help) and the canonical spec string the session database keys on. The engine
// runs exactly what it parses.
//   full | sliding:window=W,sinks=S | cross_layer:group=G[,layers=A-B][,merge=none|mean|slerp]
//   | topk:k=K[,recent=R] | compressed:block=M,recent=R[,sinks=S] | heavy:block=M,k=K,recent=R[,sinks=S]
//   | latent:rank=R
// Omitted parameters take the variant's defaults (attention_variants()). Pure: no model needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/status.h"

namespace workbench {

enum class AttentionKind : uint8_t { full, sliding, cross_layer, topk, compressed, heavy, latent };
enum class LayerMerge : uint8_t { none, mean, slerp };

struct AttentionSpec {
    AttentionKind kind = AttentionKind::full;
    int32_t window = 1020, sinks = 4;            // sliding; compressed/heavy: first tokens never pooled
    int32_t group = 2;                           // cross_layer
    int32_t first_layer = 0, last_layer = -1;    // cross_layer range, inclusive; -1: the last layer
    LayerMerge merge = LayerMerge::none;         // cross_layer
    int32_t k = 1024;                            // topk: tokens; heavy: pooled entries
    int32_t block = 4;                           // compressed / heavy: tokens pooled into one entry
    int32_t recent = 64;                         // topk / compressed / heavy: newest tokens always read as they are
    int32_t rank = 96;                           // latent
};

// One parameter of a variant, as a form shows it.
struct AttentionParameter {
    enum class Type : uint8_t { integer, layer_range, choice };
    std::string key;          // as the grammar spells it: "window"
    std::string label;        // "Window (tokens)"
    int32_t default_value = 0;               // integer; choice: index into choices
    int32_t min_value = 0;                   // integer: the parser refuses less
    int32_t max_value = 0;                   // integer: a form's upper end (the model limits it at load)
    std::string help;         // one sentence: what it trades
    Type type = Type::integer;
    std::vector<std::string> choices;        // choice
};

struct AttentionVariant {
    AttentionKind kind = AttentionKind::full;
    std::string name;         // "sliding"
    std::string summary;      // one line for a tooltip or --help
    std::vector<AttentionParameter> parameters;  // in the order the canonical spec names them
};

// The seven variants, in the order the engine lists them.
const std::vector<AttentionVariant>& attention_variants();
const AttentionVariant& attention_variant(AttentionKind kind);
// The spec with `kind`'s defaults.
AttentionSpec default_attention_spec(AttentionKind kind);

// invalid_argument naming the bad part and what is accepted.
Result<AttentionSpec> parse_attention_spec(std::string_view spec);
// Every parameter of the kind, so the string parses back to the same spec.
std::string attention_spec_name(const AttentionSpec& spec);
const char* attention_kind_name(AttentionKind kind);

}  // namespace workbench
