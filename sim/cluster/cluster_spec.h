// The resolved cluster: one entry per GPU and the links between them.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;

  double transfer_seconds(double bytes) const {
    return latency_s + (bandwidth_bytes_per_s > 0 ? bytes / bandwidth_bytes_per_s : 0);
  }
};

struct DeviceSpec {
  int id = 0;
  int node = 0;
  std::string name;  // "gpu3" (global index)
  double peak_flops = 0;
  double memory_bytes = 0;
};

struct ClusterSpec {
  std::vector<DeviceSpec> devices;
  int gpus_per_node = 1;
  LinkSpec intra_node;
  LinkSpec inter_node;
  LinkSpec host_link;

  const LinkSpec& link(int a, int b) const {
    return devices[a].node == devices[b].node ? intra_node : inter_node;
  }
};

}  // namespace pipetwin
