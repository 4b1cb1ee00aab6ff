// Eviction presses (SnapKV, PyramidKV, AdaKV, TOVA, KNorm, H2O; one file each names its method and
// parameters): full attention until a request's prompt has been read; then each layer and KV head
// keeps the prompt tokens its method ranks highest (`keep` of them; the newest `window` always,
// for H2O the newest half of its budget),
// and the others are evicted. The kept rows are copied, as stored, into the sequence's pooled
// blocks, where each (layer, KV head) is a lane of its own length packed end to end with the
// others (a block's rows in any layer's arena take any lane's rows), and the token blocks they
// came from are released: the bytes held fall by what was evicted. Tokens after the prompt's last
// whole block stay where they are. A follow-up prompt on the same sequence (the next chat turn)
// is read over what was kept and pressed in its turn, once at least `min_prompt` tokens are
// unpressed: a short turn, or a question read after its pressed context, is kept whole. Question-aware: the pressing step's
// queries (the end of the prompt, where the question is) choose what stays.
// Decode-time (TOVA, H2O, `decoding=evict`): while the sequence generates, each whole block of
// generated tokens competes with the lanes' rows for the lanes' places, so the bytes held stay
// at the prompt's budget however long the reply; the lanes are rewritten in place (one round).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention_policy.h"

namespace workbench {

enum class PressScore : uint8_t {
    window_attention,   // SnapKV: the last `window` queries' attention, pooled over neighbours
    last_query,         // TOVA: the last query's attention, averaged over every head
    key_norm,           // KNorm: small key norms first (no queries needed)
    accumulated_attention,   // H2O: the attention each token received from every query since it was cached
};
enum class PressBudget : uint8_t {
    uniform,    // every layer and head keeps the same count
    pyramid,    // PyramidKV: more in the first layers, fewer in the last
    adaptive,   // AdaKV: a layer's heads share its count by score
};
struct PressMethod {
    PressScore score = PressScore::window_attention;
    PressBudget budget = PressBudget::uniform;
    bool decode_time = false;   // the method also evicts while generating (its `decoding` parameter)
};

std::unique_ptr<AttentionPolicy> make_press_policy(const AttentionSpec& spec, PressMethod method);

// The parameters of a press, for its describe(): keep, window (where it observes a window of
// queries), min_prompt, decoding (where it evicts while generating).
std::vector<AttentionParameter> press_parameters(PressMethod method);
// ":keep=F", ",window=W" where the press observes a window of queries, and ",min_prompt=N" and
// ",decoding=grow" where they are not the defaults.
std::string press_spec_parameters(const AttentionSpec& spec, PressMethod method);

}  // namespace workbench
