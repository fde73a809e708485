#include "backend/torch/link_calibration.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "backend/common/link_fit.h"
#include "backend/torch/background_load.h"
#include "backend/torch/gloo_group.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// Ping-pong of every size between ranks 0 and 1 on `pg`; `tag` runs on across calls.
LinkCalibration measure_link(c10d::ProcessGroupGloo& pg, const RankEnvironment& env,
                             const std::vector<int64_t>& sizes, int repeats, bool under_load,
                             int& tag) {
  std::optional<BackgroundLoad> load;
  if (under_load) load.emplace(1);  // this rank's compute thread, as in a run
  LinkCalibration result;
  for (int64_t bytes : sizes) {
    std::vector<torch::Tensor> message = {torch::zeros({std::max<int64_t>(bytes / 4, 1)})};
    std::vector<double> round_trips;
    for (int k = 0; k < repeats + 2; ++k, tag += 2) {  // two warm-up exchanges
      if (env.rank == 0) {
        const auto start = std::chrono::steady_clock::now();
        pg.send(message, 1, tag)->wait();
        pg.recv(message, 1, tag + 1)->wait();
        const double rtt =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (k >= 2) round_trips.push_back(rtt);
      } else if (env.rank == 1) {
        pg.recv(message, 0, tag)->wait();
        pg.send(message, 0, tag + 1)->wait();
      }
    }
    if (env.rank == 0) {
      // Alone, the fastest exchange: noise (a descheduled thread) only adds time. Under
      // load, the median: waiting for a core is part of what a run's transfers see.
      std::sort(round_trips.begin(), round_trips.end());
      const double round_trip = under_load ? round_trips[round_trips.size() / 2] : round_trips[0];
      result.samples.emplace_back(static_cast<double>(message[0].numel() * 4), round_trip / 2);
    }
  }
  if (env.rank != 0) return result;
  const LinkFit fit = fit_link(result.samples);
  result.latency_s = fit.latency_s;
  result.bandwidth_bytes_per_s = fit.bandwidth_bytes_per_s;
  return result;
}

}  // namespace

LinkCalibrations calibrate_link(const RankEnvironment& env, const std::vector<int64_t>& sizes,
                                int repeats, double timeout_s) {
  if (env.world_size < 2) throw InputError("calibrate needs at least 2 ranks (--nproc 2)");
  auto pg = connect(env, timeout_s);
  int tag = 0;
  LinkCalibrations result;
  result.alone = measure_link(*pg, env, sizes, repeats, /*under_load=*/false, tag);
  result.under_load = measure_link(*pg, env, sizes, repeats, /*under_load=*/true, tag);
  return result;
}

}  // namespace pipetwin
