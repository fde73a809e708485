#include "backend/common/measured_times.h"

#include <algorithm>

namespace pipetwin {

void pair_transfer_times(const Program& program, ExecutionTimes& times) {
  for (int32_t i = 0; i < program.size(); ++i) {
    const int32_t j = program.partner[i];
    if (j < 0 || !is_send(program.instructions[i].op)) continue;
    const double end = times.end_s[j];
    const double start = std::min(end, std::max(times.start_s[i], times.start_s[j]));
    times.start_s[i] = times.start_s[j] = start;
    times.end_s[i] = times.end_s[j] = end;
  }
}

}  // namespace pipetwin
