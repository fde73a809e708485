// The correctness reference: the same training in one process, without a pipeline.
#include <chrono>

#include "backend/torch/rank_model.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/zoo_modules.h"
#include "sim/driver/build_program.h"

namespace pipetwin {

MeasuredRun run_reference(const ResolvedScenario& setup, const RealRunOptions& options,
                          const std::vector<FreezeEvent>& freezes) {
  torch::set_num_threads(1);
  const ZooArchitecture arch = zoo_architecture(*setup.zoo);
  const int layers = static_cast<int>(arch.layers.size());
  RankModel held(arch, setup.training.optimizer, options.seed);
  torch::nn::Sequential model = held.stage(0, layers);
  const int batch = setup.training.global_batch;
  const SyntheticTask task(arch, batch, options.seed);
  MeasuredRun result;
  const auto start = std::chrono::steady_clock::now();
  for (int it = 0; it < setup.training.iterations; ++it) {
    for (const FreezeEvent& e : freezes) {
      if (e.iteration == it) held.freeze_prefix(e.frozen_layers);
    }
    const torch::Tensor x = task.inputs(it), y = task.targets(it);
    double loss_sum = 0;
    for (const SampleRange r : equal_ranges(batch, setup.training.microbatches)) {
      const torch::Tensor out = model->forward(x.slice(0, r.lo, r.hi));
      // Mean over the minibatch: each microbatch weighs by its share of samples.
      const double share = static_cast<double>(r.size()) / batch;
      const torch::Tensor loss = zoo_loss(arch, out, y.slice(0, r.lo, r.hi)) * share;
      loss_sum += loss.item<double>();
      loss.backward();
    }
    held.step(0, layers);
    result.losses.push_back(loss_sum);
  }
  result.train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int l = 0; l < layers; ++l) result.weights.push_back(parameter_sum(*model[l]));
  return result;
}

}  // namespace pipetwin
