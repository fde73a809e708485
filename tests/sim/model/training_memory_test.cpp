// The memory model's resident bytes: per parameter by precision and optimizer, and per
// device in a built Program.
#include "sim/model/training_memory.h"

#include <gtest/gtest.h>

#include "sim/driver/build_program.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

TrainingSpec training(proto::Precision precision, bool mixed, proto::Optimizer optimizer) {
  TrainingSpec t;
  t.precision = precision;
  t.mixed_precision = mixed;
  t.optimizer = optimizer;
  return t;
}

// Resident bytes per parameter: fp32 Adam 16, fp16 Adam 8, mixed-precision Adam 16
// (2 + 2 + 4 master + 8 moments, as ZeRO counts), SGD fp32 8, momentum mixed 12.
TEST(TrainingMemory, BytesPerParameterFollowPrecisionAndOptimizer) {
  auto total = [](proto::Precision precision, bool mixed, proto::Optimizer optimizer) {
    return bytes_per_parameter(training(precision, mixed, optimizer)).total();
  };
  EXPECT_EQ(total(proto::FP32, false, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP16, false, proto::ADAM), 8);
  EXPECT_EQ(total(proto::BF16, true, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP32, false, proto::SGD), 8);
  EXPECT_EQ(total(proto::FP16, true, proto::MOMENTUM), 12);
  EXPECT_EQ(total(proto::FP16, true, proto::SGD), 8);
}

// An optimizer step's traffic per parameter: gradient read twice (update, norm), state read
// and written, weight written (and read without a master copy).
TEST(TrainingMemory, OptimizerStepBytesFollowPrecisionAndOptimizer) {
  auto bytes = [](proto::Precision precision, bool mixed, proto::Optimizer optimizer) {
    return optimizer_step_bytes(training(precision, mixed, optimizer));
  };
  EXPECT_EQ(bytes(proto::FP16, true, proto::ADAM), 2 * 2 + 2 * 12 + 2);
  EXPECT_EQ(bytes(proto::FP32, false, proto::ADAM), 2 * 4 + 2 * 8 + 2 * 4);
  EXPECT_EQ(bytes(proto::FP32, false, proto::SGD), 2 * 4 + 2 * 4);
  EXPECT_EQ(bytes(proto::BF16, true, proto::MOMENTUM), 2 * 2 + 2 * 8 + 2);
}

// The Program's resident bytes on a device: parameters (parameter_bytes / 4) times the
// bytes per parameter of its layers.
TEST(TrainingMemory, ResidentBytesPerDevice) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 2, 4, 1e-3, 2e-3);
  for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 4'000'000;
  setup.training.optimizer = proto::ADAM;
  setup.training.precision = proto::BF16;
  setup.training.mixed_precision = true;
  const Program p = build_program(setup);
  EXPECT_EQ(p.static_bytes[0], 16 * 1'000'000);
  EXPECT_EQ(p.static_bytes[1], 16 * 1'000'000);
}

// ZeRO's table (Rajbhandari et al. 2020, figure 1) for mixed-precision Adam, K = 12:
// stage 1 keeps 4 + 12/N bytes per parameter, stage 2 2 + 14/N, stage 3 16/N; and the same
// split for any other optimizer and precision (fp32 momentum: 4 weights, 4 gradients, 4).
TEST(TrainingMemory, ZeroStagesShardWhatTheySay) {
  TrainingSpec mixed;
  mixed.precision = proto::BF16;
  mixed.mixed_precision = true;
  mixed.optimizer = proto::ADAM;
  TrainingSpec momentum;
  momentum.optimizer = proto::MOMENTUM;
  const BytesPerParameter adam = bytes_per_parameter(mixed);
  const BytesPerParameter plain = bytes_per_parameter(momentum);
  for (int32_t n = 1; n <= 1024; ++n) {
    const double N = n;
    EXPECT_EQ(sharded(adam, 0, n).total(), 16);
    EXPECT_DOUBLE_EQ(sharded(adam, 1, n).total(), 4 + 12 / N);
    EXPECT_DOUBLE_EQ(sharded(adam, 2, n).total(), 2 + 14 / N);
    EXPECT_DOUBLE_EQ(sharded(adam, 3, n).total(), 16 / N);
    EXPECT_DOUBLE_EQ(sharded(plain, 1, n).total(), 8 + 4 / N);
    EXPECT_DOUBLE_EQ(sharded(plain, 2, n).total(), 4 + 8 / N);
    EXPECT_DOUBLE_EQ(sharded(plain, 3, n).total(), 12 / N);
  }
}

// In a built Program each device keeps its stage's parameters at the sharded rate over the
// data-parallel replicas; stage 3 also holds two of its layers' 16-bit weights whole (the one
// computing and the one prefetched).
TEST(TrainingMemory, ZeroShardsResidentBytesOverReplicas) {
  for (int32_t zero_stage = 0; zero_stage <= 3; ++zero_stage) {
    ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 2, 4, 1e-3, 2e-3);
    const int32_t replicas = 4;
    for (int d = 2; d < 2 * replicas; ++d) {
      setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
    }
    setup.cluster.gpus_per_node = 2 * replicas;
    setup.training.data_parallel = replicas;
    setup.training.global_batch *= replicas;
    for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 4'000'000;
    setup.training.optimizer = proto::ADAM;
    setup.training.precision = proto::BF16;
    setup.training.mixed_precision = true;
    setup.training.zero_stage = zero_stage;
    const Program p = build_program(setup);
    const double per_parameter[] = {16, 4 + 12.0 / replicas, 2 + 14.0 / replicas, 16.0 / replicas};
    const int64_t gathered = zero_stage == 3 ? 2 * 2 * 1'000'000 : 0;
    for (int32_t d = 0; d < p.num_devices; ++d) {
      EXPECT_EQ(p.static_bytes[d], std::llround(per_parameter[zero_stage] * 1'000'000) + gathered)
          << "stage " << zero_stage << ", gpu " << d;
    }
  }
}

}  // namespace
}  // namespace pipetwin
