#include "sim/scenario/resolve_model.h"

#include <algorithm>
#include <optional>

#include "sim/model/activation_recompute.h"
#include "sim/model/format_casts.h"
#include "sim/model/memory_bound_time.h"
#include "sim/model/model_sources.h"
#include "sim/model/number_format.h"
#include "sim/model/shape_efficiency.h"
#include "sim/model/training_memory.h"
#include "sim/scenario/resolve_layer_costs.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

ModelSpec resolve_layers(const ScenarioChecker& check, const proto::Model& m) {
  for (int i = 0; i < m.layers_size(); ++i) {
    const proto::Layer& layer = m.layers(i);
    const std::string path = "model.layers[" + std::to_string(i) + "]";
    check_layer_cost(check, layer, path);
    check.non_negative(layer.optim_ms(), path + ".optim_ms");
    check.non_negative(layer.activation_bytes(), path + ".activation_bytes");
    check.non_negative(layer.parameter_bytes(), path + ".parameter_bytes");
    check.non_negative(layer.stash_bytes(), path + ".stash_bytes");
  }
  check.positive(m.has_layer_batch(), m.layer_batch(), "model.layer_batch");
  return model_from_layers(m, m.layer_batch());
}

ModelSpec resolve_zoo(const ScenarioChecker& check, const proto::Model& m) {
  try {
    return model_from_zoo(m.zoo());
  } catch (const InputError& e) {
    // The zoo names the field as "model.zoo.<field>: problem"; add the location.
    const std::string message = e.what();
    const size_t colon = message.find(": ");
    if (message.rfind("model.zoo", 0) != 0 || colon == std::string::npos) throw;
    check.fail(message.substr(0, colon), message.substr(colon + 2));
  }
}

// Tensor and expert parallelism split a zoo model by its structure (which collectives each
// layer runs, which of its activations stay whole, which weights are experts'), which measured
// layers alone do not carry: the zoo's layers keep their structure and take the measured costs
// of the whole layer (profile, calibrate), which the lowering divides among a stage's
// tensor-parallel GPUs as it divides the zoo's; an expert-parallel GPU computes a whole MoE
// layer's worth, its experts for every GPU's tokens. The measured time holds the
// memory-bound kernels, and the weight-gradient share is the measured layer's.
ModelSpec measured_costs_on_the_zoo(ModelSpec zoo, const ModelSpec& measured) {
  for (size_t i = 0; i < zoo.layers.size(); ++i) {
    ModelLayer& layer = zoo.layers[i];
    const ModelLayer& costs = measured.layers[i];
    layer.fwd = costs.fwd;
    layer.bwd = costs.bwd;
    layer.optim_seconds = costs.optim_seconds;
    layer.bwd_weight = costs.bwd_weight;  // measured, or unset: half the backward
    layer.fwd_memory_bytes_per_sample = 0;
    layer.tp_undivided_memory_bytes_per_sample = 0;
    layer.attention_memory_bytes_per_sample = 0;
    layer.gemms.clear();
  }
  return zoo;
}

}  // namespace

ModelSpec resolve_model(const ScenarioChecker& check, const LoadedScenario& loaded) {
  const proto::Scenario& s = loaded.scenario;
  check.require(s.has_model(), "model");
  const proto::Model& m = s.model();
  // A zoo model may carry explicit layers: measured costs (pipetwin profile, calibrate
  // --from) of the architecture the real backends build from the zoo block.
  const bool measured_zoo = m.has_zoo() && m.layers_size() > 0;
  const int sources = (m.layers_size() > 0) + m.has_pipedream_profile() + m.has_zoo();
  if (sources != 1 && !(measured_zoo && sources == 2)) {
    check.fail("model", sources == 0 ? "no model: give layers, pipedream_profile or zoo"
                                     : "give exactly one of layers, pipedream_profile, zoo "
                                       "(or a zoo with its measured layers)");
  }
  if (measured_zoo) {
    const size_t architecture_layers = resolve_zoo(check, m).layers.size();
    if (static_cast<size_t>(m.layers_size()) != architecture_layers) {
      check.fail("model.layers", "has " + std::to_string(m.layers_size()) +
                                     " layers but the zoo model has " +
                                     std::to_string(architecture_layers));
    }
  }
  if (measured_zoo && (s.training().tensor_parallel() > 1 || s.training().expert_parallel() > 1)) {
    return measured_costs_on_the_zoo(resolve_zoo(check, m), resolve_layers(check, m));
  }
  if (m.layers_size() > 0) return resolve_layers(check, m);
  if (m.has_pipedream_profile()) {
    check.positive(m.has_profile_batch(), m.profile_batch(), "model.profile_batch");
    const std::string text =
        read_scenario_relative_file(loaded, m.pipedream_profile(), "model.pipedream_profile");
    return model_from_pipedream(text, m.profile_batch(), m.profile_input_cost(),
                                m.pipedream_profile());
  }
  return resolve_zoo(check, m);
}

bool counts_memory_bound_kernels(const proto::Scenario& s) {
  return s.model().has_zoo() && s.model().zoo().memory_efficiency() != 0 &&
         s.model().layers_size() == 0;
}

// model.zoo.memory_efficiency: before recomputation, which reruns these kernels too.
void add_memory_bound_kernels(const ScenarioChecker& check, const proto::Scenario& s,
                              ResolvedScenario& setup) {
  const double efficiency = s.model().zoo().memory_efficiency();
  if (!(efficiency > 0 && efficiency <= 1)) {
    check.fail("model.zoo.memory_efficiency", "must be in (0, 1], got " + number_text(efficiency));
  }
  const double bandwidth = s.cluster().gpu().memory_bandwidth_gbytes_per_s();
  if (!(bandwidth > 0)) {
    check.fail("cluster.gpu.memory_bandwidth_gbytes_per_s",
               "model.zoo.memory_efficiency times memory-bound kernels by it: set it (GB/s)");
  }
  const bool counted =
      std::any_of(setup.model.layers.begin(), setup.model.layers.end(),
                  [](const ModelLayer& l) { return l.fwd_memory_bytes_per_sample > 0; });
  if (!counted) {
    check.fail("model.zoo.memory_efficiency",
               "only the gpt zoo model counts its memory-bound kernels");
  }
  add_format_casts(setup.model,
                   number_format(setup.training.precision, setup.training.fp8_scaling));
  add_memory_bound_time(setup.model, efficiency * bandwidth * 1e9,
                        setup.training.sequence_parallel);
  setup.model.optimizer_seconds_per_parameter =
      optimizer_step_bytes(setup.training) / (efficiency * bandwidth * 1e9);
}

void add_shape_efficiency(const proto::Scenario& s, ResolvedScenario& setup) {
  const bool shaped = !s.model().zoo().has_efficiency() && setup.cluster.gemm_curve;
  // A low-precision format runs the linear layers' GEMMs at its own peak, on the GPU's curve or,
  // with a flat efficiency, at that efficiency of the format's peak.
  const bool low_precision = setup.training.format_peak_flops > 0;
  if (!s.model().has_zoo() || s.model().layers_size() > 0 || !(shaped || low_precision)) return;
  // Models without GEMM shapes (the convolutional nets, the MLP) keep the flat efficiency.
  const auto& layers = setup.model.layers;
  if (std::none_of(layers.begin(), layers.end(),
                   [](const ModelLayer& l) { return !l.gemms.empty(); })) {
    return;
  }
  const TrainingSpec& t = setup.training;
  const double samples =
      static_cast<double>(t.global_batch) / (static_cast<double>(t.data_parallel) * t.microbatches);
  if (!(samples > 0)) return;  // the training section's own checks say why
  GemmCurve curve;
  if (shaped) {
    curve = *setup.cluster.gemm_curve;
  } else {
    curve.peak_flops = setup.cluster.devices.front().peak_flops;
    curve.peak_fraction = setup.model.efficiency;
  }
  std::optional<GemmCurve> format;
  if (low_precision) {
    format = curve;
    format->peak_flops = t.format_peak_flops;
    format->operand_bytes = number_format(t.precision, t.fp8_scaling).element_bytes;
  }
  apply_shape_efficiency(
      setup.model, curve, samples,
      {t.tensor_parallel, t.context_parallel, t.expert_parallel, t.expert_tensor()},
      format ? &*format : nullptr);
}

void add_activation_recompute(const ScenarioChecker& check, ResolvedScenario& setup) {
  if (setup.training.recompute == proto::Training::NONE) return;
  if (!has_recomputable_layers(setup.model)) {
    check.fail("training.recompute",
               "recomputes transformer blocks; this model has none (model.zoo.name: gpt)");
  }
  if (setup.schedule.kind == proto::PIPEFB) {
    check.fail("training.recompute", "PIPEFB recomputes with schedule.pipefb_recompute");
  }
  apply_activation_recompute(setup.model, setup.training.recompute);
}

}  // namespace pipetwin
