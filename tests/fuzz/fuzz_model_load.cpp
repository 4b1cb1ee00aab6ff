// libFuzzer target for the whole load path, as Engine::load walks it: GGUF → tokenizer vocab →
// hyperparameters (the architecture's own keys included) → tensor shapes and types → weights
// repacked for the kernels → a two-token forward step with a small cache. A mutated file that
// still parses as GGUF but lies about shapes, counts, vocabulary or types must end in a Status,
// never a crash, a hang or an allocation of what the file merely claims (run it with
// -malloc_limit_mb and -timeout: tests/fuzz/run_model_load_fuzz.sh). Seeds: `synth` files.
#include <cstddef>
#include <cstdint>
#include <span>

#include "attention/paged_kv.h"
#include "gguf/gguf_file.h"
#include "kernels/cpu/thread_pool.h"
#include "model/decoder_model.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_loader.h"

using namespace workbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto file = GgufFile::from_memory(std::span(data, size), "fuzz.gguf");
    if (!file.ok()) return 0;
    auto vocab = load_tokenizer_vocab(**file);
    if (!vocab.ok()) return 0;
    auto tokenizer = Tokenizer::create(std::move(*vocab));
    if (!tokenizer.ok()) return 0;
    (void)(*tokenizer)->encode("Hello world, 12 tokens\n", true, true);
    auto hp = load_hparams(**file, (*tokenizer)->n_vocab());
    if (!hp.ok()) return 0;
    auto weights = load_weights(**file, *hp);
    if (!weights.ok()) return 0;
    const NativeAttention native{hp->sliding_window, hp->local_layers};
    const int32_t n_layer = hp->n_layer;
    auto model = DecoderModel::create(std::move(*hp), std::move(*weights));
    if (!model.ok()) return 0;
    auto layout = apply_native_attention({{}}, native, n_layer);
    if (!layout.ok()) return 0;
    auto kv = PagedKv::create(*layout, KvTypes{}, (*model)->kv_shape(), 0, 16);
    if (!kv.ok()) return 0;
    static ThreadPool pool(1);
    const TokenId tokens[2] = {0, 1};
    std::vector<float> logits;
    (void)(*model)->forward(std::span(tokens, 2), 0, **kv, false, logits, pool);
    return 0;
}
