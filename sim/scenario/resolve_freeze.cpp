#include "sim/scenario/resolve_freeze.h"

#include "sim/scenario/freeze_log.h"
#include "sim/spec/errors.h"

namespace pipetwin {

FreezeSpec resolve_freeze(const ScenarioChecker& check, const LoadedScenario& loaded,
                          int32_t layers, int32_t iterations) {
  FreezeSpec spec;
  const proto::Scenario& s = loaded.scenario;
  if (!s.has_freeze()) return spec;
  const proto::Freeze& f = s.freeze();
  spec.enabled = true;
  if (f.interval_iterations() <= 0) {
    check.fail("freeze.interval_iterations",
               "must be positive (got " + std::to_string(f.interval_iterations()) + ")");
  }
  spec.interval_iterations = f.interval_iterations();
  if (!(f.percentile() >= 0 && f.percentile() <= 100)) {
    check.fail("freeze.percentile",
               "must be in [0, 100] (got " + number_text(f.percentile()) + ")");
  }
  if (!(f.max_fraction_per_step() > 0 && f.max_fraction_per_step() <= 1)) {
    check.fail("freeze.max_fraction_per_step",
               "must be in (0, 1] (got " + number_text(f.max_fraction_per_step()) + ")");
  }
  spec.rule = {f.percentile(), f.max_fraction_per_step()};
  spec.repartition = f.repartition();
  spec.compress = f.compress();
  if (f.has_autocache()) {
    const int32_t epoch = f.autocache().epoch_iterations();
    check.require(f.autocache().has_epoch_iterations(), "freeze.autocache.epoch_iterations");
    if (epoch <= 0) {
      check.fail("freeze.autocache.epoch_iterations",
                 "must be positive (got " + std::to_string(epoch) + ")");
    }
    spec.cache_epoch_iterations = epoch;
  }
  const int sources = (f.at_size() > 0) + f.has_log() + f.has_synthetic();
  // No source: the rule runs on the gradients a real run measures (pipetwin run).
  if (sources > 1) check.fail("freeze", "give at most one of at, log, synthetic");
  int32_t last_iteration = -1, last_frozen = 0;
  for (int i = 0; i < f.at_size(); ++i) {
    const std::string path = "freeze.at[" + std::to_string(i) + "]";
    const proto::FreezeAt& at = f.at(i);
    check.require(at.has_iteration(), path + ".iteration");
    check.require(at.has_frozen_layers(), path + ".frozen_layers");
    if (at.iteration() <= last_iteration || at.iteration() >= iterations) {
      check.fail(path + ".iteration", "must increase and lie in (0, training.iterations = " +
                                          std::to_string(iterations) + ")");
    }
    if (at.frozen_layers() < last_frozen || at.frozen_layers() >= layers) {
      check.fail(path + ".frozen_layers",
                 "must not decrease and must leave a layer to train (the model has " +
                     std::to_string(layers) + ")");
    }
    last_iteration = at.iteration();
    last_frozen = at.frozen_layers();
    spec.at.emplace_back(at.iteration(), at.frozen_layers());
  }
  if (f.has_log()) {
    const std::string text = read_scenario_relative_file(loaded, f.log(), "freeze.log");
    try {
      spec.log = parse_freeze_log(text, f.log(), layers);
    } catch (const InputError& e) {
      check.fail("freeze.log", e.what());
    }
    // The log's intervals land on the scenario's own when it sets one: a short real run
    // then stretches over a long simulated one.
    if (!f.has_interval_iterations()) spec.interval_iterations = spec.log->interval_iterations;
  }
  if (f.has_synthetic()) {
    const proto::SyntheticGradients& g = f.synthetic();
    check.positive(true, g.time_constant(), "freeze.synthetic.time_constant");
    check.non_negative(g.depth_factor(), "freeze.synthetic.depth_factor");
    check.non_negative(g.noise(), "freeze.synthetic.noise");
    if (!(g.floor() >= 0 && g.floor() < 1)) {
      check.fail("freeze.synthetic.floor",
                 "must be in [0, 1) (got " + number_text(g.floor()) + ")");
    }
    spec.synthetic =
        SyntheticGradientModel{g.seed(), g.time_constant(), g.depth_factor(), g.noise(), g.floor()};
  }
  return spec;
}

}  // namespace pipetwin
