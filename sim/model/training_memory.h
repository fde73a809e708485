// What a parameter costs in device memory while it trains: its weight, its gradient and
// the optimizer's state, by precision and optimizer. Model parameter_bytes are fp32
// bytes, so a layer has parameter_bytes / 4 parameters.
#pragma once

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct BytesPerParameter {
  double weights = 4;
  double gradients = 4;
  double optimizer = 8;  // Adam's two moments; with mixed precision also the fp32 master
  double total() const { return weights + gradients + optimizer; }
};

//   fp32:               4 + 4 + {SGD 0, momentum 4, Adam 8}
//   fp16/bf16:          2 + 2 + {SGD 0, momentum 2, Adam 4}
//   mixed (16-bit):     2 + 2 + 4 master + {SGD 0, momentum 4, Adam 8}: 16 with Adam (ZeRO)
//   low precision:      mixed, plus the weights' copies in the format (NumberFormat::
//                       weight_copy_bytes: 2 for FP8); with fp8_param_gather the copies replace
//                       the BF16 weights: FP8 Adam 2 + 2 + 2 + 12 = 18, or 2 + 2 + 12 = 16.
BytesPerParameter bytes_per_parameter(const TrainingSpec& training);

// ZeRO (Rajbhandari et al., SC 2020, section 5.1): with `holders` data-parallel replicas
// of the same weights, stage 1 keeps 1/holders of the optimizer state, stage 2 also of the
// gradients, stage 3 also of the weights. Mixed-precision Adam (2 + 2 + 12 bytes):
//   stage 1: 4 + 12/N,   stage 2: 2 + 14/N,   stage 3: 16/N.
BytesPerParameter sharded(const BytesPerParameter& whole, int32_t zero_stage, int32_t holders);

// The bytes one optimizer step moves through device memory per parameter it updates. A fused
// multi-tensor update (apex's FusedAdam, torch.optim's fused and foreach kernels) reads the
// gradient, reads and writes every state word (the moments, the fp32 master copy) and writes
// the trained weight, which it also reads when no master copy stands in for it; clipping by
// the gradients' norm, on in every large-model recipe, reads the gradients once more:
//   mixed-precision Adam: 2 + 2 * 12 + 2 + 2 = 30,   fp32 Adam: 4 + 2 * 8 + 2 * 4 + 4 = 32.
// A low-precision format also writes the weights' copies in it: FP8 Adam 30 + 2 = 32.
double optimizer_step_bytes(const TrainingSpec& training);

inline constexpr double kFp32BytesPerParameter = 4;

}  // namespace pipetwin
