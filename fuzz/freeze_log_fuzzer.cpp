// Freeze logs (sim/scenario/freeze_log.h): parse_freeze_log for the layer count the log's own
// "layers" line names, format_freeze_log of what it read must read back the same, then the
// log replayed by a small FreezePipe scenario of that many layers (freeze.log, resolved and
// simulated over the whole training run as `pipetwin simulate` does).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "sim/scenario/freeze_log.h"

using namespace pipetwin;

namespace {

// The number after the first "layers" word, or 1.
int32_t layers_named(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    int32_t layers = 0;
    if (words >> key && key == "layers" && words >> layers) return layers;
  }
  return 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const int32_t layers = layers_named(text);
  FreezeLog log;
  try {
    log = parse_freeze_log(text, "fuzz.freezelog", layers);
  } catch (const InputError&) {
    return 0;
  }
  // `pipetwin run` writes logs with format_freeze_log for `pipetwin simulate` to read.
  const FreezeLog back = parse_freeze_log(format_freeze_log(log), "formatted.freezelog", layers);
  if (back.layers != log.layers || back.interval_iterations != log.interval_iterations ||
      back.norms != log.norms) {
    std::abort();
  }
  if (layers > 64) return 0;  // the scenario below has one explicit layer per log layer
  static fuzz::MemoryFile file;
  file.set(data, size);
  std::string scenario =
      "cluster { nodes: 1 gpus_per_node: 4 gpu { peak_tflops: 100 memory_gib: 80 }\n"
      "          intra_node { bandwidth_gbytes_per_s: 100 } }\n"
      "model {\n";
  for (int32_t l = 0; l < layers; ++l) {
    scenario += "  layers { fwd_ms: 1 bwd_ms: 2 activation_bytes: 1000 parameter_bytes: 4000 }\n";
  }
  scenario +=
      "}\ntraining { global_batch: 16 microbatches: 4 iterations: " +
      std::to_string(std::min<int64_t>(
          int64_t{log.interval_iterations} * static_cast<int64_t>(log.norms.size() + 1), 1000)) +
      " }\nschedule { kind: GPIPE stages: " + std::to_string(std::min(layers, 4)) +
      " }\nfreeze { interval_iterations: 1 log: \"" + file.path() + "\" }\n";
  fuzz::load_and_simulate(scenario, file.path());
  return 0;
}
