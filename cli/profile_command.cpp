// `pipetwin profile SCENARIO [--batches 1,2,4,8,16] [--repeats 7] [-o FILE]`: measures the
// scenario's zoo model layer by layer with LibTorch and writes the scenario again with
// explicit layers carrying the measured `cost_points`, so that the simulators predict
// this machine. The layer placement is written out too, so that simulated and measured
// runs cut the model the same way. Built into `pipetwin-real` only.

#include <algorithm>
#include <memory>

#include "backend/common/rank_environment.h"
#include "backend/torch/layer_profiler.h"
#include "cli/cli_app.h"
#include "sim/driver/build_program.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

struct ProfileArgs {
  std::string scenario;
  std::vector<int> batches = {1, 2, 4, 8, 16};
  int warmup = 3;
  int repeats = 7;
  std::string output;
  std::vector<std::string> overrides;
  int load_threads = -1;  // -1: one per other rank of the scenario, at most the other cores
};

proto::Scenario profiled_scenario(const LoadedScenario& loaded, const ResolvedScenario& setup,
                                  const std::vector<LayerProfile>& profiles) {
  proto::Scenario out = loaded.scenario;
  proto::Model* model = out.mutable_model();
  const bool zoo = model->has_zoo();
  const proto::Zoo architecture = model->zoo();
  model->Clear();
  // The zoo block stays beside the measured layers: the real backends build it.
  if (zoo) *model->mutable_zoo() = architecture;
  model->set_layer_batch(1);  // activation bytes below are per sample
  for (const LayerProfile& p : profiles) {
    proto::Layer* layer = model->add_layers();
    layer->set_name(p.name);
    layer->set_activation_bytes(p.activation_bytes_per_sample);
    layer->set_parameter_bytes(p.parameter_bytes);
    layer->set_optim_ms(p.optim_s * 1e3);
    for (size_t k = 0; k < p.fwd_s.size(); ++k) {
      proto::CostPoint* point = layer->add_cost_points();
      point->set_batch(p.fwd_s[k].first);
      point->set_fwd_ms(p.fwd_s[k].second * 1e3);
      point->set_bwd_ms(p.bwd_s[k].second * 1e3);
    }
  }
  proto::Schedule* schedule = out.mutable_schedule();
  schedule->clear_partition();
  for (int32_t count : place_layers(setup)) schedule->add_partition(count);
  out.set_name(setup.name + "-profiled");
  return out;
}

void run_profile(const ProfileArgs& args) {
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  for (int b : args.batches) {
    if (b <= 0)
      throw InputError("--batches: sizes must be positive (got " + std::to_string(b) + ")");
  }
  if (args.repeats < 1 || args.warmup < 0)
    throw InputError("--repeats must be >= 1, --warmup >= 0");
  // As in a run: the other ranks' compute threads keep the other cores busy.
  const int cores = allowed_cores();
  const int ranks = static_cast<int>(build_program(setup).num_devices);
  const int load_threads =
      args.load_threads >= 0 ? args.load_threads : std::min(ranks - 1, cores - 1);
  const std::vector<LayerProfile> profiles =
      profile_layers(setup, args.batches, args.warmup, args.repeats, load_threads);
  const std::string header = "# Measured by `pipetwin profile` from " + loaded.source_name +
                             " (median of " + std::to_string(args.repeats) + " after " +
                             std::to_string(args.warmup) + " warm-up passes, one thread, " +
                             std::to_string(load_threads) +
                             " other thread(s) computing as the other ranks of a run do).\n";
  write_scenario(profiled_scenario(loaded, setup, profiles), loaded, header, args.output,
                 "profile of " + std::to_string(profiles.size()) + " layers");
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand("profile", "measure per-layer costs with LibTorch");
  cmd->add_option("scenario", args->scenario, "scenario with a zoo model")->required();
  cmd->add_option("--batches", args->batches, "microbatch sizes to measure")->delimiter(',');
  cmd->add_option("--warmup", args->warmup, "passes before measuring")->default_val(3);
  cmd->add_option("--repeats", args->repeats, "measured passes (median)")->default_val(7);
  cmd->add_option("-o,--output", args->output, "scenario to write (default: stdout)");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_option("--load-threads", args->load_threads,
                  "threads computing meanwhile, as other ranks would (default: one per other "
                  "rank of the scenario, at most one per other core; 0: measure alone)");
  cmd->callback([args] { run_profile(*args); });
}

}  // namespace pipetwin
