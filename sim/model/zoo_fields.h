// What every zoo model shares: checking its fields (errors name "model.zoo.<field>") and
// building a layer from FLOP and byte counts. The models themselves are zoo.cpp and
// zoo_transformer.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "scenario.pb.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

inline constexpr double kZooFp32 = 4;  // bytes: weights, and the CNN/MLP activations
inline constexpr double kZooHalf = 2;  // bytes: transformer activations (fp16/bf16)

[[noreturn]] void zoo_field_error(const std::string& field, const std::string& what);
// A number as %g writes it, for error messages.
std::string zoo_number(double value);
// A required, strictly positive integer field.
int64_t zoo_positive(bool present, int32_t value, const std::string& field);
// model.zoo.layers, required, positive and at most a sane maximum.
int64_t zoo_layer_count(const proto::Zoo& zoo);

// A layer of `fwd_flops` per sample whose backward costs twice that (input and weight
// gradients) and whose weight gradients (zero-bubble W) cost the forward's FLOPs when it has
// weights.
ModelLayer zoo_layer(std::string name, double fwd_flops, double activation_bytes,
                     double stash_bytes, int64_t parameter_bytes);

}  // namespace pipetwin
