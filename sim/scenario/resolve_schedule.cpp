#include "sim/scenario/resolve_schedule.h"

#include <cmath>

#include "sim/scenario/resolve_stage_plans.h"
#include "sim/scenario/resolve_stage_replicas.h"

namespace pipetwin {
namespace {

// What zero-bubble schedules do not combine with: each would need its own rules for the
// split backward (which half offloads or freezes). Recomputation does combine: B reruns the
// forward and holds what W needs until W (sim/model/activation_recompute.h).
void check_zero_bubble_combinations(const ScenarioChecker& check, const proto::Scenario& s) {
  const std::string kind = proto::ScheduleKind_Name(s.schedule().kind());
  if (s.schedule().has_offload()) {
    check.fail("schedule.offload", kind +
                                       " does not offload activations (the stash is freed in "
                                       "two parts, by BWD_INPUT and BWD_WEIGHT)");
  }
  if (s.has_freeze()) {
    check.fail("freeze", kind +
                             " does not freeze layers (use GPIPE, ONE_F_ONE_B or "
                             "INTERLEAVED_ONE_F_ONE_B)");
  }
}

// ZB_AUTO's stash limit: at least one microbatch's (a stage must be able to run a forward);
// unset (0), 1F1B's first stage, K microbatches.
double resolve_memory_limit(const ScenarioChecker& check, const proto::Schedule& p) {
  if (!p.has_memory_limit_microbatches()) return 0;
  if (p.kind() != proto::ZB_AUTO) {
    check.fail("schedule.memory_limit_microbatches", "only ZB_AUTO takes a memory limit; " +
                                                         proto::ScheduleKind_Name(p.kind()) +
                                                         "'s memory follows from its order");
  }
  if (!(p.memory_limit_microbatches() >= 1) || !std::isfinite(p.memory_limit_microbatches())) {
    check.fail("schedule.memory_limit_microbatches",
               "must be at least 1 (one microbatch's stash), got " +
                   std::to_string(p.memory_limit_microbatches()));
  }
  return p.memory_limit_microbatches();
}

// DualPipe's two directions meet in the middle (an even number of stages), each takes half
// the microbatches, and each device starts with a full pipeline's worth of forwards of its
// own direction before it can pair them with backwards of the other (DeepSeek's reference
// asserts the same).
void check_dualpipe(const ScenarioChecker& check, const proto::Schedule& p,
                    const TrainingSpec& training) {
  if (p.stages() % 2 != 0) {
    check.fail("schedule.stages",
               "DUALPIPE runs its two directions over an even number of "
               "stages, got " +
                   std::to_string(p.stages()));
  }
  if (training.microbatches % 2 != 0 || training.microbatches < 2 * p.stages()) {
    check.fail("training.microbatches",
               "DUALPIPE needs an even number of microbatches, at least twice "
               "schedule.stages (" +
                   std::to_string(2 * p.stages()) + "), got " +
                   std::to_string(training.microbatches));
  }
}

}  // namespace

ScheduleSpec resolve_schedule(const ScenarioChecker& check, const proto::Scenario& s, int layers,
                              int devices, const TrainingSpec& training) {
  check.require(s.has_schedule(), "schedule");
  const proto::Schedule& p = s.schedule();
  ScheduleSpec schedule;
  schedule.kind = p.kind();
  check.positive(p.has_stages(), p.stages(), "schedule.stages");
  schedule.stages = p.stages();
  if (p.kind() == proto::PIPEFB) {
    if (training.data_parallel > 1) {
      check.fail("training.data_parallel", "PIPEFB runs one pipeline (data_parallel 1)");
    }
    if (2 * p.stages() > devices) {
      check.fail("schedule.stages", "PIPEFB puts each of the " + std::to_string(p.stages()) +
                                        " stages on two devices, more than the cluster's " +
                                        std::to_string(devices));
    }
  }
  if (p.pipefb_recompute() && p.kind() != proto::PIPEFB) {
    check.fail("schedule.pipefb_recompute", "only PIPEFB schedules recompute on another device");
  }
  schedule.pipefb_recompute = p.pipefb_recompute();
  schedule.comm_overlap = p.comm_overlap();
  if (p.has_max_in_flight_iterations() && p.kind() != proto::APAPO) {
    check.fail("schedule.max_in_flight_iterations",
               "only APAPO schedules take micro-batch control");
  }
  if (p.has_max_staleness() && p.kind() != proto::APAPO) {
    check.fail("schedule.max_staleness", "only APAPO schedules take micro-batch control");
  }
  check.positive(true, p.max_in_flight_iterations(), "schedule.max_in_flight_iterations");
  check.non_negative(p.max_staleness(), "schedule.max_staleness");
  schedule.max_in_flight_iterations = p.max_in_flight_iterations();
  schedule.max_staleness = p.max_staleness();
  if (p.kind() == proto::PIPEDREAM_2BW && training.microbatches < p.stages()) {
    check.fail("training.microbatches",
               "PIPEDREAM_2BW accumulates gradients over at least as many microbatches as "
               "stages (" +
                   std::to_string(p.stages()) + "), so that two weight versions suffice");
  }
  const int64_t per_stage = int64_t{training.tensor_parallel} * training.context_parallel;
  if (int64_t{p.stages()} * training.data_parallel * per_stage > devices) {
    check.fail("schedule.stages",
               std::to_string(p.stages()) + " stages" +
                   (per_stage > 1 ? " of " + std::to_string(per_stage) + " GPUs" : std::string()) +
                   (training.data_parallel > 1
                        ? " x " + std::to_string(training.data_parallel) + " replicas"
                        : std::string()) +
                   " need more devices than the cluster's " + std::to_string(devices));
  }
  check.positive(true, p.virtual_stages(), "schedule.virtual_stages");
  schedule.virtual_stages = p.virtual_stages();
  if (p.kind() == proto::ZB_V) {
    // The V: two model chunks per device.
    if (p.has_virtual_stages() && p.virtual_stages() != 2) {
      check.fail("schedule.virtual_stages",
                 "ZB_V places two model chunks on every device: leave it unset or give 2, got " +
                     std::to_string(p.virtual_stages()));
    }
    schedule.virtual_stages = 2;
  } else if (p.virtual_stages() > 1 && p.kind() != proto::INTERLEAVED_ONE_F_ONE_B) {
    check.fail("schedule.virtual_stages",
               "only INTERLEAVED_ONE_F_ONE_B and ZB_V have virtual stages");
  }
  if (is_zero_bubble(p.kind())) check_zero_bubble_combinations(check, s);
  if (p.kind() == proto::DUALPIPE) check_dualpipe(check, p, training);
  schedule.memory_limit_microbatches = resolve_memory_limit(check, p);
  if (p.kind() == proto::INTERLEAVED_ONE_F_ONE_B && training.microbatches % p.stages() != 0) {
    check.fail("training.microbatches",
               "interleaved 1F1B needs microbatches (" + std::to_string(training.microbatches) +
                   ") to be a multiple of schedule.stages (" + std::to_string(p.stages()) + ")");
  }
  if (p.kind() == proto::UMPIPE) {
    schedule.stage_plans = resolve_stage_plans(check, p, training);
  } else if (p.stage_plans_size() > 0) {
    check.fail("schedule.stage_plans", "only UMPIPE schedules take stage plans");
  }
  if (schedule.chunks() > layers) {
    check.fail("schedule.stages", std::to_string(schedule.chunks()) +
                                      " pipeline stages need more layers than the model's " +
                                      std::to_string(layers));
  }
  schedule.stage_replicas = resolve_stage_replicas(check, s, training, devices);
  if (p.partition_size() > 0) {
    if (p.partition_size() != schedule.chunks()) {
      check.fail("schedule.partition", "has " + std::to_string(p.partition_size()) +
                                           " entries, expected one per stage (" +
                                           std::to_string(schedule.chunks()) + ")");
    }
    int total = 0;
    for (int i = 0; i < p.partition_size(); ++i) {
      check.positive(true, p.partition(i), "schedule.partition[" + std::to_string(i) + "]");
      total += p.partition(i);
    }
    if (total != layers) {
      check.fail("schedule.partition", "places " + std::to_string(total) +
                                           " layers, but the model has " + std::to_string(layers));
    }
    schedule.partition.assign(p.partition().begin(), p.partition().end());
  }
  return schedule;
}

}  // namespace pipetwin
