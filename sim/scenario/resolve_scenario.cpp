#include "sim/scenario/resolve_scenario.h"

#include "sim/scenario/resolve_cluster.h"
#include "sim/scenario/resolve_device_overrides.h"
#include "sim/scenario/resolve_freeze.h"
#include "sim/scenario/resolve_model.h"
#include "sim/scenario/resolve_offload.h"
#include "sim/scenario/resolve_schedule.h"
#include "sim/scenario/resolve_training.h"
#include "sim/scenario/scenario_checker.h"

namespace pipetwin {

// The sections in the order their errors are reported: each section may check itself against
// those before it (the schedule against the model's layers and the cluster's devices), and
// the rules that span sections come last.
ResolvedScenario resolve_scenario(const LoadedScenario& loaded) {
  const ScenarioChecker check(loaded);
  const proto::Scenario& s = loaded.scenario;
  ResolvedScenario setup;
  setup.name = s.has_name() ? s.name() : loaded.source_name;
  setup.cluster = resolve_cluster(check, loaded);
  setup.training = resolve_training(check, s);
  setup.model = resolve_model(check, loaded);
  if (s.model().has_zoo()) setup.zoo = s.model().zoo();
  if (setup.model.layers.empty()) check.fail("model", "the model has no layers");
  setup.schedule = resolve_schedule(check, s, static_cast<int>(setup.model.layers.size()),
                                    static_cast<int>(setup.cluster.devices.size()), setup.training);
  setup.schedule.offload =
      resolve_offload(check, s.schedule(), setup.schedule.chunks(), setup.cluster);
  setup.simgrid.exact = s.simgrid().exact();
  setup.simgrid.collective_steps = s.simgrid().collective_steps();
  if (setup.simgrid.exact && !setup.cluster.simgrid_platform.empty()) {
    check.fail("simgrid.exact",
               "exact mode builds its own links; it cannot use cluster.simgrid_platform");
  }
  setup.simgrid.cfg.assign(s.simgrid().cfg().begin(), s.simgrid().cfg().end());
  setup.freeze = resolve_freeze(check, loaded, static_cast<int32_t>(setup.model.layers.size()),
                                setup.training.iterations);
  if (setup.freeze.enabled && setup.schedule.kind != proto::GPIPE &&
      setup.schedule.kind != proto::ONE_F_ONE_B) {
    check.fail("freeze", "FreezePipe repartitions GPIPE and ONE_F_ONE_B pipelines");
  }
  check_tensor_parallel(check, s, setup);
  check_zero_stage(check, setup);
  check_reduce_after_flush(check, setup);
  check_context_parallel(check, setup);
  place_ranks(check, s, setup);
  apply_node_groups(check, s, setup.cluster);
  share_nic_scales(setup.cluster);
  // Measured layers (profile, calibrate) hold their memory-bound kernels' time already.
  if (counts_memory_bound_kernels(s)) add_memory_bound_kernels(check, s, setup);
  add_shape_efficiency(s, setup);
  add_expert_parallel(check, s, setup);
  add_activation_recompute(check, setup);
  if (setup.freeze.cache_epoch_iterations > 0 && !setup.cluster.has_host_link) {
    check.fail("freeze.autocache", "the cache is read over cluster.host_link, which is missing");
  }
  return setup;
}

}  // namespace pipetwin
