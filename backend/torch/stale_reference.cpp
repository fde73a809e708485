// The correctness reference for asynchronous pipelines (see real_run.h): one process,
// every stage's layers kept as a copy per weight version.
#include <deque>
#include <stdexcept>

#include "backend/torch/rank_model.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/zoo_modules.h"
#include "sim/driver/build_program.h"

namespace pipetwin {

MeasuredRun run_stale_reference(const ResolvedScenario& setup, const RealRunOptions& options,
                                const StaleWeights& stale) {
  torch::set_num_threads(1);
  const ZooArchitecture arch = zoo_architecture(*setup.zoo);
  RankModel model(arch, setup.training.optimizer, options.seed);
  const int stages = static_cast<int>(stale.stage_layers.size());
  // versions[s][v]: stage s's layers after v updates.
  std::vector<std::map<int, torch::nn::Sequential>> versions(stages);
  int updates = 0;
  auto take_versions = [&] {
    for (int s = 0; s < stages; ++s) {
      const auto [first, last] = stale.stage_layers[s];
      versions[s][updates] = model.snapshot(first, last);
    }
  };
  auto update = [&] {
    for (int s = 0; s < stages; ++s) {
      const auto [first, last] = stale.stage_layers[s];
      for (auto& [v, copy] : versions[s]) model.add_gradients_of(copy, first, last);
      model.step(first, last);
    }
    ++updates;
    take_versions();
  };
  take_versions();
  const int batch = setup.training.global_batch;
  const SyntheticTask task(arch, batch, options.seed);
  MeasuredRun result;
  // Data-parallel replicas each take their slice of the batch in the same microbatches;
  // replica r's microbatch j is the Program's microbatch j + r M. An update applies the
  // gradients of every replica's microbatch j (PipeDream) or of the whole iteration.
  const int replicas = setup.training.data_parallel;
  const int slice = batch / replicas;
  const int microbatches = setup.training.microbatches;
  const std::vector<SampleRange> ranges = equal_ranges(slice, microbatches);
  for (int it = 0; it < setup.training.iterations; ++it) {
    const torch::Tensor x = task.inputs(it), y = task.targets(it);
    double loss_sum = 0;
    for (int j = 0; j < microbatches; ++j) {
      for (int replica = 0; replica < replicas; ++replica) {
        const SampleRange r = {ranges[j].lo + replica * slice, ranges[j].hi + replica * slice};
        torch::Tensor out = x.slice(0, r.lo, r.hi);
        for (int s = 0; s < stages; ++s) {
          const int v = stale.version.at({s, it, j + replica * microbatches});
          const auto found = versions[s].find(v);
          if (found == versions[s].end()) {
            throw std::logic_error("stage " + std::to_string(s) + " has no weight version " +
                                   std::to_string(v));
          }
          out = found->second->forward(out);
        }
        const double share = static_cast<double>(r.size()) / batch;
        const torch::Tensor loss = zoo_loss(arch, out, y.slice(0, r.lo, r.hi)) * share;
        loss_sum += loss.item<double>();
        loss.backward();
      }
      if (stale.update_every_microbatch) update();
    }
    if (!stale.update_every_microbatch) update();
    result.losses.push_back(loss_sum);
  }
  for (int l = 0; l < static_cast<int>(arch.layers.size()); ++l) {
    result.weights.push_back(parameter_sum(model.layer(l)));
  }
  return result;
}

}  // namespace pipetwin
