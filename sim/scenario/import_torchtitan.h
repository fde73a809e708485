// Scenarios from torchtitan's job files (TOML: [model], [training], [parallelism],
// [activation_checkpoint], [float8], [checkpoint], ...).
#pragma once

#include <string>

#include "sim/scenario/import_megatron.h"

namespace pipetwin {

// The scenario of torchtitan job file `path` on `nodes` nodes of cluster preset `preset`: the
// Llama 3 flavor's shape (torchtitan's own table), FSDP2 over the shard degree (HSDP with a
// replicate degree), TP, PP with its schedule and microbatch size, CP, the batch, activation
// checkpointing, Float8, the checkpoint interval as the run's. Sections without effect on a
// step's time (job, metrics, optimizer, lr_scheduler, ...) are accepted; an unknown section or
// key of a section pipetwin reads is an InputError naming it, with its line.
ImportedScenario scenario_from_torchtitan(const std::string& path, const std::string& preset,
                                          int nodes);

}  // namespace pipetwin
