// `pipetwin run SCENARIO [--nproc N] [--timeline FILE] [--trace FILE.json] [--json]
//                        [--set PATH=VALUE]... [--timeout S] [--reference]
//                        [--warmup N] [--repeat R] [--report FILE.html]`
// The same Program on real ranks: LibTorch (--backend torch) or the CUDA replay (--backend
// cuda). Without RANK in the environment it spawns the
// ranks itself on 127.0.0.1; under torchrun, srun or mpirun each process is one rank.
// Built into `pipetwin-real` only (cli/CMakeLists.txt): it links the real backends.
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/metrics.h"
#include "analysis/noise_control.h"
#include "app/async_summary.h"
#include "app/freeze_summary.h"
#include "app/run_files.h"
#include "app/run_summary.h"
#include "backend/common/local_launcher.h"
#include "backend/replay/replay_run.h"
#include "backend/torch/real_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/build_program.h"
#include "sim/exec/make_timeline.h"
#include "sim/scenario/freeze_log.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/schedule/weight_versions.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

struct RunArgs {
  std::string scenario;
  int nproc = 0;
  std::string trace_path;
  std::string timeline_path;
  std::string report_path;
  std::vector<std::string> overrides;
  bool json = false;
  bool reference = false;
  double timeout_s = 60;
  uint64_t seed = 1;
  std::string freeze_log;
  int freeze_interval = 0;
  std::string backend = "torch";
  int iterations_per_phase = 2;
  int warmup = 1;
  bool warmup_given = false;
  int repeat = 1;
  bool pin = false;
  // Set by the parent of a --repeat run: rank 0 reports into this directory, not to
  // stdout and the files asked for.
  std::string repeat_output;
  ResourceOptions resources;
};

// A rank's LibTorch intra-op threads: the rank executor (and the reference and the
// profiler) call torch::set_num_threads(1), since the ranks share the machine's cores.
constexpr int kTorchThreadsPerRank = 1;

// What a --repeat repetition's rank 0 leaves in its directory.
constexpr const char* kRepeatTimeline = "timeline";
constexpr const char* kRepeatFreezeLog = "freeze_log";

std::string repeat_report_name(const RunArgs& args) {
  return args.json ? "report.json" : "report.txt";
}

// What the ranks run: the scenario's iterations after `warmup` more, which are left out
// of everything reported but the losses.
struct RunPlan {
  ResolvedScenario setup;      // as the scenario says: the iterations reported
  ResolvedScenario run_setup;  // training.iterations + warmup: the iterations run
  Program run_program;         // run_setup's Program
  int32_t warmup = 0;
};

// FreezePipe runs and --freeze-log depend on every iteration, so they run none before;
// only an explicit --warmup above 0 is refused.
int32_t effective_warmup(const RunArgs& args, const ResolvedScenario& setup) {
  if (!setup.freeze.enabled && args.freeze_log.empty()) return args.warmup;
  if (args.warmup_given && args.warmup > 0) {
    throw InputError("--warmup " + std::to_string(args.warmup) + ": " +
                     (setup.freeze.enabled
                          ? "a FreezePipe run keeps every iteration, since its freezing depends "
                            "on them"
                          : "--freeze-log records every iteration's gradients") +
                     " (give --warmup 0 or leave it out)");
  }
  return 0;
}

RunPlan plan_run(const ResolvedScenario& setup, int32_t warmup) {
  RunPlan plan;
  plan.setup = setup;
  plan.run_setup = setup;
  plan.run_setup.training.iterations += warmup;
  plan.run_program = build_program(plan.run_setup);
  plan.warmup = warmup;
  return plan;
}

// The Program as memory_curve sees it, without the warm-up iterations' allocations: the
// memory of the kept iterations alone, as a simulation of them accounts it.
Program without_warmup_allocations(Program program, int32_t warmup) {
  for (Instruction& ins : program.instructions) {
    if (ins.iteration >= warmup) continue;
    ins.stash_bytes = 0;
    if (is_transfer(ins.op) || is_copy(ins.op)) ins.bytes = 0;
  }
  return program;
}

// How the ranks shared the machine: cores as rank 0's process may use them.
struct MachineShare {
  int ranks = 0;
  int cores = 0;
  std::optional<int> torch_threads_per_rank;  // none on the CUDA replay
  std::vector<std::string> lanes;             // one host thread each, on every rank
  bool pinned = false;                        // --pin: each rank on one core
};

// The cores this process may use, as it started (before --pin narrowed them).
int available_cores() {
  static const int cores = allowed_cores();
  return cores;
}

// --pin: this rank's threads (the lanes, the transport's, LibTorch's, all started after
// this) on one core of those allowed, local rank r on the r-th modulo their count, so
// that the scheduler stops moving them between cores.
void pin_to_own_core(const RankEnvironment& env) {
  available_cores();  // remember the machine as it was
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  }
  if (cores.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cores[env.local_rank % cores.size()], &one);
  ::sched_setaffinity(0, sizeof one, &one);
}

MachineShare machine_share(const RunArgs& args, const RankEnvironment& env,
                           const Timeline& timeline) {
  MachineShare machine;
  machine.ranks = env.world_size;
  machine.cores = available_cores();
  machine.pinned = args.pin;
  if (args.backend == "torch") machine.torch_threads_per_rank = kTorchThreadsPerRank;
  std::set<std::string> used;
  for (const Span& s : timeline.spans) used.insert(s.lane);
  for (const char* lane : {"compute", "send", "recv", "copy", "collective"}) {
    if (used.erase(lane)) machine.lanes.push_back(lane);
  }
  machine.lanes.insert(machine.lanes.end(), used.begin(), used.end());
  return machine;
}

nlohmann::json machine_json(const MachineShare& m) {
  return {{"ranks", m.ranks},
          {"cores", m.cores},
          {"torch_threads_per_rank", m.torch_threads_per_rank
                                         ? nlohmann::json(*m.torch_threads_per_rank)
                                         : nlohmann::json(nullptr)},
          {"lanes", m.lanes},
          {"pinned", m.pinned}};
}

void print_machine(std::ostream& out, const MachineShare& m) {
  std::string lanes;
  for (const std::string& lane : m.lanes) lanes += (lanes.empty() ? "" : ", ") + lane;
  out << pad("machine", 16) << m.ranks << " rank" << (m.ranks == 1 ? "" : "s") << " on " << m.cores
      << " core" << (m.cores == 1 ? "" : "s") << (m.pinned ? ", each pinned to one" : "") << "; ";
  if (m.torch_threads_per_rank) {
    out << *m.torch_threads_per_rank << " LibTorch thread"
        << (*m.torch_threads_per_rank == 1 ? "" : "s") << " per rank, one host thread per lane ("
        << lanes << ")\n";
  } else {
    out << "one host thread per lane (" << lanes << "), each enqueuing onto its CUDA stream\n";
  }
}

// Rank 0's report and files: to stdout and the paths asked for, or, in a --repeat
// repetition, into its directory for the parent to choose from.
void publish(const RunArgs& args, const Timeline& timeline, const std::string& report) {
  if (args.repeat_output.empty()) {
    write_run_files(timeline, args.trace_path, args.timeline_path);
    std::cout << report;
    return;
  }
  const std::filesystem::path dir = args.repeat_output;
  write_timeline_file(timeline, (dir / kRepeatTimeline).string());
  write_file_atomically((dir / repeat_report_name(args)).string(),
                        [&](std::ostream& out) { out << report; });
}

std::string freeze_log_path(const RunArgs& args) {
  if (args.repeat_output.empty()) return args.freeze_log;
  return (std::filesystem::path(args.repeat_output) / kRepeatFreezeLog).string();
}

// Per stage: the activation bytes per sample the live tensors held (measured) and what
// the cost model's layers say (the Program's FWD stash).
nlohmann::json stash_comparison(const Program& program, const RealRunResult& run) {
  std::map<int32_t, std::pair<double, double>> per_stage;  // stage -> (measured, model)
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd || per_stage.count(ins.stage)) continue;
    per_stage[ins.stage] = {static_cast<double>(run.stash_bytes[i]) / ins.range.size(),
                            static_cast<double>(ins.stash_bytes) / ins.range.size()};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [stage, bytes] : per_stage) {
    list.push_back({{"stage", stage}, {"measured", bytes.first}, {"model", bytes.second}});
  }
  return list;
}

// The simulators' report of a measured run: the timeline of `times` (of plan.run_program)
// without the warm-up iterations, with memory as `memory_program` accounts it, published
// where asked. `extra` adds a backend's own fields to the JSON, `extra_text` its lines to
// the text report.
void report_measured(const RunArgs& args, const RunPlan& plan, const RankEnvironment& env,
                     const ExecutionTimes& times, const Program& memory_program,
                     const std::function<void(nlohmann::json&)>& extra,
                     const std::function<void(std::ostream&)>& extra_text) {
  SimulationResult result;
  result.setup = plan.setup;
  result.program = plan.run_program;
  result.times = times;
  result.memory = memory_curve(without_warmup_allocations(memory_program, plan.warmup), times);
  result.timeline =
      make_timeline(plan.run_program, plan.setup.cluster, times, result.memory, args.backend);
  drop_warmup_iterations(result.timeline, plan.warmup);
  const RunMetrics metrics = compute_metrics(result.timeline, plan.setup.training.iterations,
                                             plan.setup.training.global_batch);
  const MachineShare machine = machine_share(args, env, result.timeline);
  std::ostringstream report;
  if (args.json) {
    nlohmann::json j = run_summary_json(result, metrics);
    j["instructions"] = result.timeline.spans.size();  // the kept iterations'
    j.update(pipeline_versions_json(result));
    j["warmup_iterations"] = plan.warmup;
    j["machine"] = machine_json(machine);
    extra(j);
    report << j.dump(2) << "\n";
  } else {
    print_run_summary(report, result, metrics);
    if (plan.warmup > 0) {
      report << pad("warm-up", 16) << plan.warmup << " iteration" << (plan.warmup > 1 ? "s" : "")
             << " run first, left out of the timeline and the figures above\n";
    }
    extra_text(report);
    print_machine(report, machine);
  }
  if (!args.report_path.empty() && args.repeat_output.empty()) {
    std::vector<std::string> notes;
    if (plan.warmup > 0) {
      notes.push_back(std::to_string(plan.warmup) + " warm-up iteration" +
                      (plan.warmup > 1 ? "s" : "") + " run first, left out of the report.");
    }
    write_run_report(args.report_path, result, metrics, notes);
  }
  publish(args, result.timeline, report.str());
}

// --backend torch: the model ran, so its losses, weights and measured activations are
// reported too; activation memory as measured (the tensors each forward's layers
// produced), resident bytes and receive buffers as the Program accounts them.
void report_model_run(const RunArgs& args, const RunPlan& plan, const RankEnvironment& env,
                      const RealRunResult& run) {
  const Program& program = plan.run_program;
  report_measured(
      args, plan, env, run.times, with_measured_stash(program, run),
      [&](nlohmann::json& j) {
        j["losses"] = run.losses;
        j["layer_weight_sums"] = run.weights;
        j["stash_bytes_per_sample"] = stash_comparison(program, run);
        // Whether each forward ran with the weight version the Program plans.
        j["forward_versions_as_planned"] =
            run.forward_versions == weight_versions(program).forward_version;
      },
      [&](std::ostream& out) {
        // The warm-up iterations' losses first, before a bar.
        out << "losses         ";
        for (size_t k = 0; k < run.losses.size(); ++k) {
          if (plan.warmup > 0 && k == static_cast<size_t>(plan.warmup)) out << " |";
          out << " " << run.losses[k];
        }
        out << "\n";
      });
}

nlohmann::json gpu_json(const std::string& device, const std::vector<RankGpuMemory>& memory,
                        const std::vector<int>& shared_gpu_ranks) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankGpuMemory& m : memory) {
    ranks.push_back({{"stash_peak_bytes", m.stash_peak_bytes},
                     {"peak_pool_bytes", m.peak_pool_bytes},
                     {"device_used_bytes", m.device_used_bytes},
                     {"device_total_bytes", m.device_total_bytes}});
  }
  return {{"device", device}, {"memory", ranks}, {"shared_gpu_ranks", shared_gpu_ranks}};
}

void print_gpu(std::ostream& out, const std::string& device,
               const std::vector<RankGpuMemory>& memory, const std::vector<int>& shared_gpu_ranks) {
  out << "gpu             " << device << "\n";
  for (size_t r = 0; r < memory.size(); ++r) {
    out << "  rank " << r << " stash peak " << format_bytes(memory[r].stash_peak_bytes)
        << " (predicted), pool high-water " << format_bytes(memory[r].peak_pool_bytes)
        << ", in use " << format_bytes(memory[r].device_used_bytes) << " of "
        << format_bytes(memory[r].device_total_bytes) << "\n";
  }
  if (!shared_gpu_ranks.empty()) {
    out << "note: " << shared_gpu_ranks.size()
        << " rank(s) shared a GPU with another: their kernels time-sliced and their "
           "transfers took NCCL's network path, so these times are not a cluster's\n";
  }
}

// --backend cuda: no model, so memory is as the Program accounts it; the GPUs' own
// figures come beside it.
void report_replay(const RunArgs& args, const RunPlan& plan, const RankEnvironment& env,
                   const ReplayRunResult& run) {
  report_measured(
      args, plan, env, run.times, plan.run_program,
      [&](nlohmann::json& j) {
        j["gpu"] = gpu_json(run.device_name, run.memory, run.shared_gpu_ranks);
        j["gpu"]["host_enqueue_s"] = run.host_enqueue_s;
        j["gpu"]["spin_scale"] = run.spin_scale;
        j["gpu"]["allocation_stalls"] = run.allocation_stalls;
      },
      [&](std::ostream& out) {
        print_gpu(out, run.device_name, run.memory, run.shared_gpu_ranks);
      });
}

// A FreezePipe run replayed: the phases and migrations as measured, with the GPUs.
void report_replay_training(const RunArgs& args, const RankEnvironment& env,
                            const ReplayTrainingRun& run) {
  const MachineShare machine = machine_share(args, env, run.timeline);
  std::ostringstream report;
  if (args.json) {
    nlohmann::json j = freeze_run_json(run.phases, run.migrations);
    j["training_time_s"] = run.training_time_s;
    j["iterations_per_phase"] = args.iterations_per_phase;
    j["gpu"] = gpu_json(run.device_name, run.memory, run.shared_gpu_ranks);
    j["warmup_iterations"] = 0;
    j["machine"] = machine_json(machine);
    report << j.dump(2) << "\n";
  } else {
    print_freeze_phases(report, run.phases, run.migrations);
    report << "training time   " << format_seconds(run.training_time_s) << " (each phase's "
           << args.iterations_per_phase << " replayed iterations standing for all of it)\n";
    print_gpu(report, run.device_name, run.memory, run.shared_gpu_ranks);
    print_machine(report, machine);
  }
  publish(args, run.timeline, report.str());
}

// What each forward of the scenario's asynchronous Program runs with, for the reference.
StaleWeights stale_weights(const ResolvedScenario& setup) {
  const Program program = build_program(setup);
  const WeightVersions versions = weight_versions(program);
  StaleWeights stale;
  stale.stage_layers = chunk_layer_ranges(setup);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd) continue;
    stale.version[{ins.stage, ins.iteration, ins.microbatch}] = versions.forward_version[i];
  }
  stale.update_every_microbatch = setup.schedule.kind == proto::PIPEDREAM_ASYNC;
  return stale;
}

void write_freeze_log(const std::string& path, int32_t layers, int32_t interval,
                      const IntervalNorms& norms) {
  FreezeLog log;
  log.layers = layers;
  log.interval_iterations = interval;
  log.norms = norms;
  write_file_atomically(path, [&](std::ostream& out) { out << format_freeze_log(log); });
}

// FreezePipe on the ranks: freezing by the rule on the measured gradients (or the fixed
// schedule), repartitions with real MIGRATE transfers. Reports the run's phases.
void run_freezing(const RunArgs& args, const ResolvedScenario& setup, const RankEnvironment& env,
                  const RealRunOptions& options) {
  if ((setup.freeze.log || setup.freeze.synthetic) && env.rank == 0) {
    std::cerr << "note: real ranks freeze by the rule on the gradients they measure; the "
                 "scenario's freeze log or synthetic gradients drive pipetwin simulate only\n";
  }
  const RealTrainingRun run = run_freezing_as_rank(setup, env, options);
  if (env.rank != 0) return;
  const int32_t layers = static_cast<int32_t>(setup.model.layers.size());
  if (!args.freeze_log.empty()) {
    write_freeze_log(freeze_log_path(args), layers, setup.freeze.interval_iterations,
                     run.gradient_norms);
  }
  const MachineShare machine = machine_share(args, env, run.timeline);
  std::ostringstream report;
  if (args.json) {
    nlohmann::json j = freeze_run_json(run.phases, run.migrations);
    j["training_time_s"] = run.training_time_s;
    j["losses"] = run.losses;
    j["layer_weight_sums"] = run.weights;
    nlohmann::json migrations = nlohmann::json::array();
    for (size_t k = 0; k < run.migrations.size(); ++k) {
      const Migration& m = run.migrations[k];
      // bytes: the payloads the ranks sent; model_bytes: what the MIGRATEs count.
      migrations.push_back({{"iteration", m.iteration},
                            {"bytes", m.bytes},
                            {"model_bytes", run.migration_model_bytes[k]},
                            {"seconds", m.seconds}});
    }
    j["migrations"] = migrations;
    j["warmup_iterations"] = 0;
    j["machine"] = machine_json(machine);
    report << j.dump(2) << "\n";
  } else {
    print_freeze_phases(report, run.phases, run.migrations);
    report << "training time   " << format_seconds(run.training_time_s) << " (measured)\n";
    report << "losses         ";
    for (double loss : run.losses) report << " " << loss;
    report << "\n";
    print_machine(report, machine);
  }
  publish(args, run.timeline, report.str());
}

// A directory of our own under the system's temporary directory, removed with all it
// holds however the scope is left.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "pipetwin-repeat-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw RuntimeFailure("cannot create a temporary directory in " +
                           std::filesystem::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeFailure("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json repeat_json(const RepeatSummary& s) {
  return {{"runs", s.makespans_s.size()},
          {"makespans_s", s.makespans_s},
          {"median_run", s.median_run},
          {"median_s", s.median_s},
          {"min_s", s.min_s},
          {"max_s", s.max_s},
          {"p25_s", s.p25_s},
          {"p75_s", s.p75_s},
          {"spread", s.spread()}};
}

void print_repeat(std::ostream& out, const RepeatSummary& s) {
  out << pad("repeat", 16) << s.makespans_s.size() << " runs: median " << format_seconds(s.median_s)
      << ", min " << format_seconds(s.min_s) << ", max " << format_seconds(s.max_s) << ", IQR "
      << format_seconds(s.p25_s) << " - " << format_seconds(s.p75_s) << ", spread "
      << format_number("%.1f%%", 100 * s.spread()) << " of the median\n";
  out << pad("", 16) << "makespans";
  for (size_t r = 0; r < s.makespans_s.size(); ++r) {
    out << (r ? ", " : " ") << format_seconds(s.makespans_s[r]);
  }
  out << " (run " << s.median_run + 1 << " reported above)\n";
}

// --repeat R: the whole run R times, each repetition's rank 0 reporting into a directory
// of its own; the run with the median makespan is the one reported and written.
void repeat_runs(const RunArgs& args, const std::vector<std::string>& argv, int nproc) {
  const TemporaryDirectory dir;
  std::vector<std::filesystem::path> runs;
  std::vector<double> makespans;
  for (int r = 0; r < args.repeat; ++r) {
    runs.push_back(dir.path() / ("run" + std::to_string(r)));
    std::filesystem::create_directory(runs.back());
    std::vector<std::string> rank_argv = argv;
    rank_argv.push_back("--repeat-output");
    rank_argv.push_back(runs.back().string());
    launch_local_ranks_or_throw(rank_argv, nproc, args.timeout_s);
    const Timeline timeline = read_timeline_file((runs.back() / kRepeatTimeline).string());
    makespans.push_back(compute_metrics(timeline, 1, 1).makespan_s);  // as compare takes it
  }
  const RepeatSummary summary = summarize_repeats(makespans);
  const std::filesystem::path& chosen = runs[summary.median_run];
  const Timeline chosen_timeline = read_timeline_file((chosen / kRepeatTimeline).string());
  write_run_files(chosen_timeline, args.trace_path, args.timeline_path);
  if (!args.report_path.empty()) {
    write_timeline_report(args.report_path, {"the run of median makespan"}, {chosen_timeline});
  }
  if (!args.freeze_log.empty()) {
    const std::string log = read_text_file(chosen / kRepeatFreezeLog);
    write_file_atomically(args.freeze_log, [&](std::ostream& out) { out << log; });
  }
  const std::string report = read_text_file(chosen / repeat_report_name(args));
  if (args.json) {
    nlohmann::json j = nlohmann::json::parse(report);
    j["repeat"] = repeat_json(summary);
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << report;
  print_repeat(std::cout, summary);
}

void run_command(const RunArgs& args, const std::vector<std::string>& argv) {
  if (!args.report_path.empty() && args.repeat_output.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  check_resource_limits(setup, args.resources.limits());
  const int32_t warmup = effective_warmup(args, setup);
  RealRunOptions options;
  options.timeout_s = args.timeout_s;
  options.seed = args.seed;
  if (args.reference) {
    if (!setup.zoo) {
      throw InputError("--reference needs a zoo model (model.zoo)");
    }
    // The iterations the pipeline trains, warm-up included, so that its losses and
    // weights compare with these. A fixed freeze schedule (freeze { at }) freezes the
    // reference alike.
    ResolvedScenario trained = setup;
    trained.training.iterations += warmup;
    std::vector<FreezeEvent> freezes;
    for (const auto& [iteration, frozen] : setup.freeze.at) freezes.push_back({iteration, frozen});
    const RealRunResult run = is_asynchronous(trained.schedule.kind)
                                  ? run_stale_reference(trained, options, stale_weights(trained))
                                  : run_reference(trained, options, freezes);
    nlohmann::json j = {
        {"losses", run.losses}, {"layer_weight_sums", run.weights}, {"warmup_iterations", warmup}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (!setup.schedule.stage_replicas.empty()) {
    // The real backends' reference runs and merged results assume one device per stage in
    // each pipeline replica.
    throw InputError(loaded.where("schedule.stage_replicas") +
                     ": real runs give every stage one rank; simulate replicated stages "
                     "with pipetwin simulate");
  }
  const RunPlan plan = plan_run(setup, warmup);
  const Program& program = plan.run_program;
  const bool replay = args.backend == "cuda";
  if (replay && !args.freeze_log.empty()) {
    throw InputError(
        "--freeze-log records a model's gradients: the CUDA replay has no model "
        "(use --backend torch)");
  }
  if (replay && setup.freeze.enabled && setup.freeze.measured()) {
    throw InputError(loaded.where("freeze") +
                     ": the CUDA replay has no model whose gradients it could measure: give the "
                     "freeze events with at, log or synthetic (or run with --backend torch)");
  }
  if (replay) {
    // Without a GPU, before anything is spawned: one line, exit 1.
    if (const std::string why = cuda_replay_unavailable(); !why.empty()) {
      throw RuntimeFailure(why);
    }
  } else if (const std::string why = real_run_unsupported(plan.run_setup, program); !why.empty()) {
    throw InputError(loaded.source_name + ": " + why);
  }
  if (!launched_as_rank()) {
    const int nproc = args.nproc > 0 ? args.nproc : program.num_devices;
    if (nproc != program.num_devices) {
      throw InputError("--nproc " + std::to_string(nproc) + ": the schedule needs " +
                       std::to_string(program.num_devices) + " ranks");
    }
    if (args.repeat > 1) return repeat_runs(args, argv, nproc);
    launch_local_ranks_or_throw(argv, nproc, args.timeout_s);
    return;
  }
  if (args.repeat > 1 && args.repeat_output.empty()) {
    throw InputError(
        "--repeat needs the local launcher: under torchrun, srun or mpirun (RANK is set), "
        "launch the job once per repetition");
  }
  if (!args.freeze_log.empty()) {
    options.gradient_interval = args.freeze_interval > 0 ? args.freeze_interval
                                : setup.freeze.enabled   ? setup.freeze.interval_iterations
                                                         : 10;
  }
  const RankEnvironment env = rank_environment();
  if (args.pin) pin_to_own_core(env);
  if (replay && setup.freeze.enabled) {
    const ReplayTrainingRun run = replay_freezing_as_rank(setup, env, args.iterations_per_phase);
    if (env.rank == 0) report_replay_training(args, env, run);
    return;
  }
  if (setup.freeze.enabled) return run_freezing(args, setup, env, options);
  if (replay) {
    const ReplayRunResult run = replay_as_rank(plan.run_setup, program, env);
    if (env.rank == 0) report_replay(args, plan, env, run);
    return;
  }
  const RealRunResult run = run_as_rank(plan.run_setup, program, env, options);
  if (env.rank != 0) return;
  if (!args.freeze_log.empty()) {
    write_freeze_log(freeze_log_path(args), static_cast<int32_t>(setup.model.layers.size()),
                     options.gradient_interval, run.gradient_norms);
  }
  report_model_run(args, plan, env, run);
}

}  // namespace

// Also torch-only: profile_command.cpp, calibrate_command.cpp.
void add_profile_command(CLI::App& app);
void add_calibrate_command(CLI::App& app, const std::vector<std::string>& argv);

void add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  add_profile_command(app);
  add_calibrate_command(app, argv);
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run a scenario on real LibTorch ranks");
  cmd->add_option("scenario", args->scenario, "scenario .textproto or builtin:NAME");
  cmd->add_option("--nproc", args->nproc, "ranks to spawn locally (default: one per device)");
  cmd->add_option("--trace", args->trace_path, "write a Chrome/Perfetto trace (JSON)");
  cmd->add_option("--timeline", args->timeline_path, "write the measured timeline (protobuf)");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report with plots (docs/reports.md)");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_option("--timeout", args->timeout_s, "seconds any wait may take")->default_val(60);
  add_resource_options(cmd, &args->resources);
  cmd->add_option("--seed", args->seed, "seed of the weights and the data")->default_val(1);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--backend", args->backend,
                  "torch: LibTorch ranks running the model (CPU, Gloo); cuda: the Program "
                  "replayed on GPUs with CUDA and NCCL, compute sized to the cost model")
      ->check(CLI::IsMember({"torch", "cuda"}))
      ->default_val("torch");
  cmd->add_option("--freeze-log", args->freeze_log,
                  "write each layer's gradient L1 norm per interval (a freeze log for "
                  "freeze { log: ... })");
  cmd->add_option("--freeze-interval", args->freeze_interval,
                  "iterations per interval of the freeze log (default: the scenario's "
                  "freeze.interval_iterations, else 10)");
  cmd->add_option("--iterations-per-phase", args->iterations_per_phase,
                  "--backend cuda with freezing: iterations replayed of each phase (its mean "
                  "stands for the whole phase, as in simulate)")
      ->default_val(2)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--reference", args->reference,
                "train in one process without a pipeline (the correctness reference; it "
                "trains the warm-up iterations too)");
  CLI::Option* warmup =
      cmd->add_option("--warmup", args->warmup,
                      "iterations run first and left out of the timeline, report and files "
                      "(FreezePipe runs and --freeze-log: none)")
          ->default_val(1)
          ->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeat", args->repeat,
                  "launch the whole run this many times and report the one with the median "
                  "makespan, with the spread of all (local launcher only)")
      ->default_val(1)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--pin", args->pin,
                "pin each rank to one core (local rank r on the r-th allowed core, modulo "
                "their count): less run-to-run noise on a shared machine");
  cmd->add_option("--repeat-output", args->repeat_output)->group("");  // parent to ranks
  cmd->callback([args, argv, warmup] {
    args->warmup_given = warmup->count() > 0;
    run_command(*args, argv);
  });
}

}  // namespace pipetwin
