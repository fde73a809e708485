#include "backend/torch/clock_alignment.h"

#include <chrono>

namespace pipetwin {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ClockAlignment align_clocks(c10d::ProcessGroupGloo& pg, const RankEnvironment& env, int first_tag) {
  ClockAlignment result;
  for (int r = 1; r < env.world_size; ++r) {
    if (env.rank != 0 && env.rank != r) continue;
    double best_rtt = 1e30;
    for (int k = 0; k < 5; ++k) {
      std::vector<torch::Tensor> t = {torch::zeros({3}, torch::kFloat64)};
      const int tag = first_tag + 16 * r + 2 * k;
      if (env.rank == r) {
        const double t1 = steady_now_s();
        t[0][0] = t1;
        pg.send(t, 0, tag)->wait();
        pg.recv(t, 0, tag + 1)->wait();
        const double t4 = steady_now_s();
        const double t2 = t[0][1].item<double>(), t3 = t[0][2].item<double>();
        if (t4 - t1 < best_rtt) {
          best_rtt = t4 - t1;
          result.offset_s = ((t2 - t1) + (t3 - t4)) / 2;
        }
      } else {
        pg.recv(t, r, tag)->wait();
        t[0][1] = steady_now_s();
        t[0][2] = steady_now_s();
        pg.send(t, r, tag + 1)->wait();
      }
    }
  }
  std::vector<torch::Tensor> clock = {
      torch::full({1}, env.rank == 0 ? steady_now_s() : 0.0, torch::kFloat64)};
  pg.broadcast(clock)->wait();
  result.rank0_start_s = clock[0].item<double>() - result.offset_s;
  return result;
}

}  // namespace pipetwin
