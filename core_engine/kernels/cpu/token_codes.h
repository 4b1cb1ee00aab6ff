// Token codes: the per-token index a token-granular top-k selection scores every candidate by.
// A key row is Hadamard-rotated (which spreads its outlier channels over all dimensions) and each
// dimension kept as one of four levels, (c − 1.5) · step, with the step Lloyd's uniform optimum
// for a Gaussian of the row's RMS (or a neighbour of it that restores the row better). Codes of a
// group of 16 tokens lie together, byte j of each next to each other, so a query scores the group
// with byte shuffles: its table holds, per 2-dimension nibble, the 16 possible partial sums in int8
// (product quantization's asymmetric distance, in the "fast scan" form).
#pragma once

#include <cstdint>

namespace workbench {

constexpr int32_t kTokenCodeGroup = 16;

// Bytes of one token's code (head_dim / 4 code bytes and an f16 step) and of a group of 16 laid
// out as [byte j][token] then [token] steps. head_dim: a power of two from 4 to 512.
constexpr int64_t token_code_bytes(int64_t head_dim) { return head_dim / 4 + 2; }
constexpr int64_t token_code_group_bytes(int64_t head_dim) { return kTokenCodeGroup * token_code_bytes(head_dim); }
constexpr bool token_codes_fit(int64_t head_dim) { return head_dim >= 4 && head_dim <= 512 && (head_dim & (head_dim - 1)) == 0; }

// Writes the code of `key` as token `slot` of `group`.
void encode_token_code(const float* key, int64_t head_dim, uint8_t* group, int32_t slot);

// The table for the sum of n_rows query rows (q: n_rows × head_dim, as the keys were before
// their rotation): head_dim / 2 nibble tables of 16 int8 sums, then their f32 scale.
constexpr int64_t token_code_table_bytes(int64_t head_dim) { return head_dim / 2 * 16 + 4; }
void token_code_table(const float* q, int64_t n_rows, int64_t head_dim, uint8_t* table);

// ≈ Σ over the table's rows of q · key for each of the group's 16 coded keys, into out[16].
void token_code_scores(const uint8_t* table, const uint8_t* group, int64_t head_dim, float* out);

}  // namespace workbench
