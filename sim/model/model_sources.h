// The three model sources of a scenario, each turned into a ModelSpec.
#pragma once

#include <string>

#include "scenario.pb.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

// Explicit layers: fwd_ms/bwd_ms/activation_bytes are for one microbatch of
// `reference_microbatch` samples (global_batch / microbatches); they scale linearly.
// Layers form a chain.
ModelSpec model_from_layers(const proto::Model& model, double reference_microbatch);

// PipeDream profiler graph.txt (format: scenarios/profiles/README.md). Times and
// activation sizes are for `profile_batch` samples. Nodes are ordered topologically
// (ties by node number) and keep their DAG edges as `consumers`. "Input*" nodes cost
// nothing unless `input_cost`. `source_name` is used in error messages (file:line).
// Throws InputError naming the file and line of a malformed line.
ModelSpec model_from_pipedream(const std::string& text, int profile_batch, bool input_cost,
                               const std::string& source_name);

// Zoo models "transformer", "gpt", "vgg16", "resnet", "mlp": FLOPs and bytes from the architecture
// (formulas in docs/models.md). Throws InputError for a missing/invalid field,
// naming it as "model.zoo.<field>".
ModelSpec model_from_zoo(const proto::Zoo& zoo);

}  // namespace pipetwin
