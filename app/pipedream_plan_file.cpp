#include "app/pipedream_plan_file.h"

#include <iostream>

#include "report/text_units.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/spec/stage_replicas.h"

namespace pipetwin {
namespace {

bool replicates(const PipedreamPlan& plan) {
  for (const PlannedStage& stage : plan.stages) {
    if (stage.devices.size() > 1) return true;
  }
  return false;
}

std::string replicas_text(const PipedreamPlan& plan) {
  std::string text;
  for (const PlannedStage& stage : plan.stages) {
    if (!text.empty()) text += ',';
    text += std::to_string(stage.devices.size());
  }
  return text;
}

// simulate numbers devices stage-major: stage s on the replicas(s) devices after the
// earlier stages'. The planner hands out each class's devices in id order, which on a
// homogeneous cluster is the same placement.
bool placed_as_simulated(const PipedreamPlan& plan) {
  int device = 0;
  for (const PlannedStage& stage : plan.stages) {
    for (int d : stage.devices) {
      if (d != device++) return false;
    }
  }
  return true;
}

// A replicated plan runs as PipeDream does: asynchronously, round robin over each stage's
// replicas (an asynchronous kind the scenario already names is kept); a straight one as
// 1F1B unless the scenario asks for GPipe.
void set_schedule(proto::Scenario& scenario, const PipedreamPlan& plan) {
  proto::Schedule* schedule = scenario.mutable_schedule();
  const bool replicated = replicates(plan);
  if (replicated && !is_asynchronous(schedule->kind())) {
    schedule->set_kind(proto::PIPEDREAM_ASYNC);
  } else if (!replicated && schedule->kind() != proto::GPIPE) {
    schedule->set_kind(proto::ONE_F_ONE_B);
  }
  if (schedule->kind() != proto::APAPO) {  // APapo's micro-batch control only
    schedule->clear_max_staleness();
    schedule->clear_max_in_flight_iterations();
  }
  schedule->set_stages(static_cast<int32_t>(plan.stages.size()));
  schedule->clear_virtual_stages();
  schedule->clear_stage_plans();
  schedule->clear_offload();
  schedule->clear_partition();
  for (int layers : plan.partition()) schedule->add_partition(layers);
  schedule->clear_stage_replicas();
  if (replicated) {
    for (const PlannedStage& stage : plan.stages) {
      schedule->add_stage_replicas(static_cast<int32_t>(stage.devices.size()));
    }
  }
  proto::Training* training = scenario.mutable_training();
  training->set_data_parallel(1);
  if (replicated) {  // the planner gives every device a stage of its own
    training->clear_tensor_parallel();
    training->clear_sequence_parallel();
  }
}

}  // namespace

void write_pipedream_plan(const PipedreamPlanArgs& args, const LoadedScenario& loaded,
                          PlannerProblem problem, const PipedreamPlan& plan) {
  PipedreamPlan written = plan;
  if (!plan.contiguous) {
    PipedreamOptions options;
    options.chain_only = true;
    written = plan_pipedream(problem, options);
    if (!written.contiguous) {
      // Kept states are layer-order prefixes, so this cannot happen; say so if it does.
      throw RuntimeFailure("--write-plan: the contiguous plan is not contiguous");
    }
    std::cerr << "note: --write-plan: schedule.partition places each stage on a contiguous "
                 "range of the layer order, so "
              << args.write_plan << " holds the best contiguous plan (" << written.stages.size()
              << " stages, replicas " << replicas_text(written) << ", bottleneck "
              << format_seconds(written.bottleneck_s) << " per microbatch vs "
              << format_seconds(plan.bottleneck_s) << " for the plan shown)\n";
  }
  if (!placed_as_simulated(written)) {
    std::cerr << "note: --write-plan: simulate places the stages on devices in order (stage "
                 "0's replicas first), not on the devices the planner matched\n";
  }
  proto::Scenario scenario = loaded.scenario;
  set_schedule(scenario, written);
  const std::string what = replicates(written)
                               ? "PipeDream plan (replicas " + replicas_text(written) + ", " +
                                     proto::ScheduleKind_Name(scenario.schedule().kind()) + ")"
                               : "Straight PipeDream partition";
  write_scenario(scenario, loaded,
                 "# " + what + " found by `pipetwin plan " + loaded.source_name +
                     " --search pipedream`: bottleneck " +
                     format_number("%.17g", written.bottleneck_s) + " s per microbatch\n",
                 args.write_plan);
}

}  // namespace pipetwin
