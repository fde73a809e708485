// The last step of trace-driven calibration: what the fitted op costs and gaps do not
// explain of the measured makespan. A deterministic simulation of mean costs runs faster
// than the measured run it came from, because variable ops make every synchronisation
// wait for the later of two arrivals (a max of noisy times exceeds the max of their
// means). That waiting happens where a lane waits on another lane, so it is added to the
// wake-up gap (cluster.dispatch.wakeup_us) until the scenario simulates the measured
// makespan. When the mean gaps already overstate it, the wake-up gap is lowered instead,
// down to 0.
#pragma once

#include <string>

#include "scenario.pb.h"

namespace pipetwin {

struct MakespanMatch {
  double wakeup_before_s = 0;  // the mean measured gap
  double wakeup_after_s = 0;   // with the variability's waiting added
  double simulated_before_s = 0;
  double simulated_after_s = 0;
};

// Sets `scenario`'s cluster.dispatch.wakeup_us (>= 0) so that the analytic engine's
// makespan matches `measured_makespan_s` (to 0.01%, where a gap >= 0 can). `base_dir`
// resolves the scenario's relative paths.
MakespanMatch match_makespan(proto::Scenario& scenario, const std::string& base_dir,
                             double measured_makespan_s);

}  // namespace pipetwin
