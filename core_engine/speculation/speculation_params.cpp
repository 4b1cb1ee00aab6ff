// SpeculationParams' names and limits (workbench/config.h).
#include <string>

#include "workbench/config.h"

namespace workbench {

const char* draft_kind_name(DraftKind kind) {
    switch (kind) {
        case DraftKind::off: return "off";
        case DraftKind::lookup: return "lookup";
        case DraftKind::model: return "model";
    }
    return "off";
}

Status check_speculation(const SpeculationParams& params) {
    if (params.kind == DraftKind::off) return {};
    // One verification step must fit a step's per-sequence limit; beyond this drafts rarely survive anyway.
    constexpr int32_t kMaxDraft = 64, kMaxNgram = 16;
    if (params.draft_max < 1 || params.draft_max > kMaxDraft)
        return error(StatusCode::invalid_argument, "draft_max must be between 1 and " + std::to_string(kMaxDraft) + " (got " +
                                                       std::to_string(params.draft_max) + ")");
    if (params.kind == DraftKind::lookup && (params.ngram < 1 || params.ngram > kMaxNgram))
        return error(StatusCode::invalid_argument, "draft ngram must be between 1 and " + std::to_string(kMaxNgram) + " (got " +
                                                       std::to_string(params.ngram) + ")");
    return {};
}

}  // namespace workbench
