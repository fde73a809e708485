// The resolved cluster: one entry per GPU and the links between them.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace pipetwin {

// What a message costs on this link: sim/network/point_to_point.h.
struct LinkSpec {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

struct DeviceSpec {
  int id = 0;
  int node = 0;
  std::string name;  // "gpu3" (global index)
  double peak_flops = 0;
  double memory_bytes = 0;
  int slot = -1;  // its place among its node's GPUs; -1: id mod gpus_per_node
  // cluster.overrides: its compute ops take their time over compute_scale; its port (NVLink,
  // NVSwitch) runs at port_scale of the bandwidth and port_latency_scale of the latency, its
  // NIC at nic_scale and nic_latency_scale (the slowest of the GPUs sharing the NIC).
  double compute_scale = 1;
  double port_scale = 1;
  double port_latency_scale = 1;
  double nic_scale = 1;
  double nic_latency_scale = 1;
  // What its compute ops reach: the dense peak times compute_scale.
  double effective_flops() const { return peak_flops * compute_scale; }
};

// How links are wired (used by the simgrid engine; see sim/cluster/topology.h).
enum class IntraNodeFabric { kNvSwitch, kNvLinkMesh, kPcieSwitch };
enum class InterNodeFabric { kFlatSwitch, kFatTree };

struct FabricSpec {
  IntraNodeFabric intra = IntraNodeFabric::kNvSwitch;
  int gpus_per_host_link = 0;  // 0: one host link per node
  int nics_per_node = 0;       // 0: one NIC per GPU (rail)
  InterNodeFabric inter = InterNodeFabric::kFlatSwitch;
  int nodes_per_leaf = 1;
  double oversubscription = 1;
};

// cluster.interference: how compute and transfers of one device slow each other while
// they overlap (sim/exec/interference.h).
struct InterferenceSpec {
  double compute_slowdown = 0;   // speed a compute op loses while a transfer runs, in [0, 1)
  double transfer_slowdown = 0;  // speed a transfer loses while compute runs, in [0, 1)
  bool any() const { return compute_slowdown > 0 || transfer_slowdown > 0; }
};

// cluster.dispatch: host-side time between ops (sim/program/dependency_walk.h).
struct DispatchSpec {
  double issue_s = 0;   // after the lane's previous op ended
  double wakeup_s = 0;  // after a dependency on another lane ended
};

// cluster.gpu.gemm_efficiency: how fast a GEMM runs by its shape (sim/model/gemm_curve.h).
struct GemmCurve {
  double peak_flops = 0;     // dense FLOP/s of the datasheet
  double peak_fraction = 1;  // of peak_flops, in a whole wave of whole tiles
  int sm_count = 0;          // 0: no wave quantisation
  int tile_m = 128, tile_n = 128;
  double memory_bytes_per_s = 0;  // bandwidth times memory_efficiency; 0: no memory bound
  double operand_bytes = 2;       // per element of A and B (C is written in 16 bits)
  bool flat() const { return sm_count == 0 && memory_bytes_per_s == 0; }
};

// NCCL's compute-capability classes (its tuning model's tables by GPU generation).
enum class GpuGeneration { kVolta, kAmpere, kHopper, kBlackwell };

// NCCL's collective algorithms (its tuning model: sim/network/nccl_tuning.h).
enum class NcclAlgorithm { kTree, kRing, kNvls, kNvlsTree, kPat };

// cluster.collectives: textbook rings, or NCCL's choice and prices (sim/network/nccl_tuning.h),
// optionally with one algorithm pinned (none: NCCL's choice).
struct CollectivesSpec {
  enum class Model { kTextbook, kNccl };
  Model model = Model::kTextbook;
  std::optional<NcclAlgorithm> pinned;
  GpuGeneration generation = GpuGeneration::kAmpere;
};

struct ClusterSpec {
  std::vector<DeviceSpec> devices;
  int nodes = 1;
  int gpus_per_node = 1;
  int nvlink_domain_nodes = 1;  // nodes per NVLink domain (cluster.nvlink_domain_nodes)
  LinkSpec intra_node;
  LinkSpec inter_node;
  // Between nodes under different leaves of an oversubscribed FAT_TREE (pods): a NIC's share of
  // its leaf's uplink when every NIC under the leaf sends out of it at once, inter_node's
  // bandwidth over the oversubscription. The analytic engine, which sees no contention, times
  // such flows at it; SimGrid shares the uplink itself.
  LinkSpec inter_leaf;
  LinkSpec host_link;
  bool has_host_link = false;
  double host_memory_bytes = 0;  // per node: where offloaded activations go
  FabricSpec fabric;
  InterferenceSpec interference;
  DispatchSpec dispatch;
  CollectivesSpec collectives;
  // The GPU's GEMM curve; the zoo's transformers use it unless model.zoo.efficiency is set.
  std::optional<GemmCurve> gemm_curve;
  // A SimGrid XML platform (resolved path) replacing the built fabric, and the host of
  // each device on it (empty: the platform's hosts in name order).
  std::string simgrid_platform;
  std::vector<std::string> platform_hosts;

  // The link between devices a and b as built, before any device's scales.
  const LinkSpec& nominal_link(int a, int b) const {
    if (same_nvlink_domain(a, b)) return intra_node;
    return across_leaves(a, b) ? inter_leaf : inter_node;
  }
  // And as it runs: the slower end's bandwidth, the mean of the two ends' latency factors (a
  // route crosses half the latency at each end: sim/cluster/topology.h).
  LinkSpec link(int a, int b) const {
    const LinkSpec& nominal = nominal_link(a, b);
    if (!scaled_links) return nominal;
    const DeviceSpec &x = devices[a], &y = devices[b];
    const bool port = same_nvlink_domain(a, b);
    const double bandwidth =
        port ? std::min(x.port_scale, y.port_scale) : std::min(x.nic_scale, y.nic_scale);
    const double latency = port ? (x.port_latency_scale + y.port_latency_scale) / 2
                                : (x.nic_latency_scale + y.nic_latency_scale) / 2;
    return {nominal.bandwidth_bytes_per_s * bandwidth, nominal.latency_s * latency};
  }
  // Whether any device's links run at other than the nominal speed (cluster.overrides).
  bool scaled_links = false;
  // Whether any device computes at other than the cluster GPU's speed (cluster.overrides,
  // cluster.node_groups, cluster.devices).
  bool uneven_compute() const {
    for (const DeviceSpec& d : devices) {
      if (d.effective_flops() != devices.front().effective_flops()) return true;
    }
    return false;
  }
  // Every device the cluster's GPU at its full speed, every link as built: no overrides, no node
  // groups of another GPU.
  bool as_built() const {
    if (scaled_links) return false;
    for (const DeviceSpec& d : devices) {
      if (d.compute_scale != 1 || d.peak_flops != devices.front().peak_flops) return false;
    }
    return true;
  }
  bool across_leaves(int a, int b) const {
    return fabric.inter == InterNodeFabric::kFatTree && fabric.oversubscription > 1 &&
           devices[a].node / fabric.nodes_per_leaf != devices[b].node / fabric.nodes_per_leaf;
  }
  // Devices whose nodes share an NVLink domain (node / nvlink_domain_nodes).
  bool same_nvlink_domain(int a, int b) const {
    return devices[a].node / nvlink_domain_nodes == devices[b].node / nvlink_domain_nodes;
  }
};

}  // namespace pipetwin
