#include "sim/resource_limits.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// What one instruction costs in memory across a run: the Instruction and its dependency
// lists, its times, its memory samples and its timeline span (measured: ~650 bytes with
// either engine, at 160 k instructions).
constexpr double kBytesPerInstruction = 700;
// What one device costs without any instruction (platform, lanes, counters).
constexpr double kBytesPerDevice = 64 * 1024;

std::string count_text(double value) {
  char buffer[32];
  if (value >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3g billion", value / 1e9);
  } else if (value >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3g million", value / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  }
  return buffer;
}

std::string gib_text(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g GiB", bytes / (1024.0 * 1024 * 1024));
  return buffer;
}

// Microbatches of the stage that cuts the minibatch finest, forward or backward.
double max_cuts(const ResolvedScenario& setup) {
  double cuts = std::max(1, setup.training.microbatches);
  for (const StagePlan& stage : setup.schedule.stage_plans.stages) {
    cuts = std::max<double>(cuts, stage.forward_sizes.size());
    cuts = std::max<double>(cuts, stage.backward_sizes.size());
  }
  return cuts;
}

}  // namespace

namespace {

double half_of_available_memory() {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    double kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lf kB", &kib) == 1) {
      return std::max(1 * kGiB, kib * 1024 / 2);
    }
  }
  return 4 * kGiB;
}

}  // namespace

// Read once per process: every ResourceLimits starts from it (a fuzzer builds one per input).
double default_memory_limit_bytes() {
  static const double bytes = half_of_available_memory();
  return bytes;
}

ProgramSizeEstimate estimate_program_size(const ResolvedScenario& setup) {
  const double iterations = std::max(1, setup.training.iterations);
  const double replicas = std::max(1, setup.training.data_parallel);
  const double chunks = std::max(1, setup.schedule.chunks());
  const double microbatches = max_cuts(setup);
  // Per replica and iteration: a FWD and a BWD per chunk and microbatch; a SEND and a RECV
  // of activations and of gradients per boundary and microbatch (unequal cuts, planned per
  // stage, add at most one transfer per cut on either side, and asynchronous pipelines'
  // replicated stages more, hence the factor 2 for those); an OPTIM and an ALLREDUCE per
  // chunk; OFFLOAD and RELOAD per stash; PipeFB's stash and weight hand-overs.
  const bool equal_cuts =
      setup.schedule.stage_plans.stages.empty() && !is_asynchronous(setup.schedule.kind);
  const double transfers = equal_cuts ? 4 : 8;
  double per_iteration =
      2 * chunks * microbatches + transfers * (chunks - 1) * microbatches + 2 * chunks;
  if (setup.schedule.offload.enabled) per_iteration += 2 * chunks * microbatches;
  if (setup.schedule.kind == proto::PIPEFB) per_iteration += 2 * chunks * microbatches + 2 * chunks;
  // Expert parallelism: an all-to-all after every FWD and BWD, and the experts' own
  // gradient ALLREDUCE per chunk.
  if (setup.training.expert_parallel > 1) per_iteration += 2 * chunks * microbatches + chunks;
  // ZeRO: an all-gather of the updated weights per chunk (1, 2); a reduce-scatter after
  // every backward (2, 3); and two all-gathers before every FWD and BWD (3).
  const int32_t zero_stage = setup.training.zero_stage;
  if (zero_stage >= 1) per_iteration += chunks;
  if (zero_stage >= 2) per_iteration += chunks * microbatches;
  if (zero_stage == 3) per_iteration += 4 * chunks * microbatches;
  // Gradient buckets: at most three collectives for each gradient reduction (an all-reduce
  // per chunk, or ZeRO's reduce-scatters).
  if (setup.training.grad_bucket_bytes > 0 && replicas > 1) {
    per_iteration += 2 * (zero_stage >= 2 ? chunks * microbatches : chunks);
  }
  // Context parallelism: every instruction on each of C GPUs, and a key/value exchange after
  // every FWD (one) and BWD (two).
  const double context_parallel = std::max(1, setup.training.context_parallel);
  if (context_parallel > 1)
    per_iteration = context_parallel * (per_iteration + 3 * chunks * microbatches);
  // Tensor parallelism: every instruction on each of a stage's T GPUs, and an all-reduce
  // after every FWD and BWD.
  const double tensor_parallel = std::max(1, setup.training.tensor_parallel);
  if (tensor_parallel > 1)
    per_iteration = tensor_parallel * (per_iteration + 2 * chunks * microbatches);
  ProgramSizeEstimate size;
  // FreezePipe simulates one iteration per phase, but keeps gradient statistics for every
  // interval of the run.
  const double simulated_iterations = setup.freeze.enabled ? 1 : iterations;
  size.instructions = per_iteration * replicas * simulated_iterations;
  size.memory_bytes = size.instructions * kBytesPerInstruction +
                      static_cast<double>(setup.cluster.devices.size()) * kBytesPerDevice;
  if (setup.freeze.enabled) {
    const double intervals = iterations / std::max(1, setup.freeze.interval_iterations);
    size.memory_bytes += 2 * intervals * static_cast<double>(setup.model.layers.size()) * 8;
  }
  const std::pair<const char*, double> factors[] = {{"training.iterations", iterations},
                                                    {"training.microbatches", microbatches},
                                                    {"training.data_parallel", replicas},
                                                    {"training.tensor_parallel", tensor_parallel},
                                                    {"schedule.stages", chunks}};
  for (const auto& [field, value] : factors) {
    if (value > size.driver_value) {
      size.driver = field;
      size.driver_value = value;
    }
  }
  if (static_cast<double>(setup.cluster.devices.size()) * kBytesPerDevice >
      size.instructions * kBytesPerInstruction) {
    size.driver = "cluster.nodes";
    size.driver_value = setup.cluster.nodes;
  }
  return size;
}

bool within_limits(const ProgramSizeEstimate& size, const ResourceLimits& limits) {
  return size.instructions <= static_cast<double>(limits.max_instructions) &&
         size.memory_bytes <= limits.max_memory_bytes;
}

void check_resource_limits(const ResolvedScenario& setup, const ResourceLimits& limits) {
  const ProgramSizeEstimate size = estimate_program_size(setup);
  if (within_limits(size, limits)) return;
  char value[32];
  std::snprintf(value, sizeof value, "%.0f", size.driver_value);
  throw InputError("the scenario would build a Program of about " + count_text(size.instructions) +
                   " instructions needing about " + gib_text(size.memory_bytes) +
                   ", more than the limits of " +
                   count_text(static_cast<double>(limits.max_instructions)) + " instructions (" +
                   "--max-instructions) and " + gib_text(limits.max_memory_bytes) +
                   " (--max-memory GiB); " + size.driver + " = " + value +
                   " drives it. Lower it, or raise the limits if the machine has the memory.");
}

}  // namespace pipetwin
