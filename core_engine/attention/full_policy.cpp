// Full attention: every query reads every token before it; nothing is released. The smallest
// policy: AttentionPolicy's defaults are full attention, so this file only names it.
#include "attention/attention_policy.h"

namespace workbench {
namespace {

class FullPolicy final : public AttentionPolicy {
public:
    using AttentionPolicy::AttentionPolicy;
    bool writes_token_rows_only() const override { return true; }
};

AttentionVariant describe() {
    return {AttentionKind::full, "full", "every token keeps its K and V; each query reads them all", {}};
}

std::string spec_parameters(const AttentionSpec&) { return ""; }

std::unique_ptr<AttentionPolicy> make(const AttentionSpec& spec) { return std::make_unique<FullPolicy>(spec); }

}  // namespace

extern const PolicyRegistration kFullPolicy{describe, spec_parameters, make};

}  // namespace workbench
