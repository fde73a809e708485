// One point of `pipetwin tune`'s search: every choice it makes about how to train, written
// as the --set fields that apply it to the scenario.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct TuneConfig {
  int32_t tensor_parallel = 1;
  int32_t context_parallel = 1;
  int32_t stages = 1;  // pipeline parallelism
  int32_t data_parallel = 1;
  int32_t expert_parallel = 1;
  // GPUs that split each expert (MoE parallel folding): 1 or tensor_parallel; 0 stands for
  // tensor_parallel.
  int32_t expert_tensor_parallel = 0;
  int32_t virtual_stages = 1;
  int32_t microbatches = 1;
  proto::ScheduleKind schedule = proto::ONE_F_ONE_B;
  double memory_limit_microbatches = 0;  // ZB_AUTO: 0 is 1F1B's (ZB-1p)
  proto::Training::Recompute recompute = proto::Training::NONE;
  int32_t zero_stage = 0;
  bool offload = false;  // every stage's activations to host memory

  int32_t expert_tensor() const {
    return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel;
  }
  int64_t gpus() const {
    return static_cast<int64_t>(tensor_parallel) * context_parallel * stages * data_parallel;
  }
  bool operator==(const TuneConfig&) const = default;
};

// The scenario's own choices.
TuneConfig config_of(const ResolvedScenario& setup);

// The --set fields ("training.tensor_parallel=8", ...) that apply `config`, each one.
// Offload is written as schedule.offload.policy=ALL; without offload no field is written
// (a scenario that offloads is tuned with offload pinned, see tune_space.h).
std::vector<std::string> config_overrides(const TuneConfig& config);

// `scenario` with `config` applied through its --set fields; what the configuration replaces
// goes: an explicit partition, UMPIPE's stage plans, replicated stages, ZB_AUTO's limit (unless
// the configuration sets one), offload (unless it offloads), sequence parallelism without
// tensor parallelism, the expert all-to-alls' overlap where the layout or schedule has none.
// `written` (optional) gets each field path and its assignment. Throws InputError for a value the
// schema refuses.
proto::Scenario with_config(proto::Scenario scenario, const TuneConfig& config,
                            std::map<std::string, std::string>* written = nullptr);

// "TP 8 CP 1 PP 8 DP 16 EP 1, 32 microbatches, ONE_F_ONE_B, recompute NONE, ZeRO 0": for
// people.
std::string config_name(const TuneConfig& config);

}  // namespace pipetwin
