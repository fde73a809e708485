#include "sim/scenario/resolve_scenario.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "sim/model/activation_recompute.h"
#include "sim/model/memory_bound_time.h"
#include "sim/model/model_sources.h"
#include "sim/scenario/freeze_log.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// Raises errors against the scenario's source locations.
class Checker {
 public:
  explicit Checker(const LoadedScenario& loaded) : loaded_(loaded) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw InputError(loaded_.where(path) + ": " + problem);
  }
  void require(bool present, const std::string& path) const {
    if (!present) fail(path, "missing (required)");
  }
  void positive(bool present, double value, const std::string& path) const {
    require(present, path);
    if (!(value > 0)) fail(path, "must be positive (got " + number(value) + ")");
  }
  void non_negative(double value, const std::string& path) const {
    if (!(value >= 0)) fail(path, "must not be negative (got " + number(value) + ")");
  }

 private:
  const LoadedScenario& loaded_;
};

LinkSpec resolve_link(const Checker& check, const proto::Link& link, const std::string& path) {
  check.positive(link.has_bandwidth_gbytes_per_s(), link.bandwidth_gbytes_per_s(),
                 path + ".bandwidth_gbytes_per_s");
  check.non_negative(link.latency_us(), path + ".latency_us");
  return {link.bandwidth_gbytes_per_s() * 1e9, link.latency_us() * 1e-6};
}

FabricSpec resolve_fabric(const Checker& check, const proto::Cluster& c) {
  FabricSpec fabric;
  switch (c.intra_node().kind()) {
    case proto::NVSWITCH:
      fabric.intra = IntraNodeFabric::kNvSwitch;
      break;
    case proto::NVLINK_MESH:
      fabric.intra = IntraNodeFabric::kNvLinkMesh;
      break;
    case proto::PCIE_SWITCH:
      fabric.intra = IntraNodeFabric::kPcieSwitch;
      break;
  }
  fabric.gpus_per_host_link = c.host_link().gpus_per_switch();
  check.non_negative(fabric.gpus_per_host_link, "cluster.host_link.gpus_per_switch");
  const proto::Link& inter = c.inter_node();
  fabric.nics_per_node = inter.nics_per_node();
  check.non_negative(fabric.nics_per_node, "cluster.inter_node.nics_per_node");
  if (fabric.nics_per_node > c.gpus_per_node()) {
    check.fail("cluster.inter_node.nics_per_node", "more NICs than GPUs per node");
  }
  fabric.inter =
      inter.fabric() == proto::FAT_TREE ? InterNodeFabric::kFatTree : InterNodeFabric::kFlatSwitch;
  check.positive(true, inter.nodes_per_leaf(), "cluster.inter_node.nodes_per_leaf");
  fabric.nodes_per_leaf = inter.nodes_per_leaf();
  if (inter.oversubscription() < 1) {
    check.fail("cluster.inter_node.oversubscription",
               "must be at least 1 (got " + number(inter.oversubscription()) + ")");
  }
  fabric.oversubscription = inter.oversubscription();
  return fabric;
}

std::string resolve_platform_path(const Checker& check, const LoadedScenario& loaded,
                                  const std::string& path) {
  if (loaded.builtin && !std::filesystem::path(path).is_absolute()) {
    check.fail("cluster.simgrid_platform", "a built-in scenario cannot refer to a platform file");
  }
  const std::filesystem::path resolved = std::filesystem::path(path).is_absolute()
                                             ? std::filesystem::path(path)
                                             : std::filesystem::path(loaded.base_dir) / path;
  if (!std::filesystem::is_regular_file(resolved)) {
    check.fail("cluster.simgrid_platform", "cannot read file '" + resolved.string() + "'");
  }
  return resolved.string();
}

ClusterSpec resolve_cluster(const Checker& check, const LoadedScenario& loaded) {
  const proto::Scenario& s = loaded.scenario;
  check.require(s.has_cluster(), "cluster");
  const proto::Cluster& c = s.cluster();
  check.positive(c.has_nodes(), c.nodes(), "cluster.nodes");
  check.positive(c.has_gpus_per_node(), c.gpus_per_node(), "cluster.gpus_per_node");
  check.require(c.has_gpu(), "cluster.gpu");
  check.positive(c.gpu().has_peak_tflops(), c.gpu().peak_tflops(), "cluster.gpu.peak_tflops");
  check.positive(c.gpu().has_memory_gib(), c.gpu().memory_gib(), "cluster.gpu.memory_gib");
  check.require(c.has_intra_node(), "cluster.intra_node");

  ClusterSpec cluster;
  cluster.gpus_per_node = c.gpus_per_node();
  cluster.intra_node = resolve_link(check, c.intra_node(), "cluster.intra_node");
  if (c.nodes() > 1) check.require(c.has_inter_node(), "cluster.inter_node");
  if (c.has_inter_node()) {
    cluster.inter_node = resolve_link(check, c.inter_node(), "cluster.inter_node");
  }
  if (c.has_host_link()) {
    cluster.host_link = resolve_link(check, c.host_link(), "cluster.host_link");
    cluster.has_host_link = true;
  }
  if (c.has_host_memory_gib()) {
    check.positive(true, c.host_memory_gib(), "cluster.host_memory_gib");
  }
  cluster.host_memory_bytes = (c.has_host_memory_gib() ? c.host_memory_gib() : 512) * kGiB;
  cluster.nodes = c.nodes();
  cluster.fabric = resolve_fabric(check, c);
  if (c.has_interference()) {
    const proto::Interference& i = c.interference();
    check.non_negative(i.compute_slowdown(), "cluster.interference.compute_slowdown");
    check.non_negative(i.transfer_slowdown(), "cluster.interference.transfer_slowdown");
    // A fraction of speed lost: at 1 an overlapped op would never finish.
    for (const auto& [value, field] : {std::pair{i.compute_slowdown(), "compute_slowdown"},
                                       std::pair{i.transfer_slowdown(), "transfer_slowdown"}}) {
      if (!(value < 1)) {
        check.fail(std::string("cluster.interference.") + field,
                   "is the fraction of speed an overlapped op loses: must be below 1 (got " +
                       number(value) + ")");
      }
    }
    cluster.interference = {i.compute_slowdown(), i.transfer_slowdown()};
  }
  if (c.has_dispatch()) {
    const proto::Dispatch& d = c.dispatch();
    check.non_negative(d.issue_us(), "cluster.dispatch.issue_us");
    check.non_negative(d.wakeup_us(), "cluster.dispatch.wakeup_us");
    cluster.dispatch = {d.issue_us() * 1e-6, d.wakeup_us() * 1e-6};
  }
  for (int n = 0; n < c.nodes(); ++n) {
    for (int g = 0; g < c.gpus_per_node(); ++g) {
      DeviceSpec device;
      device.id = static_cast<int>(cluster.devices.size());
      device.node = n;
      device.name = "gpu" + std::to_string(device.id);
      device.peak_flops = c.gpu().peak_tflops() * 1e12;
      device.memory_bytes = c.gpu().memory_gib() * kGiB;
      cluster.devices.push_back(device);
    }
  }
  if (c.has_simgrid_platform()) {
    cluster.simgrid_platform = resolve_platform_path(check, loaded, c.simgrid_platform());
  }
  cluster.platform_hosts.assign(c.platform_hosts().begin(), c.platform_hosts().end());
  if (!cluster.platform_hosts.empty() && cluster.platform_hosts.size() != cluster.devices.size()) {
    check.fail("cluster.platform_hosts", "names " + std::to_string(cluster.platform_hosts.size()) +
                                             " hosts for " +
                                             std::to_string(cluster.devices.size()) + " devices");
  }
  for (int i = 0; i < c.devices_size(); ++i) {
    const proto::DeviceOverride& o = c.devices(i);
    const std::string path = "cluster.devices[" + std::to_string(i) + "]";
    check.require(o.has_id(), path + ".id");
    if (o.id() < 0 || o.id() >= static_cast<int>(cluster.devices.size())) {
      check.fail(path + ".id", "no device " + std::to_string(o.id()) + " in a cluster of " +
                                   std::to_string(cluster.devices.size()));
    }
    DeviceSpec& device = cluster.devices[o.id()];
    if (o.gpu().has_peak_tflops()) {
      check.positive(true, o.gpu().peak_tflops(), path + ".gpu.peak_tflops");
      device.peak_flops = o.gpu().peak_tflops() * 1e12;
    }
    if (o.gpu().has_memory_gib()) {
      check.positive(true, o.gpu().memory_gib(), path + ".gpu.memory_gib");
      device.memory_bytes = o.gpu().memory_gib() * kGiB;
    }
  }
  return cluster;
}

TrainingSpec resolve_training(const Checker& check, const proto::Scenario& s) {
  check.require(s.has_training(), "training");
  const proto::Training& t = s.training();
  check.positive(t.has_global_batch(), t.global_batch(), "training.global_batch");
  check.positive(t.has_microbatches(), t.microbatches(), "training.microbatches");
  check.positive(true, t.iterations(), "training.iterations");
  if (t.microbatches() > t.global_batch()) {
    check.fail("training.microbatches", std::to_string(t.microbatches()) +
                                            " microbatches cannot split a batch of " +
                                            std::to_string(t.global_batch()) + " samples");
  }
  check.positive(true, t.data_parallel(), "training.data_parallel");
  if (t.global_batch() % t.data_parallel() != 0) {
    check.fail("training.data_parallel", "the batch of " + std::to_string(t.global_batch()) +
                                             " samples does not split into " +
                                             std::to_string(t.data_parallel()) + " equal replicas");
  }
  if (t.microbatches() > t.global_batch() / t.data_parallel()) {
    check.fail("training.microbatches",
               std::to_string(t.microbatches()) + " microbatches cannot split a replica's " +
                   std::to_string(t.global_batch() / t.data_parallel()) + " samples");
  }
  if (t.mixed_precision() && t.precision() == proto::FP32) {
    check.fail("training.mixed_precision",
               "needs a 16-bit training.precision (FP16 or BF16) next to the fp32 master weights");
  }
  check.positive(true, t.tensor_parallel(), "training.tensor_parallel");
  if (t.sequence_parallel() && t.tensor_parallel() == 1) {
    check.fail("training.sequence_parallel",
               "splits activations among tensor-parallel GPUs: "
               "set training.tensor_parallel above 1");
  }
  return {t.global_batch(),      t.microbatches(), t.iterations(),      t.optimizer(),
          t.data_parallel(),     t.precision(),    t.mixed_precision(), t.tensor_parallel(),
          t.sequence_parallel(), t.recompute()};
}

// The weight-gradient part of a layer's backward (zero-bubble schedules) comes in the form
// of its bwd cost and cannot exceed it.
void check_weight_gradient_cost(const Checker& check, const proto::Layer& layer,
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

// A layer gives each direction's cost one way: fwd_ms (scaled linearly), fixed and/or
// per-sample, or cost_points.
void check_layer_cost(const Checker& check, const proto::Layer& layer, const std::string& path) {
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

ModelSpec resolve_layers(const Checker& check, const proto::Model& m) {
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

ModelSpec resolve_zoo(const Checker& check, const proto::Model& m) {
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

ModelSpec resolve_model(const Checker& check, const LoadedScenario& loaded) {
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

UnequalPlan resolve_stage_plans(const Checker& check, const proto::Schedule& p,
                                const TrainingSpec& training) {
  if (p.stage_plans_size() != p.stages()) {
    check.fail("schedule.stage_plans", "has " + std::to_string(p.stage_plans_size()) +
                                           " entries, expected one per stage (" +
                                           std::to_string(p.stages()) + ")");
  }
  const int32_t batch = training.global_batch / training.data_parallel;
  UnequalPlan plan;
  for (int s = 0; s < p.stage_plans_size(); ++s) {
    StagePlan stage;
    for (const bool forward : {true, false}) {
      const auto& sizes =
          forward ? p.stage_plans(s).forward_sizes() : p.stage_plans(s).backward_sizes();
      const std::string path = "schedule.stage_plans[" + std::to_string(s) + "]." +
                               (forward ? "forward_sizes" : "backward_sizes");
      if (sizes.empty()) check.fail(path, "missing (required by UMPIPE)");
      int64_t total = 0;
      for (int k = 0; k < sizes.size(); ++k) {
        check.positive(true, sizes[k], path + "[" + std::to_string(k) + "]");
        total += sizes[k];
      }
      if (total != batch) {
        check.fail(path, "sizes sum to " + std::to_string(total) + ", not the " +
                             (training.data_parallel > 1 ? "replica's " : "") + "batch of " +
                             std::to_string(batch));
      }
      (forward ? stage.forward_sizes : stage.backward_sizes).assign(sizes.begin(), sizes.end());
    }
    plan.stages.push_back(std::move(stage));
  }
  return plan;
}

// What zero-bubble schedules do not combine with: each would need its own rules for the
// split backward (which half offloads, freezes or moves).
void check_zero_bubble_combinations(const Checker& check, const proto::Scenario& s) {
  const std::string kind = proto::ScheduleKind_Name(s.schedule().kind());
  if (s.schedule().has_offload()) {
    check.fail("schedule.offload", kind +
                                       " does not offload activations (the stash is freed in "
                                       "two parts, by BWD_INPUT and BWD_WEIGHT)");
  }
  if (s.has_freeze()) {
    check.fail("freeze", kind +
                             " does not freeze layers (use GPIPE, ONE_F_ONE_B or "
                             "INTERLEAVED_ONE_F_ONE_B)");
  }
  if (s.training().recompute() != proto::Training::NONE) {
    check.fail("training.recompute",
               kind +
                   " does not recompute activations (W would need the rebuilt activations "
                   "held from B to W)");
  }
}

// DualPipe's two directions meet in the middle (an even number of stages), each takes half
// the microbatches, and each device starts with a full pipeline's worth of forwards of its
// own direction before it can pair them with backwards of the other (DeepSeek's reference
// asserts the same).
void check_dualpipe(const Checker& check, const proto::Schedule& p, const TrainingSpec& training) {
  if (p.stages() % 2 != 0) {
    check.fail("schedule.stages",
               "DUALPIPE runs its two directions over an even number of "
               "stages, got " +
                   std::to_string(p.stages()));
  }
  if (training.microbatches % 2 != 0 || training.microbatches < 2 * p.stages()) {
    check.fail("training.microbatches",
               "DUALPIPE needs an even number of microbatches, at least twice "
               "schedule.stages (" +
                   std::to_string(2 * p.stages()) + "), got " +
                   std::to_string(training.microbatches));
  }
}

// PipeDream's hybrid plans: each stage on devices of its own, which take its microbatches
// round robin. Empty when the scenario replicates no stage.
std::vector<int32_t> resolve_stage_replicas(const Checker& check, const proto::Scenario& scenario,
                                            const TrainingSpec& training, int devices) {
  const proto::Schedule& p = scenario.schedule();
  if (p.stage_replicas_size() == 0) return {};
  const std::string field = "schedule.stage_replicas";
  if (p.stage_replicas_size() != p.stages()) {
    check.fail(field, "has " + std::to_string(p.stage_replicas_size()) +
                          " entries, expected one per stage (" + std::to_string(p.stages()) + ")");
  }
  switch (p.kind()) {
    case proto::GPIPE:
    case proto::ONE_F_ONE_B:
    case proto::PIPEDREAM_ASYNC:
    case proto::PIPEDREAM_2BW:
    case proto::APAPO:
      break;
    default:
      check.fail(field,
                 "replicates stages of GPIPE, ONE_F_ONE_B, PIPEDREAM_ASYNC, "
                 "PIPEDREAM_2BW and APAPO schedules, not " +
                     proto::ScheduleKind_Name(p.kind()));
  }
  if (training.data_parallel > 1) {
    check.fail(field, "cannot be combined with training.data_parallel (" +
                          std::to_string(training.data_parallel) +
                          "): replicate single stages or whole pipelines, not both");
  }
  if (training.tensor_parallel > 1) {
    check.fail(field, "cannot be combined with training.tensor_parallel (" +
                          std::to_string(training.tensor_parallel) + ")");
  }
  if (p.has_offload()) {
    check.fail(field, "cannot be combined with schedule.offload");
  }
  if (scenario.has_freeze()) {  // FreezePipe repartitions whole pipelines
    check.fail(field, "cannot be combined with freeze");
  }
  int64_t total = 0;
  for (int s = 0; s < p.stage_replicas_size(); ++s) {
    const std::string at = field + "[" + std::to_string(s) + "]";
    const int32_t replicas = p.stage_replicas(s);
    check.positive(true, replicas, at);
    // Round robin over an iteration's microbatches: a replica beyond them would idle.
    if (replicas > training.microbatches) {
      check.fail(at, std::to_string(replicas) + " replicas of stage " + std::to_string(s) +
                         " need at least as many microbatches per iteration "
                         "(training.microbatches is " +
                         std::to_string(training.microbatches) + ")");
    }
    total += replicas;
  }
  if (total > devices) {
    check.fail(field, "places the stages on " + std::to_string(total) +
                          " devices, more than the cluster's " + std::to_string(devices));
  }
  return {p.stage_replicas().begin(), p.stage_replicas().end()};
}

ScheduleSpec resolve_schedule(const Checker& check, const proto::Scenario& s, int layers,
                              int devices, const TrainingSpec& training) {
  check.require(s.has_schedule(), "schedule");
  const proto::Schedule& p = s.schedule();
  ScheduleSpec schedule;
  schedule.kind = p.kind();
  check.positive(p.has_stages(), p.stages(), "schedule.stages");
  schedule.stages = p.stages();
  if (p.kind() == proto::PIPEFB) {
    if (training.data_parallel > 1) {
      check.fail("training.data_parallel", "PIPEFB runs one pipeline (data_parallel 1)");
    }
    if (2 * p.stages() > devices) {
      check.fail("schedule.stages", "PIPEFB puts each of the " + std::to_string(p.stages()) +
                                        " stages on two devices, more than the cluster's " +
                                        std::to_string(devices));
    }
  }
  if (p.pipefb_recompute() && p.kind() != proto::PIPEFB) {
    check.fail("schedule.pipefb_recompute", "only PIPEFB schedules recompute on another device");
  }
  schedule.pipefb_recompute = p.pipefb_recompute();
  schedule.comm_overlap = p.comm_overlap();
  if (p.has_max_in_flight_iterations() && p.kind() != proto::APAPO) {
    check.fail("schedule.max_in_flight_iterations",
               "only APAPO schedules take micro-batch control");
  }
  if (p.has_max_staleness() && p.kind() != proto::APAPO) {
    check.fail("schedule.max_staleness", "only APAPO schedules take micro-batch control");
  }
  check.positive(true, p.max_in_flight_iterations(), "schedule.max_in_flight_iterations");
  check.non_negative(p.max_staleness(), "schedule.max_staleness");
  schedule.max_in_flight_iterations = p.max_in_flight_iterations();
  schedule.max_staleness = p.max_staleness();
  if (p.kind() == proto::PIPEDREAM_2BW && training.microbatches < p.stages()) {
    check.fail("training.microbatches",
               "PIPEDREAM_2BW accumulates gradients over at least as many microbatches as "
               "stages (" +
                   std::to_string(p.stages()) + "), so that two weight versions suffice");
  }
  if (int64_t{p.stages()} * training.data_parallel * training.tensor_parallel > devices) {
    check.fail("schedule.stages",
               std::to_string(p.stages()) + " stages" +
                   (training.tensor_parallel > 1
                        ? " of " + std::to_string(training.tensor_parallel) + " GPUs"
                        : std::string()) +
                   (training.data_parallel > 1
                        ? " x " + std::to_string(training.data_parallel) + " replicas"
                        : std::string()) +
                   " need more devices than the cluster's " + std::to_string(devices));
  }
  check.positive(true, p.virtual_stages(), "schedule.virtual_stages");
  schedule.virtual_stages = p.virtual_stages();
  if (p.kind() == proto::ZB_V) {
    // The V: two model chunks per device.
    if (p.has_virtual_stages() && p.virtual_stages() != 2) {
      check.fail("schedule.virtual_stages",
                 "ZB_V places two model chunks on every device: leave it unset or give 2, got " +
                     std::to_string(p.virtual_stages()));
    }
    schedule.virtual_stages = 2;
  } else if (p.virtual_stages() > 1 && p.kind() != proto::INTERLEAVED_ONE_F_ONE_B) {
    check.fail("schedule.virtual_stages",
               "only INTERLEAVED_ONE_F_ONE_B and ZB_V have virtual stages");
  }
  if (is_zero_bubble(p.kind())) check_zero_bubble_combinations(check, s);
  if (p.kind() == proto::DUALPIPE) check_dualpipe(check, p, training);
  if (p.kind() == proto::INTERLEAVED_ONE_F_ONE_B && training.microbatches % p.stages() != 0) {
    check.fail("training.microbatches",
               "interleaved 1F1B needs microbatches (" + std::to_string(training.microbatches) +
                   ") to be a multiple of schedule.stages (" + std::to_string(p.stages()) + ")");
  }
  if (p.kind() == proto::UMPIPE) {
    schedule.stage_plans = resolve_stage_plans(check, p, training);
  } else if (p.stage_plans_size() > 0) {
    check.fail("schedule.stage_plans", "only UMPIPE schedules take stage plans");
  }
  if (schedule.chunks() > layers) {
    check.fail("schedule.stages", std::to_string(schedule.chunks()) +
                                      " pipeline stages need more layers than the model's " +
                                      std::to_string(layers));
  }
  schedule.stage_replicas = resolve_stage_replicas(check, s, training, devices);
  if (p.partition_size() > 0) {
    if (p.partition_size() != schedule.chunks()) {
      check.fail("schedule.partition", "has " + std::to_string(p.partition_size()) +
                                           " entries, expected one per stage (" +
                                           std::to_string(schedule.chunks()) + ")");
    }
    int total = 0;
    for (int i = 0; i < p.partition_size(); ++i) {
      check.positive(true, p.partition(i), "schedule.partition[" + std::to_string(i) + "]");
      total += p.partition(i);
    }
    if (total != layers) {
      check.fail("schedule.partition", "places " + std::to_string(total) +
                                           " layers, but the model has " + std::to_string(layers));
    }
    schedule.partition.assign(p.partition().begin(), p.partition().end());
  }
  return schedule;
}

OffloadSpec resolve_offload(const Checker& check, const proto::Schedule& p, int32_t chunks,
                            const ClusterSpec& cluster) {
  OffloadSpec offload;
  if (!p.has_offload()) return offload;
  const proto::Offload& o = p.offload();
  offload.enabled = true;
  offload.policy = o.policy();
  if (is_asynchronous(p.kind()) && o.policy() == proto::Offload::SELECTIVE) {
    check.fail("schedule.offload.policy",
               "SELECTIVE chooses stages on a synchronous compute order; asynchronous "
               "pipelines take ALL or explicit stages");
  }
  if (!cluster.has_host_link) {
    check.fail("schedule.offload", "offload copies over cluster.host_link, which is missing");
  }
  if (!cluster.simgrid_platform.empty()) {
    check.fail("schedule.offload",
               "offload needs the platform pipetwin builds (host links per PCIe switch); "
               "cluster.simgrid_platform has none it knows of");
  }
  if (o.prefetch_horizon() < 0) {
    check.fail("schedule.offload.prefetch_horizon",
               "must not be negative (got " + std::to_string(o.prefetch_horizon()) + ")");
  }
  offload.prefetch_horizon = o.prefetch_horizon();
  if (!(o.fraction() > 0 && o.fraction() <= 1)) {
    check.fail("schedule.offload.fraction", "must be in (0, 1] (got " + number(o.fraction()) + ")");
  }
  offload.fraction = o.fraction();
  offload.activations = o.activations();
  offload.weight_stashes = o.weight_stashes();
  if (o.weight_stashes() && !is_asynchronous(p.kind())) {
    check.fail("schedule.offload.weight_stashes",
               "only asynchronous pipelines (PIPEDREAM_ASYNC, PIPEDREAM_2BW, APAPO) stash weight "
               "versions; " +
                   proto::ScheduleKind_Name(p.kind()) + " keeps one");
  }
  if (!o.activations() && !o.weight_stashes()) {
    check.fail("schedule.offload.activations",
               "false with weight_stashes false leaves nothing to offload");
  }
  for (int i = 0; i < o.stages_size(); ++i) {
    if (o.stages(i) < 0 || o.stages(i) >= chunks) {
      check.fail("schedule.offload.stages[" + std::to_string(i) + "]",
                 "no stage " + std::to_string(o.stages(i)) + " in a pipeline of " +
                     std::to_string(chunks) + " stages");
    }
  }
  if (o.policy() == proto::Offload::STAGES) {
    if (o.stages_size() == 0) check.fail("schedule.offload.stages", "missing (policy STAGES)");
    offload.stages.assign(o.stages().begin(), o.stages().end());
    std::sort(offload.stages.begin(), offload.stages.end());
    offload.stages.erase(std::unique(offload.stages.begin(), offload.stages.end()),
                         offload.stages.end());
  } else {
    if (o.stages_size() > 0) {
      check.fail("schedule.offload.stages", "only policy STAGES takes a list of stages");
    }
    for (int32_t c = 0; c < chunks; ++c) offload.stages.push_back(c);
  }
  return offload;
}

FreezeSpec resolve_freeze(const Checker& check, const LoadedScenario& loaded, int32_t layers,
                          int32_t iterations) {
  FreezeSpec spec;
  const proto::Scenario& s = loaded.scenario;
  if (!s.has_freeze()) return spec;
  const proto::Freeze& f = s.freeze();
  spec.enabled = true;
  if (f.interval_iterations() <= 0) {
    check.fail("freeze.interval_iterations",
               "must be positive (got " + std::to_string(f.interval_iterations()) + ")");
  }
  spec.interval_iterations = f.interval_iterations();
  if (!(f.percentile() >= 0 && f.percentile() <= 100)) {
    check.fail("freeze.percentile", "must be in [0, 100] (got " + number(f.percentile()) + ")");
  }
  if (!(f.max_fraction_per_step() > 0 && f.max_fraction_per_step() <= 1)) {
    check.fail("freeze.max_fraction_per_step",
               "must be in (0, 1] (got " + number(f.max_fraction_per_step()) + ")");
  }
  spec.rule = {f.percentile(), f.max_fraction_per_step()};
  spec.repartition = f.repartition();
  spec.compress = f.compress();
  if (f.has_autocache()) {
    const int32_t epoch = f.autocache().epoch_iterations();
    check.require(f.autocache().has_epoch_iterations(), "freeze.autocache.epoch_iterations");
    if (epoch <= 0) {
      check.fail("freeze.autocache.epoch_iterations",
                 "must be positive (got " + std::to_string(epoch) + ")");
    }
    spec.cache_epoch_iterations = epoch;
  }
  const int sources = (f.at_size() > 0) + f.has_log() + f.has_synthetic();
  // No source: the rule runs on the gradients a real run measures (pipetwin run).
  if (sources > 1) check.fail("freeze", "give at most one of at, log, synthetic");
  int32_t last_iteration = -1, last_frozen = 0;
  for (int i = 0; i < f.at_size(); ++i) {
    const std::string path = "freeze.at[" + std::to_string(i) + "]";
    const proto::FreezeAt& at = f.at(i);
    check.require(at.has_iteration(), path + ".iteration");
    check.require(at.has_frozen_layers(), path + ".frozen_layers");
    if (at.iteration() <= last_iteration || at.iteration() >= iterations) {
      check.fail(path + ".iteration", "must increase and lie in (0, training.iterations = " +
                                          std::to_string(iterations) + ")");
    }
    if (at.frozen_layers() < last_frozen || at.frozen_layers() >= layers) {
      check.fail(path + ".frozen_layers",
                 "must not decrease and must leave a layer to train (the model has " +
                     std::to_string(layers) + ")");
    }
    last_iteration = at.iteration();
    last_frozen = at.frozen_layers();
    spec.at.emplace_back(at.iteration(), at.frozen_layers());
  }
  if (f.has_log()) {
    const std::string text = read_scenario_relative_file(loaded, f.log(), "freeze.log");
    try {
      spec.log = parse_freeze_log(text, f.log(), layers);
    } catch (const InputError& e) {
      check.fail("freeze.log", e.what());
    }
    // The log's intervals land on the scenario's own when it sets one: a short real run
    // then stretches over a long simulated one.
    if (!f.has_interval_iterations()) spec.interval_iterations = spec.log->interval_iterations;
  }
  if (f.has_synthetic()) {
    const proto::SyntheticGradients& g = f.synthetic();
    check.positive(true, g.time_constant(), "freeze.synthetic.time_constant");
    check.non_negative(g.depth_factor(), "freeze.synthetic.depth_factor");
    check.non_negative(g.noise(), "freeze.synthetic.noise");
    if (!(g.floor() >= 0 && g.floor() < 1)) {
      check.fail("freeze.synthetic.floor", "must be in [0, 1) (got " + number(g.floor()) + ")");
    }
    spec.synthetic =
        SyntheticGradientModel{g.seed(), g.time_constant(), g.depth_factor(), g.noise(), g.floor()};
  }
  return spec;
}

// model.zoo.memory_efficiency: before recomputation, which reruns these kernels too.
void add_memory_bound_kernels(const Checker& check, const proto::Scenario& s,
                              ResolvedScenario& setup) {
  const double efficiency = s.model().zoo().memory_efficiency();
  if (!(efficiency > 0 && efficiency <= 1)) {
    check.fail("model.zoo.memory_efficiency", "must be in (0, 1], got " + number(efficiency));
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
  add_memory_bound_time(setup.model, efficiency * bandwidth * 1e9,
                        setup.training.sequence_parallel);
}

}  // namespace

ResolvedScenario resolve_scenario(const LoadedScenario& loaded) {
  const Checker check(loaded);
  const proto::Scenario& s = loaded.scenario;
  ResolvedScenario setup;
  setup.name = s.has_name() ? s.name() : loaded.source_name;
  setup.cluster = resolve_cluster(check, loaded);
  setup.training = resolve_training(check, s);
  setup.model = resolve_model(check, loaded);
  if (s.model().has_zoo()) setup.zoo = s.model().zoo();
  if (setup.model.layers.empty()) check.fail("model", "the model has no layers");
  setup.schedule = resolve_schedule(check, s, static_cast<int>(setup.model.layers.size()),
                                    static_cast<int>(setup.cluster.devices.size()), setup.training);
  setup.schedule.offload =
      resolve_offload(check, s.schedule(), setup.schedule.chunks(), setup.cluster);
  setup.simgrid.exact = s.simgrid().exact();
  setup.simgrid.collective_steps = s.simgrid().collective_steps();
  if (setup.simgrid.exact && !setup.cluster.simgrid_platform.empty()) {
    check.fail("simgrid.exact",
               "exact mode builds its own links; it cannot use cluster.simgrid_platform");
  }
  setup.simgrid.cfg.assign(s.simgrid().cfg().begin(), s.simgrid().cfg().end());
  setup.freeze = resolve_freeze(check, loaded, static_cast<int32_t>(setup.model.layers.size()),
                                setup.training.iterations);
  if (setup.freeze.enabled && setup.schedule.kind != proto::GPIPE &&
      setup.schedule.kind != proto::ONE_F_ONE_B) {
    check.fail("freeze", "FreezePipe repartitions GPIPE and ONE_F_ONE_B pipelines");
  }
  if (const int32_t tp = setup.training.tensor_parallel; tp > 1) {
    const bool splits = std::any_of(
        setup.model.layers.begin(), setup.model.layers.end(),
        [](const ModelLayer& l) { return l.tp_fwd_collectives + l.tp_bwd_collectives > 0; });
    if (s.model().zoo().name() == "mlp") {
      if (setup.model.layers.size() % 2 != 0) {
        check.fail(
            "training.tensor_parallel",
            "an MLP splits in pairs of layers (column-, then row-parallel): model.zoo.layers "
            "must be even");
      }
      if (s.model().zoo().hidden() % tp != 0) {
        check.fail("training.tensor_parallel",
                   "the MLP's " + std::to_string(s.model().zoo().hidden()) +
                       " hidden units do not split " + std::to_string(tp) + " ways");
      }
      if (setup.training.sequence_parallel) {
        check.fail("training.sequence_parallel", "an MLP has no sequence to split");
      }
    }
    if (!splits) {
      check.fail("training.tensor_parallel",
                 "only transformer and MLP layers split across GPUs (model.zoo.name: gpt or mlp)");
    }
    if (setup.cluster.gpus_per_node % tp != 0) {
      check.fail("training.tensor_parallel",
                 std::to_string(tp) + " GPUs per stage must divide the node's " +
                     std::to_string(setup.cluster.gpus_per_node) +
                     " (a stage's all-reduces stay on the intra-node fabric)");
    }
    if (s.model().zoo().heads() % tp != 0) {
      check.fail("training.tensor_parallel", "the " + std::to_string(s.model().zoo().heads()) +
                                                 " attention heads do not split " +
                                                 std::to_string(tp) + " ways");
    }
    if (setup.freeze.enabled || setup.schedule.kind == proto::PIPEFB) {
      check.fail("training.tensor_parallel",
                 "not with FreezePipe or PIPEFB, which place stages on devices themselves");
    }
  }
  if (s.model().has_zoo() && s.model().zoo().memory_efficiency() != 0) {
    add_memory_bound_kernels(check, s, setup);
  }
  if (setup.training.recompute != proto::Training::NONE) {
    if (!has_recomputable_layers(setup.model)) {
      check.fail("training.recompute",
                 "recomputes transformer blocks; this model has none (model.zoo.name: gpt)");
    }
    if (setup.schedule.kind == proto::PIPEFB) {
      check.fail("training.recompute", "PIPEFB recomputes with schedule.pipefb_recompute");
    }
    apply_activation_recompute(setup.model, setup.training.recompute);
  }
  if (setup.freeze.cache_epoch_iterations > 0 && !setup.cluster.has_host_link) {
    check.fail("freeze.autocache", "the cache is read over cluster.host_link, which is missing");
  }
  return setup;
}

}  // namespace pipetwin
