#include "sim/driver/resource_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "sim/simgrid/engine_arguments.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// The process at its peak (/usr/bin/time's maximum resident set). Each figure was fitted on
// one run and predicts the others (docs/performance.md, "The estimate before the run", and
// bench/memory_estimate.py). The binary, its libraries and a small scenario ...
constexpr double kProcessBytes = 39e6;
// ... the analytic engine: per instruction the Program (the instruction, its dependency
// rows, its group), its times and memory samples; per device its lanes, peaks and report
// (fitted on megatron-gpt-145b-1536gpu and llama3-405b-16384gpu) ...
constexpr double kAnalyticBytesPerInstruction = 214;
constexpr double kAnalyticBytesPerDevice = 8.5e3;
// ... the timeline, when one is built: per instruction a span and the counters (fitted on
// megatron-gpt-145b-1536gpu with --trace; --timeline's protobuf message needs 2.5 times as
// much while it is written) ...
constexpr double kTimelineBytesPerInstruction = 350;
// ... and SimGrid on top: per device its host, links, routes and the touched pages of its
// lane actors' stacks (fitted on llama3-405b-16384gpu at 8 replicas, 1024 GPUs), and each
// actor's whole stack once there are too many actors for guard pages: SimGrid then
// allocates every stack in full (sim/simgrid/engine_arguments.h).
constexpr double kSimgridBytesPerDevice = 30e3;
// The link statistics keep every flow of every collective until the run ends: a ring has one
// flow per member (counted with its instruction), an all-to-all E-1 (fitted on
// deepseek-v3-2048gpu, whose expert all-to-alls have 64 members).
constexpr double kBytesPerExtraAllToAllFlow = 44;

// The lanes SimGrid runs an actor for on each device: compute; send and recv between
// stages or around a context-parallel ring; copies for offload; one for the collectives
// within a replica and one for those across replicas.
double lane_actors_per_device(const ResolvedScenario& setup) {
  const TrainingSpec& t = setup.training;
  double lanes = 1;
  if (setup.schedule.stages > 1 || t.context_parallel > 1) lanes += 2;
  if (setup.schedule.offload.enabled) lanes += 1;
  if (t.tensor_parallel > 1 || t.context_parallel > 1 || t.expert_parallel > 1) lanes += 1;
  if (t.data_parallel > 1) lanes += 1;
  return lanes;
}

// `all_to_all_flows`: the flows of the expert all-to-alls beyond one per member.
double memory_bytes(const ResolvedScenario& setup, double instructions, double all_to_all_flows,
                    const RunFootprint& footprint) {
  const double devices = static_cast<double>(setup.cluster.devices.size());
  double bytes = kProcessBytes + instructions * kAnalyticBytesPerInstruction +
                 devices * kAnalyticBytesPerDevice + all_to_all_flows * kBytesPerExtraAllToAllFlow;
  if (footprint.timeline) bytes += instructions * kTimelineBytesPerInstruction;
  if (footprint.engine == Engine::kSimgrid) {
    const double actors = devices * lane_actors_per_device(setup);
    bytes += devices * kSimgridBytesPerDevice;
    if (actors > kSimgridGuardedActors) bytes += actors * kSimgridActorStackKib * 1024.0;
  }
  return bytes;
}

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

// Half of the address space the process may still take under its own limits (ulimit -v:
// RLIMIT_AS; ulimit -d: RLIMIT_DATA; its container's cgroup memory.max), or infinity without
// one: a run past them ends in std::bad_alloc, or the kernel's OOM killer, however much memory
// the machine has.
double half_of_own_limit() {
  double half = std::numeric_limits<double>::infinity();
  double address_space = half;
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) continue;
    address_space = std::min(address_space, static_cast<double>(limit.rlim_cur));
  }
  if (std::isfinite(address_space)) {
    // What the process has mapped already (code, libraries, heap) is not room.
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      double kib = 0;
      if (std::sscanf(line.c_str(), "VmSize: %lf kB", &kib) == 1) address_space -= kib * 1024;
    }
    half = std::max(0.0, address_space / 2);
  }
  // A container's cgroup (v2): what it may still use, memory.max ("max": none) less
  // memory.current.
  std::ifstream max_file("/sys/fs/cgroup/memory.max");
  std::ifstream current_file("/sys/fs/cgroup/memory.current");
  double cgroup_max = 0, cgroup_current = 0;
  if (max_file >> cgroup_max && current_file >> cgroup_current && cgroup_max > cgroup_current) {
    half = std::min(half, (cgroup_max - cgroup_current) / 2);
  }
  return half;
}

}  // namespace

// Read once per process: every ResourceLimits starts from it (a fuzzer builds one per input).
double default_memory_limit_bytes() {
  static const double bytes = std::min(half_of_available_memory(), half_of_own_limit());
  return bytes;
}

ProgramSizeEstimate estimate_program_size(const ResolvedScenario& setup,
                                          const RunFootprint& footprint) {
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
  // DualPipe runs each stage twice, once per direction: what comes once per stage (updates,
  // gradient reductions, ZeRO's weight gathers) comes twice.
  const double copies = setup.schedule.kind == proto::DUALPIPE ? 2 : 1;
  double per_iteration =
      2 * chunks * microbatches + transfers * (chunks - 1) * microbatches + 2 * copies * chunks;
  if (setup.schedule.offload.enabled) per_iteration += 2 * chunks * microbatches;
  if (setup.schedule.kind == proto::PIPEFB) per_iteration += 2 * chunks * microbatches + 2 * chunks;
  // Zero-bubble schedules split every backward in two (B and W).
  if (is_zero_bubble(setup.schedule.kind)) per_iteration += chunks * microbatches;
  // Expert parallelism: an all-to-all after every FWD and BWD, and the experts' own
  // gradient ALLREDUCE per chunk.
  const double experts = setup.training.expert_parallel;
  const double all_to_alls = experts > 1 ? 2 * chunks * microbatches : 0;
  if (experts > 1) per_iteration += all_to_alls + copies * chunks;
  // ZeRO: an all-gather of the updated weights per chunk (1, 2); a reduce-scatter after
  // every backward (2, 3); and two all-gathers before every FWD and BWD (3).
  const int32_t zero_stage = setup.training.zero_stage;
  if (zero_stage >= 1) per_iteration += copies * chunks;
  if (zero_stage >= 2) per_iteration += chunks * microbatches;
  if (zero_stage == 3) per_iteration += 4 * chunks * microbatches;
  // Gradient buckets: at most three collectives for each gradient reduction (an all-reduce
  // per chunk, the experts' too, or ZeRO's reduce-scatters), wherever gradients are reduced:
  // over replicas or over a context-parallel group.
  if (setup.training.grad_bucket_bytes > 0 &&
      (replicas > 1 || setup.training.context_parallel > 1)) {
    const double reductions = setup.training.expert_parallel > 1 ? 2 : 1;
    per_iteration += 2 * (zero_stage >= 2 ? chunks * microbatches : reductions * copies * chunks);
  }
  // Context parallelism: every instruction on each of C GPUs, and a key/value exchange after
  // every FWD (one) and BWD (two).
  const double context_parallel = std::max(1, setup.training.context_parallel);
  if (context_parallel > 1)
    per_iteration = context_parallel * (per_iteration + 3 * chunks * microbatches);
  // Tensor parallelism: every instruction on each of a stage's T GPUs, and an all-reduce
  // after every FWD and BWD on each of the C context-parallel GPUs; with the backward's
  // collectives under its weight gradients, up to three after a BWD (the hidden reduce-scatter
  // and all-gather, then the rest).
  const double tensor_parallel = std::max(1, setup.training.tensor_parallel);
  if (tensor_parallel > 1) {
    const double per_pass = setup.training.tensor_parallel_grad_overlap ? 4 : 2;
    per_iteration =
        tensor_parallel * (per_iteration + per_pass * context_parallel * chunks * microbatches);
  }
  ProgramSizeEstimate size;
  // FreezePipe simulates one iteration per phase, but keeps gradient statistics for every
  // interval of the run.
  const double simulated_iterations = setup.freeze.enabled ? 1 : iterations;
  size.instructions = per_iteration * replicas * simulated_iterations;
  // Each all-to-all member sends to E-1 others, one more than a ring member.
  const double all_to_all_flows = experts > 2
                                      ? all_to_alls * replicas * simulated_iterations *
                                            context_parallel * tensor_parallel * (experts - 2)
                                      : 0;
  size.memory_bytes = memory_bytes(setup, size.instructions, all_to_all_flows, footprint);
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
  // The devices' share (the platform, actors and per-device results) against the
  // instructions'.
  const double without_instructions = memory_bytes(setup, 0, 0, footprint);
  if (without_instructions - kProcessBytes > size.memory_bytes - without_instructions) {
    size.driver = "cluster.nodes";
    size.driver_value = setup.cluster.nodes;
  }
  return size;
}

bool within_limits(const ProgramSizeEstimate& size, const ResourceLimits& limits) {
  return size.instructions <= static_cast<double>(limits.max_instructions) &&
         size.memory_bytes <= limits.max_memory_bytes;
}

void check_resource_limits(const ResolvedScenario& setup, const ResourceLimits& limits,
                           const RunFootprint& footprint) {
  const ProgramSizeEstimate size = estimate_program_size(setup, footprint);
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
