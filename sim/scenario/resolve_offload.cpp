#include "sim/scenario/resolve_offload.h"

#include <algorithm>

namespace pipetwin {

OffloadSpec resolve_offload(const ScenarioChecker& check, const proto::Schedule& p, int32_t chunks,
                            const ClusterSpec& cluster) {
  OffloadSpec offload;
  if (!p.has_offload()) return offload;
  const proto::Offload& o = p.offload();
  offload.enabled = true;
  offload.policy = o.policy();
  if (is_asynchronous(p.kind()) && o.policy() == proto::Offload::SELECTIVE) {
    check.fail("schedule.offload.policy",
               "SELECTIVE chooses stages on a synchronous compute order; asynchronous "
               "pipelines take ALL or explicit stages");
  }
  if (!cluster.has_host_link) {
    check.fail("schedule.offload", "offload copies over cluster.host_link, which is missing");
  }
  if (!cluster.simgrid_platform.empty()) {
    check.fail("schedule.offload",
               "offload needs the platform pipetwin builds (host links per PCIe switch); "
               "cluster.simgrid_platform has none it knows of");
  }
  if (o.prefetch_horizon() < 0) {
    check.fail("schedule.offload.prefetch_horizon",
               "must not be negative (got " + std::to_string(o.prefetch_horizon()) + ")");
  }
  offload.prefetch_horizon = o.prefetch_horizon();
  if (!(o.fraction() > 0 && o.fraction() <= 1)) {
    check.fail("schedule.offload.fraction",
               "must be in (0, 1] (got " + number_text(o.fraction()) + ")");
  }
  offload.fraction = o.fraction();
  offload.activations = o.activations();
  offload.weight_stashes = o.weight_stashes();
  if (o.weight_stashes() && !is_asynchronous(p.kind())) {
    check.fail("schedule.offload.weight_stashes",
               "only asynchronous pipelines (PIPEDREAM_ASYNC, PIPEDREAM_2BW, APAPO) stash weight "
               "versions; " +
                   proto::ScheduleKind_Name(p.kind()) + " keeps one");
  }
  if (!o.activations() && !o.weight_stashes()) {
    check.fail("schedule.offload.activations",
               "false with weight_stashes false leaves nothing to offload");
  }
  for (int i = 0; i < o.stages_size(); ++i) {
    if (o.stages(i) < 0 || o.stages(i) >= chunks) {
      check.fail("schedule.offload.stages[" + std::to_string(i) + "]",
                 "no stage " + std::to_string(o.stages(i)) + " in a pipeline of " +
                     std::to_string(chunks) + " stages");
    }
  }
  if (o.policy() == proto::Offload::STAGES) {
    if (o.stages_size() == 0) check.fail("schedule.offload.stages", "missing (policy STAGES)");
    offload.stages.assign(o.stages().begin(), o.stages().end());
    std::sort(offload.stages.begin(), offload.stages.end());
    offload.stages.erase(std::unique(offload.stages.begin(), offload.stages.end()),
                         offload.stages.end());
  } else {
    if (o.stages_size() > 0) {
      check.fail("schedule.offload.stages", "only policy STAGES takes a list of stages");
    }
    for (int32_t c = 0; c < chunks; ++c) offload.stages.push_back(c);
  }
  return offload;
}

}  // namespace pipetwin
