#include "sim/scenario/resolve_cluster.h"

#include <cmath>
#include <filesystem>
#include <utility>

#include "sim/scenario/resolve_device_overrides.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

GemmCurve resolve_gemm_curve(const ScenarioChecker& check, const proto::Gpu& gpu) {
  const proto::GemmEfficiency& g = gpu.gemm_efficiency();
  const std::string path = "cluster.gpu.gemm_efficiency";
  if (!(g.peak_fraction() > 0 && g.peak_fraction() <= 1)) {
    check.fail(path + ".peak_fraction",
               g.has_peak_fraction() ? "must be in (0, 1], got " + number_text(g.peak_fraction())
                                     : "missing: the fraction of peak_tflops a whole wave "
                                       "of whole tiles reaches");
  }
  // Bounds far beyond any GPU, which keep every product of the curve finite.
  constexpr int kMostMultiprocessors = 1 << 20, kLargestTile = 1 << 16;
  check.non_negative(g.sm_count(), path + ".sm_count");
  if (g.sm_count() > kMostMultiprocessors) {
    check.fail(path + ".sm_count", "at most " + std::to_string(kMostMultiprocessors));
  }
  for (const auto& [tile, field] : {std::pair{g.tile_m(), "tile_m"}, {g.tile_n(), "tile_n"}}) {
    check.positive(true, tile, path + "." + field);
    if (tile > kLargestTile) {
      check.fail(path + "." + field, "at most " + std::to_string(kLargestTile));
    }
  }
  if (!std::isfinite(gpu.peak_tflops() * 1e12)) {
    check.fail("cluster.gpu.peak_tflops", "too large: " + number_text(gpu.peak_tflops()));
  }
  if (!(g.memory_efficiency() >= 0 && g.memory_efficiency() <= 1)) {
    check.fail(path + ".memory_efficiency",
               "must be in [0, 1], got " + number_text(g.memory_efficiency()));
  }
  if (g.memory_efficiency() > 0 && !(gpu.memory_bandwidth_gbytes_per_s() > 0)) {
    check.fail(path + ".memory_efficiency",
               "times GEMMs' operands over cluster.gpu.memory_bandwidth_gbytes_per_s: set it, "
               "or memory_efficiency: 0");
  }
  GemmCurve curve;
  curve.peak_flops = gpu.peak_tflops() * 1e12;
  curve.peak_fraction = g.peak_fraction();
  curve.sm_count = g.sm_count();
  curve.tile_m = g.tile_m();
  curve.tile_n = g.tile_n();
  curve.memory_bytes_per_s = g.memory_efficiency() * gpu.memory_bandwidth_gbytes_per_s() * 1e9;
  return curve;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The GPU's generation from the tensor-core formats it has: block-scaled FP8 from Blackwell on,
// FP8 from Hopper on.
GpuGeneration gpu_generation(const proto::Gpu& gpu) {
  if (gpu.peak_tflops_mxfp8() > 0 || gpu.peak_tflops_nvfp4() > 0) return GpuGeneration::kBlackwell;
  if (gpu.peak_tflops_fp8() > 0) return GpuGeneration::kHopper;
  return GpuGeneration::kAmpere;
}

CollectivesSpec resolve_collectives(const proto::Cluster& c) {
  CollectivesSpec spec;
  spec.model = c.collectives().model() == proto::Collectives::NCCL
                   ? CollectivesSpec::Model::kNccl
                   : CollectivesSpec::Model::kTextbook;
  switch (c.collectives().algorithm()) {
    case proto::Collectives::RING:
      spec.pinned = NcclAlgorithm::kRing;
      break;
    case proto::Collectives::TREE:
      spec.pinned = NcclAlgorithm::kTree;
      break;
    case proto::Collectives::NVLS:
      spec.pinned = NcclAlgorithm::kNvls;
      break;
    case proto::Collectives::NVLS_TREE:
      spec.pinned = NcclAlgorithm::kNvlsTree;
      break;
    case proto::Collectives::PAT:
      spec.pinned = NcclAlgorithm::kPat;
      break;
    default:
      break;  // NCCL's choice
  }
  spec.generation = gpu_generation(c.gpu());
  return spec;
}

LinkSpec resolve_link(const ScenarioChecker& check, const proto::Link& link,
                      const std::string& path) {
  check.positive(link.has_bandwidth_gbytes_per_s(), link.bandwidth_gbytes_per_s(),
                 path + ".bandwidth_gbytes_per_s");
  check.non_negative(link.latency_us(), path + ".latency_us");
  return {link.bandwidth_gbytes_per_s() * 1e9, link.latency_us() * 1e-6};
}

FabricSpec resolve_fabric(const ScenarioChecker& check, const proto::Cluster& c) {
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
               "must be at least 1 (got " + number_text(inter.oversubscription()) + ")");
  }
  fabric.oversubscription = inter.oversubscription();
  return fabric;
}

std::string resolve_platform_path(const ScenarioChecker& check, const LoadedScenario& loaded,
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

}  // namespace

ClusterSpec resolve_cluster(const ScenarioChecker& check, const LoadedScenario& loaded) {
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
  cluster.inter_leaf = {cluster.inter_node.bandwidth_bytes_per_s / cluster.fabric.oversubscription,
                        cluster.inter_node.latency_s};
  check.positive(true, c.nvlink_domain_nodes(), "cluster.nvlink_domain_nodes");
  if (c.nvlink_domain_nodes() > 1 && c.intra_node().kind() != proto::NVSWITCH) {
    check.fail("cluster.nvlink_domain_nodes",
               "spans nodes through NVLink switches: it needs intra_node.kind NVSWITCH");
  }
  cluster.nvlink_domain_nodes = c.nvlink_domain_nodes();
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
                       number_text(value) + ")");
      }
    }
    cluster.interference = {i.compute_slowdown(), i.transfer_slowdown()};
  }
  cluster.collectives = resolve_collectives(c);
  if (c.has_dispatch()) {
    const proto::Dispatch& d = c.dispatch();
    check.non_negative(d.issue_us(), "cluster.dispatch.issue_us");
    check.non_negative(d.wakeup_us(), "cluster.dispatch.wakeup_us");
    cluster.dispatch = {d.issue_us() * 1e-6, d.wakeup_us() * 1e-6};
  }
  if (c.gpu().has_gemm_efficiency()) cluster.gemm_curve = resolve_gemm_curve(check, c.gpu());
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
    if (o.gpu().has_gemm_efficiency()) {
      check.fail(path + ".gpu.gemm_efficiency",
                 "one GEMM curve serves the whole cluster: set cluster.gpu.gemm_efficiency "
                 "(or model.zoo.efficiency)");
    }
    if (o.gpu().has_peak_tflops()) {
      check.positive(true, o.gpu().peak_tflops(), path + ".gpu.peak_tflops");
      device.peak_flops = o.gpu().peak_tflops() * 1e12;
    }
    if (o.gpu().has_memory_gib()) {
      check.positive(true, o.gpu().memory_gib(), path + ".gpu.memory_gib");
      device.memory_bytes = o.gpu().memory_gib() * kGiB;
    }
  }
  apply_device_scales(check, c, cluster);
  return cluster;
}

}  // namespace pipetwin
