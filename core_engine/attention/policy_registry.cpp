// The variants the engine runs: one registration per policy file, in AttentionKind's order.
#include "attention/attention_policy.h"

namespace workbench {

extern const PolicyRegistration kFullPolicy, kSlidingPolicy, kCrossLayerPolicy, kTopkPolicy, kCompressedPolicy,
    kHeavyPolicy, kLatentPolicy, kSnapkvPolicy, kPyramidkvPolicy, kAdakvPolicy, kTovaPolicy, kKnormPolicy, kH2oPolicy;

namespace {

const PolicyRegistration* const kRegistry[] = {
    &kFullPolicy, &kSlidingPolicy, &kCrossLayerPolicy, &kTopkPolicy, &kCompressedPolicy, &kHeavyPolicy, &kLatentPolicy,
    &kSnapkvPolicy, &kPyramidkvPolicy, &kAdakvPolicy, &kTovaPolicy, &kKnormPolicy, &kH2oPolicy,
};

}  // namespace

const PolicyRegistration& policy_registration(AttentionKind kind) { return *kRegistry[static_cast<size_t>(kind)]; }

std::unique_ptr<AttentionPolicy> make_attention_policy(const AttentionSpec& spec) {
    return policy_registration(spec.kind).make(spec);
}

const std::vector<AttentionVariant>& attention_variants() {
    static const std::vector<AttentionVariant> variants = [] {
        std::vector<AttentionVariant> out;
        for (const PolicyRegistration* r : kRegistry) out.push_back(r->describe());
        return out;
    }();
    return variants;
}

}  // namespace workbench
