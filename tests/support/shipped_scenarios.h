// The shipped scenarios (scenarios/*.textproto) for the tests that run each of them, and the
// settings that shrink a cluster-sized one (its name says "<N>gpu" with N of 256 or more) to a
// single replica of 32 microbatches (DualPipe's least on 16 stages), without expert
// parallelism: for the tests whose property does not depend on the scale, where the full size
// would take minutes in sanitized builds.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace pipetwin::testing {

// Their names without the extension, sorted.
inline std::vector<std::string> shipped_scenario_names() {
  std::vector<std::string> names;
  const auto folder = std::filesystem::path(PIPETWIN_SOURCE_DIR) / "scenarios";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".textproto") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A scenario's name as a gtest parameter name (letters, digits and '_').
inline std::string scenario_test_name(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

inline bool cluster_sized(const std::string& name) {
  std::smatch m;
  return std::regex_search(name, m, std::regex("([0-9]+)gpu")) && std::stoi(m[1]) >= 256;
}

// The overrides that shrink a cluster-sized scenario to one replica of 32 microbatches, and
// one that splits its sequences ("-cp<N>" in its name, N GPUs per sequence) to 2 GPUs each.
inline std::string one_small_replica(const std::string& name) {
  std::string set =
      " --set training.data_parallel=1 --set training.global_batch=32"
      " --set training.microbatches=32 --set training.expert_parallel=1";
  if (std::regex_search(name, std::regex("-cp[0-9]+"))) set += " --set training.context_parallel=2";
  return set;
}

}  // namespace pipetwin::testing
