// Named clusters filled in from public figures (sources in docs/clusters.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

// The preset's cluster with every field set, or nullopt for an unknown name.
std::optional<proto::Cluster> cluster_preset(const std::string& name);

std::vector<std::string> cluster_preset_names();

}  // namespace pipetwin
