#include "sim/cli/scenario_output.h"

#include <google/protobuf/text_format.h>

#include <iostream>

#include "traces/atomic_file.h"

namespace pipetwin {

void write_scenario_file(const proto::Scenario& scenario, const std::string& header,
                         const std::string& output, const std::string& what) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(scenario, &text);
  text = header + text;
  if (output.empty()) {
    std::cout << text;
    return;
  }
  write_file_atomically(output, [&](std::ostream& out) { out << text; });
  std::cerr << what << " written to " << output << "\n";
}

}  // namespace pipetwin
