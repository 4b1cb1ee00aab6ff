// Reads a TokenizerVocab from a GGUF file's tokenizer.ggml.* metadata, applying the defaults
// llama.cpp applies when a key is absent (SentencePiece vocabs add BOS and a space prefix; byte-level
// BPE ones add BOS only for pre-tokenizers that expect it). Ids are checked against the vocab size.
#pragma once

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "workbench/status.h"

namespace workbench {

// Errors: not_found (no tokenizer.ggml.model, tokens or, for gpt2, merges), invalid_file (a key
// with the wrong type, an id past the vocabulary, array lengths that disagree), unsupported
// (a tokenizer model other than gpt2/llama). Messages name the key and the value found.
Result<TokenizerVocab> load_tokenizer_vocab(const GgufFile& file);

}  // namespace workbench
