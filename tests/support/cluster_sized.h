// The shipped scenarios of cluster size (their name says "<N>gpu" with N of 256 or more), and
// the settings that shrink one to a single replica of 32 microbatches (DualPipe's least on 16
// stages), without expert parallelism: for the tests whose property does not depend on the
// scale, where the full size would take minutes in sanitized builds.
#pragma once

#include <regex>
#include <string>

namespace pipetwin::testing {

inline bool cluster_sized(const std::string& name) {
  std::smatch m;
  return std::regex_search(name, m, std::regex("([0-9]+)gpu")) && std::stoi(m[1]) >= 256;
}

inline constexpr const char* kOneSmallReplica =
    " --set training.data_parallel=1 --set training.global_batch=32"
    " --set training.microbatches=32 --set training.expert_parallel=1";

}  // namespace pipetwin::testing
