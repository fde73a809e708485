// The shipped scenarios (scenarios/*.textproto) for the tests that run each of them, and the
// settings that shrink a cluster-sized one (its name says "<N>gpu" with N of 256 or more) to a
// single replica of 32 microbatches (DualPipe's least on 16 stages), without expert
// parallelism: for the tests whose property does not depend on the scale, where the full size
// would take minutes in sanitized builds. The largest (8192 GPUs or more, or a Program of
// millions of instructions by sim/driver/resource_limits.h's estimate: seconds to build in Release)
// are shrunk in every build; their whole step is measured in bench/ (docs/performance.md).
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "sim/driver/resource_limits.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

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

// The GPUs a scenario's name says it has ("<N>gpu"), or 0.
inline int named_gpus(const std::string& name) {
  std::smatch m;
  return std::regex_search(name, m, std::regex("([0-9]+)gpu")) ? std::stoi(m[1]) : 0;
}

inline bool cluster_sized(const std::string& name) { return named_gpus(name) >= 256; }

// Too large to simulate whole in the tests of every scenario, in any build.
inline bool benchmark_sized(const std::string& name) {
  if (named_gpus(name) >= 8192) return true;
  if (named_gpus(name) < 256) return false;
  // A published step of hundreds of microbatches over many model chunks (MLPerf's 405B on
  // 512 GPUs: 14 million instructions).
  constexpr double kMostInstructions = 4e6;
  const auto path =
      std::filesystem::path(PIPETWIN_SOURCE_DIR) / "scenarios" / (name + ".textproto");
  return estimate_program_size(resolve_scenario(load_scenario(path.string(), {}))).instructions >
         kMostInstructions;
}

// The overrides ("path=value") that shrink a cluster-sized scenario to one replica of 32
// microbatches, and one that splits its sequences ("-cp<N>" in its name, N GPUs per sequence)
// to 2 GPUs each. A benchmark-sized one also gets 4 stages of 2 tensor-parallel GPUs, 8
// microbatches and 2 nodes (of 8 GPUs: a fabric of 16,384 GPUs takes SimGrid seconds to
// build).
inline std::vector<std::string> one_small_replica_overrides(const std::string& name) {
  std::vector<std::string> set = {"training.data_parallel=1", "training.expert_parallel=1"};
  if (benchmark_sized(name)) {
    set.insert(set.end(), {"training.global_batch=8", "training.microbatches=8",
                           "training.tensor_parallel=2", "schedule.stages=4", "cluster.nodes=2"});
  } else {
    set.insert(set.end(), {"training.global_batch=32", "training.microbatches=32"});
  }
  if (std::regex_search(name, std::regex("-cp[0-9]+")))
    set.push_back("training.context_parallel=2");
  return set;
}

// The same as command-line options.
inline std::string one_small_replica(const std::string& name) {
  std::string options;
  for (const std::string& s : one_small_replica_overrides(name)) options += " --set " + s;
  return options;
}

}  // namespace pipetwin::testing
