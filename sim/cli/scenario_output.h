// Where the commands that write a scenario (profile, calibrate, calibrate --from) put it:
// a comment header, then the scenario in text format, to stdout or atomically to a file.
#pragma once

#include <string>

#include "scenario.pb.h"

namespace pipetwin {

// Writes `header` (comment lines) and `scenario` to `output`, or to stdout when empty;
// a file written says so on stderr as "<what> written to <output>".
void write_scenario_file(const proto::Scenario& scenario, const std::string& header,
                         const std::string& output, const std::string& what);

}  // namespace pipetwin
