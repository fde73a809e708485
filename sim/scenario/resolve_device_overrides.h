// cluster.node_groups and cluster.overrides: nodes of other GPU types, and devices or links
// slower than the cluster's (docs/goodput.md, "Slow and mixed hardware").
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// Gives the GPUs on the nodes of each cluster.node_groups entry (where the ranks were placed:
// after training.rank_order) their GPU's peak and memory.
void apply_node_groups(const ScenarioChecker& check, const proto::Scenario& scenario,
                       ClusterSpec& cluster);

// Multiplies each cluster.overrides entry's scales into the devices it names.
void apply_device_scales(const ScenarioChecker& check, const proto::Cluster& c,
                         ClusterSpec& cluster);

// Each device's NIC scales: those of the slowest GPU sending through its NIC (once the ranks
// are placed on their nodes).
void share_nic_scales(ClusterSpec& cluster);

}  // namespace pipetwin
