// The --attention SPEC of the seven variants, parsed and printed in one canonical form (the
// benchmark rows, the GUI and the session database key on it):
//   full | sliding:window=W,sinks=S | cross_layer:group=G[,layers=A-B][,merge=none|mean|slerp]
//   | topk:k=K[,recent=R] | compressed:block=M,recent=R[,sinks=S] | heavy:block=M,k=K,recent=R[,sinks=S]
//   | latent:rank=R
// Omitted parameters take the defaults below. Pure parsing: no model needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "workbench/status.h"

namespace workbench {

enum class AttentionKind : uint8_t { full, sliding, cross_layer, topk, compressed, heavy, latent };
enum class LayerMerge : uint8_t { none, mean, slerp };

struct AttentionSpec {
    AttentionKind kind = AttentionKind::full;
    int32_t window = 1020, sinks = 4;            // sliding; compressed/heavy: first tokens never pooled (default 0)
    int32_t group = 2;                           // cross_layer
    int32_t first_layer = 0, last_layer = -1;    // cross_layer range, inclusive; -1: the last layer
    LayerMerge merge = LayerMerge::none;         // cross_layer
    int32_t k = 1024;                            // topk: tokens; heavy: pooled entries
    int32_t block = 4;                           // compressed / heavy: tokens pooled into one entry
    int32_t recent = 64;                         // topk / compressed / heavy: newest tokens always read as they are
    int32_t rank = 96;                           // latent
};

// invalid_argument naming the bad part and what is accepted.
Result<AttentionSpec> parse_attention_spec(std::string_view spec);
// Every parameter of the kind, so the string parses back to the same spec.
std::string attention_spec_name(const AttentionSpec& spec);
const char* attention_kind_name(AttentionKind kind);

}  // namespace workbench
