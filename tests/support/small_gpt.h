// A GPT small enough to simulate in milliseconds but wide enough for Megatron's formulas:
// `blocks` blocks of hidden 1024, sequence 256, 16 heads, on 8-GPU nodes, 2 samples per
// microbatch, from the built-in gpt-8gpu-1f1b scenario.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin::testing {

inline ResolvedScenario small_gpt(int stages, int blocks, int microbatches, int tensor_parallel,
                                  const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {
      "model.zoo.layers=" + std::to_string(blocks),
      "model.zoo.hidden=1024",
      "model.zoo.seq_len=256",
      "model.zoo.heads=16",
      "model.zoo.vocab=8192",
      "cluster.gpus_per_node=8",
      "cluster.nodes=4",
      "schedule.stages=" + std::to_string(stages),
      "training.microbatches=" + std::to_string(microbatches),
      "training.global_batch=" + std::to_string(2 * microbatches),
      "training.tensor_parallel=" + std::to_string(tensor_parallel)};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", overrides));
}

}  // namespace pipetwin::testing
