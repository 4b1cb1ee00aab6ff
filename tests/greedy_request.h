// The request most engine tests make: greedy decoding of n tokens, running the full length unless
// asked to stop at the end-of-sequence token.
#pragma once

#include "workbench/engine.h"

namespace wbtest {

inline workbench::GenerationRequest greedy(int n, bool stop_at_eos = false) {
    workbench::GenerationRequest r;
    r.max_tokens = n;
    r.sampling.temperature = 0;
    r.ignore_eos = !stop_at_eos;
    return r;
}

}  // namespace wbtest
