// Compressed attention: every M old tokens become one pooled entry (pooling_policy.h), and each
// query reads all of them beside the sinks and its recent window.
#include "attention/pooling_policy.h"

namespace workbench {
namespace {

class CompressedPolicy final : public PoolingPolicy {
public:
    using PoolingPolicy::PoolingPolicy;
};

AttentionVariant describe() {
    return {AttentionKind::compressed, "compressed", "every M old tokens pooled into one entry; the recent R tokens as they are",
            {integer_parameter("block", "Pool (tokens per entry)", 4, 1, 4096, "Old tokens pooled into one entry, M to 1."),
             integer_parameter("recent", "Recent (tokens)", 256, 0, 1 << 20, "The newest tokens, kept unpooled."),
             integer_parameter("sinks", "Sinks (tokens)", 0, 0, 1 << 16, "The first tokens, never pooled."),
             pool_parameter()}};
}

std::string spec_parameters(const AttentionSpec& s) {
    return ":block=" + std::to_string(s.block) + ",recent=" + std::to_string(s.recent) +
           (s.sinks ? ",sinks=" + std::to_string(s.sinks) : "") + pool_spec_part(s);
}

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<CompressedPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kCompressedPolicy{describe, spec_parameters, make};

}  // namespace workbench
