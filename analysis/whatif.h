// What-if analysis of a measured job (after ByteDance's straggler study, OSDI'25): how fast
// would it have run without its stragglers, and who made it slow. The measured op graph
// (analysis/op_graph.h) is replayed
//  - with every op's measured time and launch delay: the measured step, as the check of the
//    dependency model;
//  - without launch delays: the step the graph explains;
//  - with every op at its op type's typical time (the mean over every step, stage and rank for
//    computation, the median for communication): the ideal step.
// The slowdown is the mean step without delays over the mean ideal one. Attribution: the ideal
// with one group's ops (a data-parallel rank, a stage, an op type; a pipeline transfer's send
// and receive count as one type, forward-pp-comm or backward-pp-comm) back at their measured
// times, over the ideal: the slowdown that group alone causes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/op_trace.h"

namespace pipetwin {

struct WhatIfResult {
  std::string name;
  std::vector<int32_t> steps;
  double measured_step_s = 0;  // means over the steps
  double replayed_step_s = 0;  // with launch delays
  double no_delay_step_s = 0;
  double ideal_step_s = 0;
  double slowdown = 1;         // no_delay over ideal
  double launch_slowdown = 1;  // measured over no_delay
  std::map<int32_t, double> step_slowdown;
  std::map<int32_t, double> by_stage, by_dp_rank;
  std::map<std::string, double> by_op;
};

WhatIfResult what_if(const OpTrace& trace);

}  // namespace pipetwin
