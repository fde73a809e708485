// The one place a scenario is written back to text: by `plan --write-plan`, `profile -o`,
// `calibrate -o` and `calibrate --from`. Files a scenario refers to (model.pipedream_profile,
// cluster.simgrid_platform, freeze.log) are relative to the scenario they were read from;
// a scenario written elsewhere must still find them.
#pragma once

#include <string>

#include "scenario.pb.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {

// `scenario` (loaded from `source`) with every relative file path rewritten so that it
// resolves the same from `output`: relative to output's folder, or absolute when `output`
// is empty (stdout, whose destination is unknown). A built-in scenario's embedded files
// have no path on disk; they stay as written, with a warning on stderr.
proto::Scenario rebase_file_paths(proto::Scenario scenario, const LoadedScenario& source,
                                  const std::string& output);

// Writes the comment lines of `header`, then `scenario` rebased for `output`, to stdout when
// `output` is empty, else atomically to `output`. `what`, when not empty, is said on stderr
// as "<what> written to <output>".
void write_scenario(const proto::Scenario& scenario, const LoadedScenario& source,
                    const std::string& header, const std::string& output,
                    const std::string& what = "");

}  // namespace pipetwin
