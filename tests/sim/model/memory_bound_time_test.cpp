// Memory-bound kernels of the zoo GPT (model.zoo.memory_efficiency): a block's forward pays
// (38sh + 9as^2) bytes per sample over the bandwidth it reaches, its backward twice that;
// with tensor parallelism the layernorms and residual adds (22sh) stay whole on every GPU
// unless sequence parallelism splits them; wider models spend a smaller share of their time
// in them; the optimizer step moves its bytes per parameter over the same bandwidth, on each
// tensor-parallel GPU's share of the weights and each ZeRO replica's share of those; bad
// settings name the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

constexpr double kBandwidth = 3350e9, kPeak = 989e12;  // the scenario's dgx-h100

ResolvedScenario gpt(int hidden, int heads, double memory_efficiency,
                     std::vector<std::string> more = {}) {
  std::vector<std::string> overrides = {
      "model.zoo.layers=2",
      "model.zoo.hidden=" + std::to_string(hidden),
      "model.zoo.heads=" + std::to_string(heads),
      "model.zoo.seq_len=512",
      "model.zoo.vocab=8192",
      "model.zoo.efficiency=0.5",
      "model.zoo.memory_efficiency=" + std::to_string(memory_efficiency),
      "schedule.stages=1",
      "training.microbatches=1",
      "training.global_batch=1"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", overrides));
}

TEST(MemoryBoundTime, ABlockPaysItsBytesOverTheBandwidthItReaches) {
  const double s = 512, h = 1024, a = 16, e = 0.8;
  const ResolvedScenario setup = gpt(1024, 16, e);
  const ModelLayer& block = setup.model.layers[1];
  const double flops = 24 * s * h * h + 4 * s * s * h;
  const double bytes = 38 * s * h + 9 * a * s * s;
  const double device = kPeak * 0.5;
  EXPECT_NEAR(block.fwd.seconds(1, device), flops / device + bytes / (e * kBandwidth), 1e-15);
  EXPECT_NEAR(block.bwd.seconds(1, device), 2 * flops / device + 2 * bytes / (e * kBandwidth),
              1e-15);
}

TEST(MemoryBoundTime, LayernormsAndResidualsStayWholeOnTensorParallelGpus) {
  const double s = 512, h = 1024, a = 16, e = 0.8, tp = 4;
  const double device = kPeak * 0.5, rate = e * kBandwidth;
  const double flops = 24 * s * h * h + 4 * s * s * h;
  const double whole = 22 * s * h, split = 16 * s * h + 9 * a * s * s;
  const ModelLayer tp_block = gpt(1024, 16, e, {"training.tensor_parallel=4"}).model.layers[1];
  EXPECT_NEAR(tp_block.fwd.curve(device, 4).seconds(1),
              flops / device / tp + split / rate / tp + whole / rate, 1e-15);
  const ModelLayer sp_block =
      gpt(1024, 16, e, {"training.tensor_parallel=4", "training.sequence_parallel=true"})
          .model.layers[1];
  EXPECT_NEAR(sp_block.fwd.curve(device, 4).seconds(1),
              (flops / device + (split + whole) / rate) / tp, 1e-15);
}

// The published reason large GPTs reach more of the peak: the GEMMs grow as h^2, the
// memory-bound kernels as h.
TEST(MemoryBoundTime, WiderModelsSpendASmallerShareInMemoryBoundKernels) {
  double previous_share = 1;
  for (const int hidden : {1024, 2048, 4096, 8192}) {
    const double device = kPeak * 0.5;
    const double with = gpt(hidden, 16, 0.8).model.layers[1].fwd.seconds(1, device);
    const double without = gpt(hidden, 16, 0, {}).model.layers[1].fwd.seconds(1, device);
    const double share = 1 - without / with;
    EXPECT_GT(share, 0) << hidden;
    EXPECT_LT(share, previous_share) << hidden;
    previous_share = share;
  }
}

// The OPTIM instructions' times in the built Program, one per device.
std::vector<double> optimizer_steps(const ResolvedScenario& setup) {
  std::vector<double> steps;
  const Program program = build_program(setup);
  for (const Instruction& ins : program.instructions) {
    if (ins.op == Op::kOptim) steps.push_back(ins.compute_s);
  }
  return steps;
}

double parameters(const ResolvedScenario& setup) {
  double sum = 0;
  for (const ModelLayer& layer : setup.model.layers) sum += layer.parameter_bytes / 4.0;
  return sum;
}

// Mixed-precision Adam moves 30 bytes per parameter (sim/model/training_memory.h).
TEST(MemoryBoundTime, TheOptimizerStepMovesItsBytesOverTheBandwidthItReaches) {
  const double e = 0.8, rate = e * kBandwidth, bytes = 30;
  const std::vector<std::string> adam = {"training.precision=FP16", "training.mixed_precision=true",
                                         "training.optimizer=ADAM"};
  const ResolvedScenario whole = gpt(1024, 16, e, adam);
  const double step = parameters(whole) * bytes / rate;
  EXPECT_GT(step, 0);
  for (double s : optimizer_steps(whole)) EXPECT_NEAR(s, step, step * 1e-12);

  std::vector<std::string> tp = adam;
  tp.push_back("training.tensor_parallel=4");
  const std::vector<double> tp_steps = optimizer_steps(gpt(1024, 16, e, tp));
  ASSERT_EQ(tp_steps.size(), 4u);
  for (double s : tp_steps) EXPECT_NEAR(s, step / 4, step * 1e-12);

  std::vector<std::string> zero = adam;
  zero.insert(zero.end(), {"training.data_parallel=4", "training.global_batch=4",
                           "training.zero_stage=ZERO_1"});
  const std::vector<double> zero_steps = optimizer_steps(gpt(1024, 16, e, zero));
  ASSERT_EQ(zero_steps.size(), 4u);
  for (double s : zero_steps) EXPECT_NEAR(s, step / 4, step * 1e-12);

  // Without a memory bandwidth to time it by, the zoo's step is free, as before.
  for (double s : optimizer_steps(gpt(1024, 16, 0, adam))) EXPECT_EQ(s, 0);
}

TEST(MemoryBoundTimeCli, BadSettingsNameTheField) {
  const struct {
    std::string sets, field;
  } cases[] = {
      {"--set model.zoo.memory_efficiency=1.5", "model.zoo.memory_efficiency"},
      {"--set model.zoo.memory_efficiency=0.5 --set cluster.gpu.memory_bandwidth_gbytes_per_s=0",
       "cluster.gpu.memory_bandwidth_gbytes_per_s"},
  };
  for (const auto& c : cases) {
    const testing::CliResult r = testing::run_pipetwin("simulate builtin:gpt-8gpu-1f1b " + c.sets);
    EXPECT_EQ(r.exit_code, 2) << c.sets;
    EXPECT_THAT(r.err, HasSubstr(c.field)) << c.sets;
  }
  const testing::CliResult vgg = testing::run_pipetwin(
      "simulate builtin:gpt-8gpu-1f1b --set model.zoo.name=\"vgg16\" "
      "--set model.zoo.memory_efficiency=0.5 --set model.zoo.image_size=32");
  EXPECT_EQ(vgg.exit_code, 2);
  EXPECT_THAT(vgg.err, HasSubstr("only the gpt zoo model"));
}

}  // namespace
}  // namespace pipetwin
