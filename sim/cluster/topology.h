// The links of a cluster and the route between any two endpoints, in plain C++.
// The simgrid engine instantiates exactly these links and routes; link statistics and
// hand-computed tests read them too, so the wiring is written down once.
//
// Endpoints are the devices (0 .. devices-1) and one host CPU per node
// (host_endpoint(node)), the far end of offload traffic.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

struct TopologyLink {
  std::string name;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  // A split-duplex link carries each direction at full bandwidth; a shared one carries
  // the sum of both.
  bool split_duplex = true;
};

struct LinkHop {
  int32_t link = 0;
  bool up = true;  // direction on a split-duplex link
  bool operator==(const LinkHop&) const = default;
};

class Topology {
 public:
  // The cluster's fabric as FabricSpec describes it (contention modelled).
  static Topology shared(const ClusterSpec& cluster);
  // One dedicated link per ordered pair in `pairs`, with the bandwidth and latency the
  // analytic executor uses for it: no two transfers can ever share a link. Endpoints past
  // the devices and the hosts (data_parallel_endpoint) are the devices' data-parallel
  // twins, so that the two collective lanes of a pair of GPUs get a link each.
  static Topology dedicated(const ClusterSpec& cluster,
                            const std::vector<std::pair<int32_t, int32_t>>& pairs);

  const std::vector<TopologyLink>& links() const { return links_; }
  bool dedicated() const { return dedicated_; }
  int32_t num_devices() const { return num_devices_; }
  int32_t host_endpoint(int32_t node) const { return num_devices_ + node; }
  // A device's twin endpoint for its data-parallel lane in a dedicated topology.
  static int32_t data_parallel_endpoint(const ClusterSpec& cluster, int32_t device) {
    return static_cast<int32_t>(cluster.devices.size()) + cluster.nodes + device;
  }
  // The host CPU of a device's node: where its offloaded activations go.
  int32_t host_of(int32_t device) const { return host_endpoint(node(device)); }
  int32_t num_endpoints() const { return num_devices_ + nodes_; }

  // The links from `from` to `to`, in order. Throws std::invalid_argument if there is none
  // (dedicated topologies only know their pairs).
  std::vector<LinkHop> route(int32_t from, int32_t to) const;

 private:
  int32_t add_link(std::string name, double bandwidth, double latency, bool split_duplex);
  std::vector<LinkHop> device_to_device(int32_t a, int32_t b) const;
  std::vector<LinkHop> device_to_host(int32_t device) const;
  int32_t local(int32_t device) const { return local_[device]; }
  int32_t node(int32_t device) const { return node_[device]; }
  int32_t nvlink_domain(int32_t device) const { return node(device) / nvlink_domain_nodes_; }

  std::vector<TopologyLink> links_;
  int32_t num_devices_ = 0;
  int32_t nodes_ = 0;
  int32_t gpus_per_node_ = 1;
  int32_t nvlink_domain_nodes_ = 1;
  std::vector<int32_t> node_, local_;  // per device (training.rank_order may permute them)
  FabricSpec fabric_;
  bool dedicated_ = false;
  // Shared topology: first link index of each family (see topology.cpp).
  int32_t gpu_port_ = -1, node_switch_ = -1, mesh_ = -1, nic_ = -1, leaf_ = -1, host_ = -1;
  int32_t nics_per_node_ = 0, host_links_per_node_ = 0, gpus_per_host_link_ = 0;
  // Dedicated topology: link of each ordered pair.
  std::vector<std::pair<std::pair<int32_t, int32_t>, int32_t>> pair_links_;
};

}  // namespace pipetwin
