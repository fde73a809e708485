#include "sim/tune/tune_config.h"

#include <sstream>

#include "sim/scenario/apply_override.h"

namespace pipetwin {

TuneConfig config_of(const ResolvedScenario& setup) {
  TuneConfig c;
  c.tensor_parallel = setup.training.tensor_parallel;
  c.context_parallel = setup.training.context_parallel;
  c.stages = setup.schedule.stages;
  c.data_parallel = setup.training.data_parallel;
  c.expert_parallel = setup.training.expert_parallel;
  if (setup.training.expert_tensor() != setup.training.tensor_parallel) {
    c.expert_tensor_parallel = setup.training.expert_tensor();
  }
  c.virtual_stages = setup.schedule.virtual_stages;
  c.microbatches = setup.training.microbatches;
  c.schedule = setup.schedule.kind;
  c.memory_limit_microbatches = setup.schedule.memory_limit_microbatches;
  c.recompute = setup.training.recompute;
  c.zero_stage = setup.training.zero_stage;
  c.offload = setup.schedule.offload.enabled;
  return c;
}

std::vector<std::string> config_overrides(const TuneConfig& c) {
  std::vector<std::string> set = {
      "training.tensor_parallel=" + std::to_string(c.tensor_parallel),
      "training.context_parallel=" + std::to_string(c.context_parallel),
      "schedule.stages=" + std::to_string(c.stages),
      "training.data_parallel=" + std::to_string(c.data_parallel),
      "training.expert_parallel=" + std::to_string(c.expert_parallel),
      "training.expert_tensor_parallel=" + std::to_string(c.expert_tensor()),
      "schedule.virtual_stages=" + std::to_string(c.virtual_stages),
      "training.microbatches=" + std::to_string(c.microbatches),
      "schedule.kind=" + proto::ScheduleKind_Name(c.schedule),
      "training.recompute=" + proto::Training::Recompute_Name(c.recompute),
      "training.zero_stage=ZERO_" + std::to_string(c.zero_stage),
  };
  if (c.schedule == proto::ZB_AUTO && c.memory_limit_microbatches > 0) {
    std::ostringstream limit;
    limit << c.memory_limit_microbatches;
    set.push_back("schedule.memory_limit_microbatches=" + limit.str());
  }
  if (c.offload) set.push_back("schedule.offload.policy=ALL");
  return set;
}

proto::Scenario with_config(proto::Scenario scenario, const TuneConfig& config,
                            std::map<std::string, std::string>* written) {
  proto::Schedule& schedule = *scenario.mutable_schedule();
  schedule.clear_partition();
  schedule.clear_stage_plans();
  schedule.clear_stage_replicas();
  schedule.clear_memory_limit_microbatches();
  if (!config.offload) schedule.clear_offload();
  proto::Training& training = *scenario.mutable_training();
  training.set_sequence_parallel(training.sequence_parallel() && config.tensor_parallel > 1);
  training.set_overlap_moe_expert_parallel_comm(
      training.overlap_moe_expert_parallel_comm() && config.expert_parallel > 1 &&
      (config.schedule == proto::ONE_F_ONE_B || config.schedule == proto::INTERLEAVED_ONE_F_ONE_B));
  for (const std::string& assignment : config_overrides(config)) {
    const std::string path = apply_override(scenario, assignment);
    if (written != nullptr) (*written)[path] = assignment;
  }
  return scenario;
}

std::string config_name(const TuneConfig& c) {
  std::ostringstream out;
  out << "TP " << c.tensor_parallel << " CP " << c.context_parallel << " PP " << c.stages << " DP "
      << c.data_parallel << " EP " << c.expert_parallel;
  if (c.expert_tensor() != c.tensor_parallel) out << " ETP " << c.expert_tensor();
  out << ", " << c.microbatches << " microbatches, " << proto::ScheduleKind_Name(c.schedule);
  if (c.virtual_stages > 1) out << " x" << c.virtual_stages;
  if (c.schedule == proto::ZB_AUTO) {
    out << " (limit ";
    if (c.memory_limit_microbatches > 0) {
      out << c.memory_limit_microbatches;
    } else {
      out << c.stages;
    }
    out << ")";
  }
  out << ", recompute " << proto::Training::Recompute_Name(c.recompute) << ", ZeRO "
      << c.zero_stage;
  if (c.offload) out << ", offload";
  return out.str();
}

}  // namespace pipetwin
