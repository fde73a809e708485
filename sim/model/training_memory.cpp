#include "sim/model/training_memory.h"

#include "sim/model/number_format.h"

namespace pipetwin {

BytesPerParameter bytes_per_parameter(const TrainingSpec& training) {
  const double word = training.precision == proto::FP32 ? 4 : 2;
  // Optimizer state lives in fp32 under mixed precision, next to the fp32 master copy.
  const double state_word = training.mixed_precision ? 4 : word;
  BytesPerParameter b;
  b.weights = word;
  b.gradients = word;
  switch (training.optimizer) {
    case proto::SGD:
      b.optimizer = 0;
      break;
    case proto::MOMENTUM:
      b.optimizer = state_word;
      break;
    case proto::ADAM:
      b.optimizer = 2 * state_word;
      break;
  }
  if (training.mixed_precision) b.optimizer += 4;  // fp32 master weights
  // The low-precision formats: the GEMMs read copies of the weights in the format, next to the
  // BF16 weights, or instead of them when the weights are kept only in the format.
  const NumberFormat format = number_format(training.precision, training.fp8_scaling);
  if (format.low_precision) {
    b.weights =
        training.fp8_param_gather ? format.weight_copy_bytes : b.weights + format.weight_copy_bytes;
  }
  return b;
}

BytesPerParameter sharded(const BytesPerParameter& whole, int32_t zero_stage, int32_t holders) {
  BytesPerParameter b = whole;
  const double n = holders;
  if (zero_stage >= 1) b.optimizer /= n;
  if (zero_stage >= 2) b.gradients /= n;
  if (zero_stage >= 3) b.weights /= n;
  return b;
}

double optimizer_step_bytes(const TrainingSpec& training) {
  const BytesPerParameter b = bytes_per_parameter(training);
  // The low-precision copies are written (cast from the master weights) with the weights.
  const double weight = training.mixed_precision ? b.weights : 2 * b.weights;
  return 2 * b.gradients + 2 * b.optimizer + weight;
}

}  // namespace pipetwin
