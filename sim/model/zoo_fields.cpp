#include "sim/model/zoo_fields.h"

#include <cstdio>
#include <utility>

#include "sim/spec/errors.h"

namespace pipetwin {

void zoo_field_error(const std::string& field, const std::string& what) {
  throw InputError("model.zoo." + field + ": " + what);
}

std::string zoo_number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

int64_t zoo_positive(bool present, int32_t value, const std::string& field) {
  if (!present) zoo_field_error(field, "missing (required by this zoo model)");
  if (value <= 0) zoo_field_error(field, "must be positive, got " + std::to_string(value));
  return value;
}

namespace {
// The largest models trained have a few hundred blocks; a count with extra zeros would build
// millions of layers (gigabytes) before any resource limit sees the Program.
constexpr int64_t kMaxZooLayers = 100'000;
}  // namespace

int64_t zoo_layer_count(const proto::Zoo& zoo) {
  const int64_t n = zoo_positive(zoo.has_layers(), zoo.layers(), "layers");
  if (n > kMaxZooLayers) {
    zoo_field_error("layers",
                    "at most " + std::to_string(kMaxZooLayers) + ", got " + std::to_string(n));
  }
  return n;
}

ModelLayer zoo_layer(std::string name, double fwd_flops, double activation_bytes,
                     double stash_bytes, int64_t parameter_bytes) {
  ModelLayer l;
  l.name = std::move(name);
  l.fwd.flops_per_sample = fwd_flops;
  // The backward computes both the input gradient and the weight gradient, each as
  // expensive as the forward: the usual 2x (Narayanan et al. 2021, Kaplan et al. 2020).
  l.bwd.flops_per_sample = 2 * fwd_flops;
  l.activation_bytes_per_sample = activation_bytes;
  l.stash_bytes_per_sample = stash_bytes;
  l.parameter_bytes = parameter_bytes;
  // Zero-bubble split: the weight gradients of a linear or convolutional layer are one
  // GEMM as large as its forward; a layer without weights has none. W keeps the whole
  // stash until it runs (its inputs are counted in the stashes).
  l.bwd_weight = LayerCost{};
  l.bwd_weight->flops_per_sample = parameter_bytes > 0 ? fwd_flops : 0;
  return l;
}

}  // namespace pipetwin
