// Internal pieces of `synth` that test fixtures share (the public entry is workbench/model_file.h).
#pragma once

#include <cstdint>

#include "gguf/gguf_writer.h"

namespace workbench {

// A placeholder SentencePiece vocab of n_vocab tokens ("<unk>", "<s>", "</s>", then "t3"...):
// enough for the engine and llama.cpp to load a generated model.
void add_placeholder_vocab(GgufWriter& w, int32_t n_vocab);

}  // namespace workbench
