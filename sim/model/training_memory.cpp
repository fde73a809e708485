#include "sim/model/training_memory.h"

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
  return b;
}

}  // namespace pipetwin
