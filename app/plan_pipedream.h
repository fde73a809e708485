// `pipetwin plan SCENARIO --search pipedream [--straight] [--json] [--write-plan FILE]
// [--report FILE.html]`:
// PipeDream's antichain DP partition (with APapo's heterogeneous devices), docs/apapo.md.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

struct PipedreamPlanArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  bool straight = false;
  bool json = false;
  std::string write_plan;
  std::string report_path;
};

void run_pipedream_plan(const PipedreamPlanArgs& args);

}  // namespace pipetwin
