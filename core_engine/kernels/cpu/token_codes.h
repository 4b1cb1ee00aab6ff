// Token codes: the per-token index a token-granular top-k selection scores every candidate by.
// A key row is Hadamard-rotated (which spreads its outlier channels over all dimensions) and each
// dimension kept as one of four levels, (c − 1.5) · step, with the step Lloyd's uniform optimum
// for a Gaussian of the row's RMS. A query scores a code through a table per code byte (product
// quantization's asymmetric distance): head_dim / 4 loads and adds a candidate.
#pragma once

#include <cstdint>

namespace workbench {

// Bytes of one row's code: head_dim / 4 code bytes (dimension 4j + i in bits 2i of byte j), then
// the step in f16. head_dim must be a power of two, at least 4.
constexpr int64_t token_code_bytes(int64_t head_dim) { return head_dim / 4 + 2; }
constexpr int64_t token_code_table_floats(int64_t head_dim) { return head_dim / 4 * 256; }

void encode_token_code(const float* key, int64_t head_dim, uint8_t* code);

// The table for the sum of n_rows query rows (q: n_rows × head_dim, as the keys were before
// their rotation): entry [j][b] = Σ_i q̂[4j + i] · (((b >> 2i) & 3) − 1.5), q̂ the rotated sum.
void token_code_table(const float* q, int64_t n_rows, int64_t head_dim, float* table);

// ≈ Σ over the table's rows of q · key for the coded key.
float token_code_score(const float* table, const uint8_t* code, int64_t head_dim);

}  // namespace workbench
