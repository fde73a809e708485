// Scenarios from launch configurations: Megatron-LM's (and Megatron-Bridge's) training
// arguments, as a job's launch script passes them to pretrain_gpt.py.
#pragma once

#include <string>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

struct ImportedScenario {
  proto::Scenario scenario;
  // What the import decided that the arguments do not say (the cluster's size, a vocabulary
  // size), and arguments read as an approximation: one line each, for the file's header.
  std::vector<std::string> notes;
};

// The scenario of `args` (e.g. {"--num-layers", "96", "--hidden-size", "12288", ...}) on `nodes`
// nodes of cluster preset `preset`: the model's shape, the parallel layout (data parallelism is
// what the GPUs leave: nodes x GPUs per node over TP x PP x CP), the batch and its microbatches,
// the number format, ZeRO, recomputation, and `--train-iters` as run.steps. Arguments that do
// not change the step's time (learning rate, data paths, logging) are accepted; one pipetwin
// does not know is an InputError naming it, never ignored.
ImportedScenario scenario_from_megatron_args(const std::vector<std::string>& args,
                                             const std::string& preset, int nodes);

}  // namespace pipetwin
