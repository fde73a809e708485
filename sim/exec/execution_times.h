// When each instruction of a Program ran: what every executor produces before it is
// turned into a Timeline.
#pragma once

#include <vector>

namespace pipetwin {

struct ExecutionTimes {
  std::vector<double> start_s;  // indexed like Program::instructions
  std::vector<double> end_s;
};

}  // namespace pipetwin
