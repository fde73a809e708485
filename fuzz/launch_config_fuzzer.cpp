// Launch configurations (sim/scenario/import_megatron.h, import_torchtitan.h): the input is a
// torchtitan job file, and the same bytes split at white space are Megatron's arguments; each
// imported scenario then goes through `pipetwin simulate`'s pipeline. Bad input is an
// InputError or RuntimeFailure, nothing else.
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "sim/scenario/import_megatron.h"
#include "sim/scenario/import_torchtitan.h"

using namespace pipetwin;

namespace {

void simulate_imported(const ImportedScenario& imported) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(imported.scenario, &text)) std::abort();
  fuzz::load_and_simulate(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile job;
  job.set(data, size);
  fuzz::expect_only_reported_errors(
      [&] { simulate_imported(scenario_from_torchtitan(job.path(), "dgx-h100", 1)); });
  std::istringstream words(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<std::string> args;
  for (std::string word; words >> word;) args.push_back(word);
  fuzz::expect_only_reported_errors(
      [&] { simulate_imported(scenario_from_megatron_args(args, "dgx-h100", 1)); });
  return 0;
}
