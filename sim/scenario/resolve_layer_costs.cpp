#include "sim/scenario/resolve_layer_costs.h"

#include <algorithm>
#include <vector>

namespace pipetwin {
namespace {

// The weight-gradient part of a layer's backward (zero-bubble schedules) comes in the form
// of its bwd cost and cannot exceed it.
void check_weight_gradient_cost(const ScenarioChecker& check, const proto::Layer& layer,
                                const std::string& path) {
  const bool curve = layer.has_bwd_weight_fixed_ms() || layer.has_bwd_weight_per_sample_ms();
  if (layer.has_bwd_weight_ms()) {
    if (!layer.has_bwd_ms()) {
      check.fail(path + ".bwd_weight_ms",
                 "goes with bwd_ms (use bwd_weight_fixed_ms/"
                 "bwd_weight_per_sample_ms, or cost_points' "
                 "bwd_weight_ms, in the form of the backward's cost)");
    }
    check.non_negative(layer.bwd_weight_ms(), path + ".bwd_weight_ms");
    if (layer.bwd_weight_ms() > layer.bwd_ms()) {
      check.fail(path + ".bwd_weight_ms", "exceeds bwd_ms, the whole backward");
    }
  }
  if (curve) {
    const std::string field =
        path +
        (layer.has_bwd_weight_fixed_ms() ? ".bwd_weight_fixed_ms" : ".bwd_weight_per_sample_ms");
    if (!layer.has_bwd_fixed_ms() && !layer.has_bwd_per_sample_ms()) {
      check.fail(field, "goes with bwd_fixed_ms/bwd_per_sample_ms");
    }
    check.non_negative(layer.bwd_weight_fixed_ms(), path + ".bwd_weight_fixed_ms");
    check.non_negative(layer.bwd_weight_per_sample_ms(), path + ".bwd_weight_per_sample_ms");
    if (layer.bwd_weight_fixed_ms() > layer.bwd_fixed_ms()) {
      check.fail(path + ".bwd_weight_fixed_ms", "exceeds bwd_fixed_ms");
    }
    if (layer.bwd_weight_per_sample_ms() > layer.bwd_per_sample_ms()) {
      check.fail(path + ".bwd_weight_per_sample_ms", "exceeds bwd_per_sample_ms");
    }
  }
  int with_weight = 0;
  for (int k = 0; k < layer.cost_points_size(); ++k) {
    const proto::CostPoint& point = layer.cost_points(k);
    if (!point.has_bwd_weight_ms()) continue;
    ++with_weight;
    const std::string at = path + ".cost_points[" + std::to_string(k) + "].bwd_weight_ms";
    check.non_negative(point.bwd_weight_ms(), at);
    if (point.bwd_weight_ms() > point.bwd_ms()) check.fail(at, "exceeds the point's bwd_ms");
  }
  if (with_weight > 0 && with_weight < layer.cost_points_size()) {
    check.fail(path + ".cost_points", "give bwd_weight_ms at every point or at none");
  }
  if (layer.has_bwd_weight_stash_bytes()) {
    check.non_negative(layer.bwd_weight_stash_bytes(), path + ".bwd_weight_stash_bytes");
    const int64_t stash = layer.has_stash_bytes() ? layer.stash_bytes() : layer.activation_bytes();
    if (layer.bwd_weight_stash_bytes() > stash) {
      check.fail(path + ".bwd_weight_stash_bytes",
                 "exceeds the layer's stash (" + std::to_string(stash) + " bytes)");
    }
  }
}

}  // namespace

// A layer gives each direction's cost one way: fwd_ms (scaled linearly), fixed and/or
// per-sample, or cost_points.
void check_layer_cost(const ScenarioChecker& check, const proto::Layer& layer,
                      const std::string& path) {
  const bool points = layer.cost_points_size() > 0;
  for (const bool fwd : {true, false}) {
    const std::string dir = fwd ? "fwd" : "bwd";
    const bool plain = fwd ? layer.has_fwd_ms() : layer.has_bwd_ms();
    const bool curve = fwd ? layer.has_fwd_fixed_ms() || layer.has_fwd_per_sample_ms()
                           : layer.has_bwd_fixed_ms() || layer.has_bwd_per_sample_ms();
    const int ways = plain + curve + points;
    if (ways == 0) {
      check.fail(path + "." + dir + "_ms", "missing (give " + dir + "_ms, " + dir + "_fixed_ms/" +
                                               dir + "_per_sample_ms, or cost_points)");
    }
    if (ways > 1) {
      check.fail(path + "." + dir + "_ms", "give only one of " + dir + "_ms, " + dir +
                                               "_fixed_ms/" + dir + "_per_sample_ms, cost_points");
    }
    check.non_negative(fwd ? layer.fwd_ms() : layer.bwd_ms(), path + "." + dir + "_ms");
    check.non_negative(fwd ? layer.fwd_fixed_ms() : layer.bwd_fixed_ms(),
                       path + "." + dir + "_fixed_ms");
    check.non_negative(fwd ? layer.fwd_per_sample_ms() : layer.bwd_per_sample_ms(),
                       path + "." + dir + "_per_sample_ms");
  }
  check_weight_gradient_cost(check, layer, path);
  std::vector<int> batches;
  for (int k = 0; k < layer.cost_points_size(); ++k) {
    const proto::CostPoint& point = layer.cost_points(k);
    const std::string at = path + ".cost_points[" + std::to_string(k) + "]";
    check.positive(point.has_batch(), point.batch(), at + ".batch");
    check.require(point.has_fwd_ms(), at + ".fwd_ms");
    check.require(point.has_bwd_ms(), at + ".bwd_ms");
    check.non_negative(point.fwd_ms(), at + ".fwd_ms");
    check.non_negative(point.bwd_ms(), at + ".bwd_ms");
    if (std::find(batches.begin(), batches.end(), point.batch()) != batches.end()) {
      check.fail(at + ".batch", "batch " + std::to_string(point.batch()) + " measured twice");
    }
    batches.push_back(point.batch());
  }
}

}  // namespace pipetwin
