#include "sim/cluster/topology.h"

#include <algorithm>
#include <stdexcept>

namespace pipetwin {

int32_t Topology::add_link(std::string name, double bandwidth, double latency, bool split_duplex) {
  links_.push_back({std::move(name), bandwidth, latency, split_duplex});
  return static_cast<int32_t>(links_.size()) - 1;
}

// Links, by family (index = family start + position):
// - gpu_port: per GPU, a split-duplex port into the node's (or NVLink domain's) switch, half the
// intra-node
//   latency each way so that port + port = one intra-node hop (NVSWITCH, PCIE_SWITCH);
// - node_switch: per node, the PCIe switch every GPU-to-GPU flow crosses (PCIE_SWITCH);
// - mesh: per GPU pair of a node, a split-duplex NVLink (NVLINK_MESH);
// - nic: per NIC, split-duplex, half the inter-node latency each;
// - leaf: per leaf switch, its split-duplex uplink to the spine (FAT_TREE), carrying
//   (NICs under the leaf x NIC bandwidth) / oversubscription;
// - host: per group of gpus_per_host_link GPUs, the split-duplex PCIe link to the host.
namespace {

void place_devices(const ClusterSpec& cluster, std::vector<int32_t>& node,
                   std::vector<int32_t>& local) {
  for (const DeviceSpec& d : cluster.devices) {
    node.push_back(d.node);
    local.push_back(d.slot >= 0 ? d.slot : d.id % cluster.gpus_per_node);
  }
}

}  // namespace

Topology Topology::shared(const ClusterSpec& cluster) {
  Topology t;
  place_devices(cluster, t.node_, t.local_);
  t.num_devices_ = static_cast<int32_t>(cluster.devices.size());
  t.nodes_ = cluster.nodes;
  t.gpus_per_node_ = cluster.gpus_per_node;
  t.nvlink_domain_nodes_ = cluster.nvlink_domain_nodes;
  t.fabric_ = cluster.fabric;
  const int32_t g = cluster.gpus_per_node;
  const LinkSpec& intra = cluster.intra_node;
  const LinkSpec& inter = cluster.inter_node;
  const auto name = [](const std::string& family, int32_t a, int32_t b = -1) {
    std::string text = family;  // appended: GCC 12 warns (-Wrestrict, falsely) on prepending
    text += std::to_string(a);
    if (b >= 0) text.append("_").append(std::to_string(b));
    return text;
  };

  if (t.fabric_.intra == IntraNodeFabric::kNvLinkMesh) {
    t.mesh_ = static_cast<int32_t>(t.links_.size());
    // The device in each slot of each node, whose scales its NVLinks take.
    std::vector<int32_t> in_slot(static_cast<size_t>(t.nodes_) * g);
    for (int32_t d = 0; d < t.num_devices_; ++d) in_slot[t.node(d) * g + t.local(d)] = d;
    for (int32_t n = 0; n < t.nodes_; ++n) {
      for (int32_t a = 0; a < g; ++a) {
        for (int32_t b = a + 1; b < g; ++b) {
          const LinkSpec link = cluster.link(in_slot[n * g + a], in_slot[n * g + b]);
          t.add_link(name("nvlink", n * g + a, n * g + b), link.bandwidth_bytes_per_s,
                     link.latency_s, true);
        }
      }
    }
  } else {
    t.gpu_port_ = static_cast<int32_t>(t.links_.size());
    const std::string family =
        t.fabric_.intra == IntraNodeFabric::kNvSwitch ? "nvswitch_port" : "pcie_port";
    for (int32_t d = 0; d < t.num_devices_; ++d) {
      const DeviceSpec& device = cluster.devices[d];
      t.add_link(name(family, d), intra.bandwidth_bytes_per_s * device.port_scale,
                 intra.latency_s / 2 * device.port_latency_scale, true);
    }
    if (t.fabric_.intra == IntraNodeFabric::kPcieSwitch) {
      t.node_switch_ = static_cast<int32_t>(t.links_.size());
      for (int32_t n = 0; n < t.nodes_; ++n) {
        t.add_link(name("pcie_switch", n), intra.bandwidth_bytes_per_s, 0, false);
      }
    }
  }

  if (t.nodes_ > 1) {
    t.nics_per_node_ = t.fabric_.nics_per_node > 0 ? t.fabric_.nics_per_node : g;
    t.nic_ = static_cast<int32_t>(t.links_.size());
    // Each NIC at the scales of the GPUs sending through it (DeviceSpec::nic_scale, equal for
    // all of them).
    std::vector<std::pair<double, double>> scales(static_cast<size_t>(t.nodes_) * t.nics_per_node_,
                                                  {1.0, 1.0});
    for (int32_t d = 0; d < t.num_devices_; ++d) {
      scales[t.node(d) * t.nics_per_node_ + t.local(d) % t.nics_per_node_] = {
          cluster.devices[d].nic_scale, cluster.devices[d].nic_latency_scale};
    }
    for (int32_t n = 0; n < t.nodes_; ++n) {
      for (int32_t k = 0; k < t.nics_per_node_; ++k) {
        const auto [bandwidth, latency] = scales[n * t.nics_per_node_ + k];
        t.add_link(name("nic", n, k), inter.bandwidth_bytes_per_s * bandwidth,
                   inter.latency_s / 2 * latency, true);
      }
    }
    // At full bisection (oversubscription 1) a leaf's uplink carries what its NICs can send and
    // never binds: the tree is the flat switch, without links that would only tie.
    if (t.fabric_.inter == InterNodeFabric::kFatTree && t.fabric_.oversubscription > 1) {
      t.leaf_ = static_cast<int32_t>(t.links_.size());
      const int32_t leaves = (t.nodes_ + t.fabric_.nodes_per_leaf - 1) / t.fabric_.nodes_per_leaf;
      const double uplink = t.fabric_.nodes_per_leaf * t.nics_per_node_ *
                            inter.bandwidth_bytes_per_s / t.fabric_.oversubscription;
      for (int32_t l = 0; l < leaves; ++l) t.add_link(name("leaf_uplink", l), uplink, 0, true);
    }
  }

  if (cluster.host_link.bandwidth_bytes_per_s > 0) {
    t.gpus_per_host_link_ = t.fabric_.gpus_per_host_link > 0 ? t.fabric_.gpus_per_host_link : g;
    t.host_links_per_node_ = (g + t.gpus_per_host_link_ - 1) / t.gpus_per_host_link_;
    t.host_ = static_cast<int32_t>(t.links_.size());
    for (int32_t n = 0; n < t.nodes_; ++n) {
      for (int32_t k = 0; k < t.host_links_per_node_; ++k) {
        t.add_link(name("host_pcie", n, k), cluster.host_link.bandwidth_bytes_per_s,
                   cluster.host_link.latency_s, true);
      }
    }
  }
  return t;
}

Topology Topology::dedicated(const ClusterSpec& cluster,
                             const std::vector<std::pair<int32_t, int32_t>>& pairs) {
  Topology t;
  place_devices(cluster, t.node_, t.local_);
  t.dedicated_ = true;
  t.num_devices_ = static_cast<int32_t>(cluster.devices.size());
  t.nodes_ = cluster.nodes;
  t.gpus_per_node_ = cluster.gpus_per_node;
  const int32_t devices = t.num_devices_;
  const int32_t twins = devices + cluster.nodes;  // data_parallel_endpoint(cluster, 0)
  for (const auto& [a, b] : pairs) {
    const auto device = [&](int32_t e) { return e >= twins ? e - twins : e; };
    const bool host = (a >= devices && a < twins) || (b >= devices && b < twins);
    // A host endpoint at either end: a copy over the device's host link.
    const LinkSpec& spec = host ? cluster.host_link : cluster.link(device(a), device(b));
    const int32_t link = t.add_link("pair" + std::to_string(a) + "_" + std::to_string(b),
                                    spec.bandwidth_bytes_per_s, spec.latency_s, false);
    t.pair_links_.push_back({{a, b}, link});
  }
  std::sort(t.pair_links_.begin(), t.pair_links_.end());
  return t;
}

std::vector<LinkHop> Topology::device_to_device(int32_t a, int32_t b) const {
  const int32_t g = gpus_per_node_;
  // An NVLink domain of several nodes is one NVSwitch fabric: port to port (the resolver
  // allows it with NVSWITCH only).
  if (node(a) == node(b) || nvlink_domain(a) == nvlink_domain(b)) {
    if (mesh_ >= 0) {
      // Pairs (x, y), x < y, of one node are numbered row by row.
      const int32_t x = std::min(local(a), local(b)), y = std::max(local(a), local(b));
      const int32_t index = x * g - x * (x + 1) / 2 + (y - x - 1);
      return {{mesh_ + node(a) * (g * (g - 1) / 2) + index, a < b}};
    }
    std::vector<LinkHop> hops = {{gpu_port_ + a, true}};
    if (node_switch_ >= 0) hops.push_back({node_switch_ + node(a), true});
    hops.push_back({gpu_port_ + b, false});
    return hops;
  }
  const auto nic = [&](int32_t d) {
    return nic_ + node(d) * nics_per_node_ + local(d) % nics_per_node_;
  };
  std::vector<LinkHop> hops = {{nic(a), true}};
  if (leaf_ >= 0) {
    const int32_t leaf_a = node(a) / fabric_.nodes_per_leaf,
                  leaf_b = node(b) / fabric_.nodes_per_leaf;
    if (leaf_a != leaf_b) {
      hops.push_back({leaf_ + leaf_a, true});
      hops.push_back({leaf_ + leaf_b, false});
    }
  }
  hops.push_back({nic(b), false});
  return hops;
}

std::vector<LinkHop> Topology::device_to_host(int32_t device) const {
  if (host_ < 0) throw std::invalid_argument("the cluster has no host_link");
  return {
      {host_ + node(device) * host_links_per_node_ + local(device) / gpus_per_host_link_, true}};
}

std::vector<LinkHop> Topology::route(int32_t from, int32_t to) const {
  if (from == to) return {};
  if (dedicated_) {
    const auto it = std::lower_bound(pair_links_.begin(), pair_links_.end(),
                                     std::make_pair(std::make_pair(from, to), int32_t{-1}));
    if (it == pair_links_.end() || it->first != std::make_pair(from, to)) {
      throw std::invalid_argument("no dedicated link from " + std::to_string(from) + " to " +
                                  std::to_string(to));
    }
    return {{it->second, true}};
  }
  if (from < num_devices_ && to < num_devices_) return device_to_device(from, to);
  if (from < num_devices_) return device_to_host(from);
  if (to < num_devices_) {
    std::vector<LinkHop> hops = device_to_host(to);
    hops.front().up = false;
    return hops;
  }
  throw std::invalid_argument("no route between two hosts");
}

}  // namespace pipetwin
