#include "sim/sweep/sweep_row.h"

#include <algorithm>

namespace pipetwin {

void sort_by_iteration_time(std::vector<SweepRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
    if (a.result.failed() != b.result.failed()) return b.result.failed();
    return !a.result.failed() && a.result.iteration_time_s < b.result.iteration_time_s;
  });
}

}  // namespace pipetwin
