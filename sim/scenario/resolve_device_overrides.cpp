#include "sim/scenario/resolve_device_overrides.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>

#include "sim/cluster/presets.h"
#include "sim/model/number_format.h"
#include "sim/scenario/device_list.h"

namespace pipetwin {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<int> listed(const ScenarioChecker& check, const std::string& text, int count,
                        const std::string& path) {
  std::string problem;
  const std::optional<std::vector<int>> ids = parse_id_list(text, count, problem);
  if (!ids) check.fail(path, problem);
  return *ids;
}

// A factor of speed: positive and finite (0 would never finish; infinity would take no time).
void check_scale(const ScenarioChecker& check, double value, const std::string& path) {
  if (!(value > 0 && std::isfinite(value) && value <= 1e6)) {
    check.fail(path, "must be a positive factor (1: as built, 0.5: half the speed), got " +
                         number_text(value));
  }
}

}  // namespace

void apply_node_groups(const ScenarioChecker& check, const proto::Scenario& scenario,
                       ClusterSpec& cluster) {
  const proto::Cluster& c = scenario.cluster();
  const proto::Precision precision = scenario.training().precision();
  if (c.node_groups_size() > 0 && c.devices_size() > 0) {
    check.fail("cluster.node_groups",
               "not with cluster.devices: give every GPU type by node groups, or by devices");
  }
  for (int i = 0; i < c.node_groups_size(); ++i) {
    const proto::NodeGroup& group = c.node_groups(i);
    const std::string path = "cluster.node_groups[" + std::to_string(i) + "]";
    check.require(group.has_nodes(), path + ".nodes");
    if (!group.has_preset() && !group.has_gpu()) {
      check.fail(path, "names no GPU: set preset (\"dgx-h200\") or gpu { ... }");
    }
    proto::Gpu gpu = c.gpu();
    if (group.has_preset()) {
      const std::optional<proto::Cluster> preset = cluster_preset(group.preset());
      if (!preset) {
        std::string known;
        for (const std::string& n : cluster_preset_names())
          known += (known.empty() ? "" : ", ") + n;
        check.fail(path + ".preset",
                   "unknown preset '" + group.preset() + "' (known: " + known + ")");
      }
      gpu = preset->gpu();
    }
    gpu.MergeFrom(group.gpu());
    if (group.gpu().has_gemm_efficiency()) {
      check.fail(path + ".gpu.gemm_efficiency",
                 "one GEMM curve serves the whole cluster: set cluster.gpu.gemm_efficiency");
    }
    check.positive(true, gpu.peak_tflops(), path + ".gpu.peak_tflops");
    check.positive(true, gpu.memory_gib(), path + ".gpu.memory_gib");
    if (format_peak_field(precision) != nullptr && !(format_peak_flops(gpu, precision) > 0)) {
      check.fail(path + (group.has_preset() ? ".preset" : ".gpu"),
                 "its GPU (" + gpu.name() + ") has no tensor cores for training.precision " +
                     proto::Precision_Name(precision));
    }
    for (int node : listed(check, group.nodes(), cluster.nodes, path + ".nodes")) {
      for (DeviceSpec& device : cluster.devices) {
        if (device.node != node) continue;
        device.peak_flops = gpu.peak_tflops() * 1e12;
        device.memory_bytes = gpu.memory_gib() * kBytesPerGiB;
      }
    }
  }
}

void apply_device_scales(const ScenarioChecker& check, const proto::Cluster& c,
                         ClusterSpec& cluster) {
  const int count = static_cast<int>(cluster.devices.size());
  for (int i = 0; i < c.overrides_size(); ++i) {
    const proto::DeviceScale& o = c.overrides(i);
    const std::string path = "cluster.overrides[" + std::to_string(i) + "]";
    check.require(o.has_devices(), path + ".devices");
    check_scale(check, o.compute_scale(), path + ".compute_scale");
    check_scale(check, o.link_scale(), path + ".link_scale");
    check_scale(check, o.latency_scale(), path + ".latency_scale");
    const bool links = o.link_scale() != 1 || o.latency_scale() != 1;
    if (links && !cluster.simgrid_platform.empty()) {
      check.fail(path + (o.link_scale() != 1 ? ".link_scale" : ".latency_scale"),
                 "cluster.simgrid_platform's XML sets its own links: scale them there");
    }
    for (int id : listed(check, o.devices(), count, path + ".devices")) {
      DeviceSpec& device = cluster.devices[id];
      device.compute_scale *= o.compute_scale();
      device.port_scale *= o.link_scale();
      device.port_latency_scale *= o.latency_scale();
    }
    cluster.scaled_links = cluster.scaled_links || links;
  }
}

void share_nic_scales(ClusterSpec& cluster) {
  if (!cluster.scaled_links) return;
  const int64_t nics =
      cluster.fabric.nics_per_node > 0 ? cluster.fabric.nics_per_node : cluster.gpus_per_node;
  const auto nic_of = [&](const DeviceSpec& d) {
    const int slot = d.slot >= 0 ? d.slot : d.id % cluster.gpus_per_node;
    return d.node * nics + slot % nics;
  };
  // Per NIC, the slowest bandwidth and latency of the GPUs sending through it.
  std::unordered_map<int64_t, std::pair<double, double>> slowest;
  for (const DeviceSpec& d : cluster.devices) {
    auto [it, added] = slowest.try_emplace(nic_of(d), d.port_scale, d.port_latency_scale);
    it->second.first = std::min(it->second.first, d.port_scale);
    it->second.second = std::max(it->second.second, d.port_latency_scale);
  }
  for (DeviceSpec& d : cluster.devices) {
    std::tie(d.nic_scale, d.nic_latency_scale) = slowest.at(nic_of(d));
  }
}

}  // namespace pipetwin
