// FreezePipe's vocabulary: the rule's parameters, where gradient statistics come from,
// and the scenario's `freeze` block resolved. The rule is sim/freeze/auto_freeze.h.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace pipetwin {

struct FreezeRule {
  double percentile = 50;               // of r over the active layers, in [0, 100]
  double max_fraction_per_step = 0.25;  // of all layers, in (0, 1]
};

// Accumulated L1 gradient norm of every layer over each interval: [interval][layer].
using IntervalNorms = std::vector<std::vector<double>>;

struct SyntheticGradientModel {
  uint64_t seed = 1;
  double time_constant = 100;  // iterations
  double depth_factor = 2;     // tau_l = time_constant * (1 + depth_factor * l / (L - 1))
  double noise = 0.02;         // relative, Gaussian, per iteration
  double floor = 0.1;          // the plateau a converged layer's norm settles at
};

// A freeze log (sim/scenario/freeze_log.h reads and writes it): "# comment" lines, then "layers L",
// "interval_iterations I", and one line per interval: "interval K n_0 n_1 ... n_(L-1)". Throws
// InputError naming `name`, the line and what is wrong; a log for another model (other layer count)
// is an error.
struct FreezeLog {
  int32_t layers = 0;
  int32_t interval_iterations = 0;
  IntervalNorms norms;
};

// FreezePipe over a whole training run (scenario `freeze`).
struct FreezeSpec {
  bool enabled = false;
  FreezeRule rule;
  int32_t interval_iterations = 10;
  // At most one source: a fixed schedule, a freeze log, or synthetic gradients. None: the
  // rule runs on the gradients a real run measures, which only pipetwin run has.
  std::vector<std::pair<int32_t, int32_t>> at;  // (iteration, frozen prefix), increasing
  std::optional<FreezeLog> log;
  std::optional<SyntheticGradientModel> synthetic;
  bool measured() const { return at.empty() && !log && !synthetic; }
  bool repartition = true;
  bool compress = true;
  // AutoCache (freeze.autocache): iterations per epoch, 0 for none.
  int32_t cache_epoch_iterations = 0;
};

}  // namespace pipetwin
