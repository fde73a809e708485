#include "sim/scenario/resolve_stage_replicas.h"

namespace pipetwin {

// PipeDream's hybrid plans: each stage on devices of its own, which take its microbatches
// round robin. Empty when the scenario replicates no stage.
std::vector<int32_t> resolve_stage_replicas(const ScenarioChecker& check,
                                            const proto::Scenario& scenario,
                                            const TrainingSpec& training, int devices) {
  const proto::Schedule& p = scenario.schedule();
  if (p.stage_replicas_size() == 0) return {};
  const std::string field = "schedule.stage_replicas";
  if (p.stage_replicas_size() != p.stages()) {
    check.fail(field, "has " + std::to_string(p.stage_replicas_size()) +
                          " entries, expected one per stage (" + std::to_string(p.stages()) + ")");
  }
  switch (p.kind()) {
    case proto::GPIPE:
    case proto::ONE_F_ONE_B:
    case proto::PIPEDREAM_ASYNC:
    case proto::PIPEDREAM_2BW:
    case proto::APAPO:
      break;
    default:
      check.fail(field,
                 "replicates stages of GPIPE, ONE_F_ONE_B, PIPEDREAM_ASYNC, "
                 "PIPEDREAM_2BW and APAPO schedules, not " +
                     proto::ScheduleKind_Name(p.kind()));
  }
  if (training.data_parallel > 1) {
    check.fail(field, "cannot be combined with training.data_parallel (" +
                          std::to_string(training.data_parallel) +
                          "): replicate single stages or whole pipelines, not both");
  }
  if (training.tensor_parallel > 1) {
    check.fail(field, "cannot be combined with training.tensor_parallel (" +
                          std::to_string(training.tensor_parallel) + ")");
  }
  if (p.has_offload()) {
    check.fail(field, "cannot be combined with schedule.offload");
  }
  if (scenario.has_freeze()) {  // FreezePipe repartitions whole pipelines
    check.fail(field, "cannot be combined with freeze");
  }
  int64_t total = 0;
  for (int s = 0; s < p.stage_replicas_size(); ++s) {
    const std::string at = field + "[" + std::to_string(s) + "]";
    const int32_t replicas = p.stage_replicas(s);
    check.positive(true, replicas, at);
    // Round robin over an iteration's microbatches: a replica beyond them would idle.
    if (replicas > training.microbatches) {
      check.fail(at, std::to_string(replicas) + " replicas of stage " + std::to_string(s) +
                         " need at least as many microbatches per iteration "
                         "(training.microbatches is " +
                         std::to_string(training.microbatches) + ")");
    }
    total += replicas;
  }
  if (total > devices) {
    check.fail(field, "places the stages on " + std::to_string(total) +
                          " devices, more than the cluster's " + std::to_string(devices));
  }
  return {p.stage_replicas().begin(), p.stage_replicas().end()};
}

}  // namespace pipetwin
