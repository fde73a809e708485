// The zoo's "transformer": embedding, one layer per decoder block (attention and a dense or
// mixture-of-experts MLP), final norm and logits, costed from a TransformerShape. Formulas
// and their sources: docs/models.md, "transformer".
#pragma once

#include <vector>

#include "sim/model/transformer_shape.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

std::vector<ModelLayer> transformer_layers(const TransformerShape& shape);

}  // namespace pipetwin
