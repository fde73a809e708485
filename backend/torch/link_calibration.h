// `pipetwin calibrate`: how fast the ranks' links are. Rank 0 and rank 1 exchange
// messages of several sizes; half the fastest round trip of each size is its one-way time,
// and a line through (bytes, time) fitted on relative error gives latency + bytes /
// bandwidth, the link model both simulators use. Torch-free header.
#pragma once

#include <utility>
#include <vector>

#include "backend/torch/real_run.h"

namespace pipetwin {

struct LinkCalibration {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  std::vector<std::pair<double, double>> samples;  // (bytes, one-way seconds)
};

struct LinkCalibrations {
  LinkCalibration alone;       // idle ranks: each size's fastest exchange
  LinkCalibration under_load;  // every rank keeping a compute thread busy meanwhile
                               // (background_load.h), as in a run: the median exchange
};

// Every rank of the job calls it; ranks other than 0 and 1 only join the rendezvous.
LinkCalibrations calibrate_link(const RankEnvironment& env, const std::vector<int64_t>& sizes,
                                int repeats, double timeout_s);

}  // namespace pipetwin
