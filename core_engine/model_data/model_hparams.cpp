#include "model_data/model_hparams.h"

#include <algorithm>

namespace workbench {

bool ModelHparams::is_local_layer(int32_t il) const {
    return std::binary_search(local_layers.begin(), local_layers.end(), il);
}

}  // namespace workbench
