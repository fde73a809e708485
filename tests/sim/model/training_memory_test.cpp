// The memory model's resident bytes: per parameter by precision and optimizer, and per
// device in a built Program.
#include "sim/model/training_memory.h"

#include <gtest/gtest.h>

#include "sim/build_program.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

// Resident bytes per parameter: fp32 Adam 16, fp16 Adam 8, mixed-precision Adam 16
// (2 + 2 + 4 master + 8 moments, as ZeRO counts), SGD fp32 8, momentum mixed 12.
TEST(TrainingMemory, BytesPerParameterFollowPrecisionAndOptimizer) {
  auto total = [](proto::Precision precision, bool mixed, proto::Optimizer optimizer) {
    TrainingSpec t;
    t.precision = precision;
    t.mixed_precision = mixed;
    t.optimizer = optimizer;
    return bytes_per_parameter(t).total();
  };
  EXPECT_EQ(total(proto::FP32, false, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP16, false, proto::ADAM), 8);
  EXPECT_EQ(total(proto::BF16, true, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP32, false, proto::SGD), 8);
  EXPECT_EQ(total(proto::FP16, true, proto::MOMENTUM), 12);
  EXPECT_EQ(total(proto::FP16, true, proto::SGD), 8);
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

}  // namespace
}  // namespace pipetwin
