// Latent factors per layer: dequantize W_k and W_v, stack them, factor with the calibration
// activations, and keep the factors as f32 matrices the CPU matmul reads in place.
#include "attention/latent_kv.h"

#include "attention/latent_factorization.h"
#include "tensor/dequantize.h"

#include <cmath>

namespace workbench {
namespace {

void dequantize_matrix(const WeightTensor& t, float* out) {
    for (int64_t r = 0; r < t.n_out; ++r) dequantize_row(t.type, t.row(r), out + r * t.n_in, t.n_in);
}

bool pack_f32(std::vector<float>& data, int64_t n_out, int64_t n_in, PackedMatrix& out) {
    WeightTensor t;
    t.type = DType::f32;
    t.data = reinterpret_cast<const uint8_t*>(data.data());
    t.n_in = n_in;
    t.n_out = n_out;
    t.n_bytes = static_cast<uint64_t>(n_in * n_out) * sizeof(float);
    return pack_matrix(t, out);
}

}  // namespace

Result<std::vector<LatentLayer>> build_latent_layers(const ModelWeights& w, const ModelHparams& hp,
                                                     const std::vector<std::vector<float>>& inputs, int32_t n_samples,
                                                     int32_t rank, const std::function<void(int, int)>& progress) {
    const int64_t n_kv = hp.n_embd_kv(), n_embd = hp.n_embd;
    if (rank < 1 || rank > std::min<int64_t>(2 * n_kv, n_embd))
        return error(StatusCode::invalid_argument, "--attention latent:rank=" + std::to_string(rank) + ": expected 1.." +
                                                       std::to_string(std::min<int64_t>(2 * n_kv, n_embd)) +
                                                       " (the stacked K/V projection is " + std::to_string(2 * n_kv) + " × " +
                                                       std::to_string(n_embd) + ")");
    std::vector<LatentLayer> layers(static_cast<size_t>(hp.n_layer));
    std::vector<float> stacked(static_cast<size_t>(2 * n_kv * n_embd));
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& lw = w.layers[static_cast<size_t>(il)];
        dequantize_matrix(lw.wk, stacked.data());
        dequantize_matrix(lw.wv, stacked.data() + n_kv * n_embd);
        WB_ASSIGN_OR_RETURN(LatentFactors f, factorize_low_rank(stacked, static_cast<int32_t>(2 * n_kv), static_cast<int32_t>(n_embd),
                                                                inputs[static_cast<size_t>(il)], n_samples, rank));
        LatentLayer& l = layers[static_cast<size_t>(il)];
        // Σ of the dropped σ² over all of them: the relative output error on the calibration inputs.
        double kept = 0, all = 0;
        for (size_t i = 0; i < f.singular_values.size(); ++i) {
            const double s2 = f.singular_values[i] * f.singular_values[i];
            all += s2;
            if (i < static_cast<size_t>(rank)) kept += s2;
        }
        l.output_error = all > 0 ? std::sqrt(std::max(0.0, all - kept) / all) : 0;
        l.down = std::move(f.down);
        l.up_k.assign(f.up.begin(), f.up.begin() + n_kv * rank);
        l.up_v.assign(f.up.begin() + n_kv * rank, f.up.end());
        if (!pack_f32(l.down, rank, n_embd, l.down_m) || !pack_f32(l.up_k, n_kv, rank, l.up_k_m) || !pack_f32(l.up_v, n_kv, rank, l.up_v_m))
            return error(StatusCode::resource_exhausted, "out of memory packing the latent factors");
        if (progress) progress(il + 1, hp.n_layer);
    }
    return layers;
}

}  // namespace workbench
