// When each instruction of a Program ran: what every executor produces before it is
// turned into a Timeline.
#pragma once

#include <algorithm>
#include <vector>

namespace pipetwin {

struct ExecutionTimes {
  std::vector<double> start_s;  // indexed like Program::instructions
  std::vector<double> end_s;

  // The last end (0 for no instructions).
  double last_end_s() const {
    return end_s.empty() ? 0 : *std::max_element(end_s.begin(), end_s.end());
  }
  // From the first start to the last end (0 for no instructions).
  double span_s() const {
    if (start_s.empty()) return 0;
    return *std::max_element(end_s.begin(), end_s.end()) -
           *std::min_element(start_s.begin(), start_s.end());
  }
};

}  // namespace pipetwin
