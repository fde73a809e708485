// Scenario text (protobuf text format, docs/scenario-format.md) through everything
// `pipetwin simulate` does with it on the analytic engine: parse_scenario, resolve_scenario,
// the resource limits, build_program, execute, the memory curve, link usage, the timeline, the
// metrics and the Chrome trace. UMPIPE plans are scenarios with schedule.stage_plans; their
// seeds are scenarios/umpipe-*.textproto.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pipetwin::fuzz::load_and_simulate(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
