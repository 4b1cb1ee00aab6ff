// Binding GGUF tensors to the model's weight slots, with shape and dtype checks.
#include "model/weights.h"

#include "model/arch/architecture.h"
#include "tensor/quant_blocks.h"

#include <sstream>

namespace workbench {
namespace {

std::string shape_str(const std::vector<uint64_t>& shape) {
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
    s << "]";
    return s.str();
}

class Binder {
public:
    Binder(const GgufFile& f) : f_(f) {}

    // Binds `name` expecting shape {n_in}, {n_in, n_out} or, for a stack, {n_in, n_out, n_mat}.
    // Optional tensors may be absent.
    Status bind(WeightTensor& out, const std::string& name, int64_t n_in, int64_t n_out, bool optional = false, int64_t n_mat = 1) {
        const GgufTensorInfo* t = f_.find_tensor(name);
        if (!t) {
            if (optional) return {};
            return error(StatusCode::not_found, f_.path() + ": tensor '" + name + "' is missing");
        }
        std::vector<uint64_t> expected = {static_cast<uint64_t>(n_in)};
        if (n_out > 1 || n_mat > 1 || t->shape.size() > 1) expected.push_back(static_cast<uint64_t>(n_out));
        if (n_mat > 1 || t->shape.size() > 2) expected.push_back(static_cast<uint64_t>(n_mat));
        if (t->shape != expected)
            return error(StatusCode::invalid_file, f_.path() + ": tensor '" + name + "' has shape " + shape_str(t->shape) +
                                                       ", expected " + shape_str(expected));
        if (!dtype_traits(t->type).dequantizable)
            return error(StatusCode::unsupported, f_.path() + ": tensor '" + name + "' has type " +
                                                      std::string(dtype_name(t->type)) + ", which this engine cannot compute with");
        // Norms, biases (per expert too) and sink logits are read as f32 where they are.
        const bool is_vector = (n_out == 1 && n_mat == 1) || name.ends_with(".bias");
        if (is_vector && t->type != DType::f32)
            return error(StatusCode::unsupported, f_.path() + ": tensor '" + name + "' is " + std::string(dtype_name(t->type)) + ", expected f32");
        if (t->type == DType::mxfp4)
            for (uint64_t b = 0; b < t->n_bytes / sizeof(quant::BlockMXFP4); ++b)
                if (t->data[b * sizeof(quant::BlockMXFP4)] == quant::kMxfp4BadExponent)
                    return error(StatusCode::invalid_file, f_.path() + ": tensor '" + name + "' has an invalid mxfp4 block (" + std::to_string(b) +
                                                               ": exponent 255 is not a number)");
        out = WeightTensor{t->type, t->data, n_in, n_out, t->n_bytes, n_mat};
        return {};
    }

private:
    const GgufFile& f_;
};

}  // namespace

Result<ModelWeights> load_weights(const GgufFile& f, const ModelHparams& hp) {
    ModelWeights w;
    Binder b(f);
    WB_RETURN_IF_ERROR(b.bind(w.token_embd, "token_embd.weight", hp.n_embd, hp.n_vocab));
    WB_RETURN_IF_ERROR(b.bind(w.output_norm, "output_norm.weight", hp.n_embd, 1));
    const Architecture* arch = find_architecture(hp.arch);
    if (!arch) return error(StatusCode::unsupported, f.path() + ": architecture '" + hp.arch + "' is not supported");
    WB_RETURN_IF_ERROR(b.bind(w.output, "output.weight", hp.n_embd, hp.n_vocab, /*optional=*/!arch->untied_output));
    if (!w.output.present()) {
        w.output = w.token_embd;
        w.tied_output = true;
    }
    WB_RETURN_IF_ERROR(b.bind(w.rope_freqs, "rope_freqs.weight", hp.n_rot / 2, 1, true));

    // Each layer's tensors as its architecture declares them.
    auto dim = [&](TensorDim d) { return tensor_dim(d, hp); };
    for (const RefusedTensor& r : arch->refused_tensors)
        if (f.find_tensor(r.name))
            return error(StatusCode::unsupported, f.path() + ": tensor '" + std::string(r.name) + "' means " + r.feature +
                                                      ", which this engine does not run");
    w.layers.resize(hp.n_layer);
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        for (const LayerTensor& t : arch->layer_tensors)
            if (!t.present_if || t.present_if(hp, il))
                WB_RETURN_IF_ERROR(b.bind(w.layers[il].*t.slot, p + t.name, dim(t.n_in), dim(t.n_out), !t.required, dim(t.n_mat)));
        for (const FusedLayerTensor& t : arch->fused_layer_tensors) {
            if (t.present_if && !t.present_if(hp, il)) continue;
            const int64_t rows = fused_rows(t, hp), n_mat = dim(t.n_mat);
            WeightTensor fused;
            WB_RETURN_IF_ERROR(b.bind(fused, p + t.name, dim(t.n_in), rows, false, n_mat));
            const uint64_t row_bytes = fused.n_bytes / static_cast<uint64_t>(rows * n_mat);
            int64_t row0 = 0;
            for (const auto& [slot, n_rows] : t.parts) {
                const int64_t n = dim(n_rows);
                w.layers[il].*slot = WeightTensor{fused.type, fused.data + row0 * row_bytes, fused.n_in, n,
                                                  static_cast<uint64_t>(n * n_mat) * row_bytes, n_mat,
                                                  n_mat > 1 ? static_cast<uint64_t>(rows) * row_bytes : 0};
                row0 += n;
            }
        }
    }
    for (const auto& t : f.tensors()) {
        w.n_params += t.n_elements;
        w.n_bytes += t.n_bytes;
    }
    return w;
}

}  // namespace workbench
