// `pipetwin run SCENARIO [--nproc N] [--timeline FILE] [--trace FILE.json] [--json]
//                        [--set PATH=VALUE]... [--timeout S] [--reference]`
// The same Program on real ranks: LibTorch (--backend torch) or the CUDA replay (--backend
// cuda). Without RANK in the environment it spawns the
// ranks itself on 127.0.0.1; under torchrun, srun or mpirun each process is one rank.
// Built into `pipetwin-real` only (see sim/CMakeLists.txt).
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "analysis/metrics.h"
#include "backend/common/local_launcher.h"
#include "backend/common/replay_run.h"
#include "backend/torch/real_run.h"
#include "sim/cli/async_report.h"
#include "sim/cli/cli_app.h"
#include "sim/cli/freeze_report.h"
#include "sim/cli/report.h"
#include "sim/cli/text_units.h"
#include "sim/errors.h"
#include "sim/exec/make_timeline.h"
#include "sim/freeze/gradient_norms.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/schedule/build_program.h"
#include "sim/schedule/weight_versions.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

struct RunArgs {
  std::string scenario;
  int nproc = 0;
  std::string trace_path;
  std::string timeline_path;
  std::vector<std::string> overrides;
  bool json = false;
  bool reference = false;
  double timeout_s = 60;
  uint64_t seed = 1;
  std::string freeze_log;
  int freeze_interval = 0;
  std::string backend = "torch";
  int iterations_per_phase = 2;
};

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

// The simulators' report of a measured run: the timeline of `times`, with memory as
// `memory_program` accounts it, written where asked. `extra` adds a backend's own fields
// to the JSON, `extra_text` its lines to the text report.
void report_measured(const RunArgs& args, const ResolvedScenario& setup, const Program& program,
                     const ExecutionTimes& times, const Program& memory_program,
                     const std::function<void(nlohmann::json&)>& extra,
                     const std::function<void(std::ostream&)>& extra_text) {
  SimulationResult result;
  result.setup = setup;
  result.program = program;
  result.times = times;
  result.memory = memory_curve(memory_program, times);
  result.timeline = make_timeline(program, setup.cluster, times, result.memory, args.backend);
  const RunMetrics metrics =
      compute_metrics(result.timeline, setup.training.iterations, setup.training.global_batch);
  write_run_files(result.timeline, args.trace_path, args.timeline_path);
  if (args.json) {
    nlohmann::json j = report_json(result, metrics);
    j.update(pipeline_versions_json(result));
    extra(j);
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_report(std::cout, result, metrics);
  extra_text(std::cout);
}

// --backend torch: the model ran, so its losses, weights and measured activations are
// reported too; activation memory as measured (the tensors each forward's layers
// produced), resident bytes and receive buffers as the Program accounts them.
void report_model_run(const RunArgs& args, const ResolvedScenario& setup, const Program& program,
                      const RealRunResult& run) {
  report_measured(
      args, setup, program, run.times, with_measured_stash(program, run),
      [&](nlohmann::json& j) {
        j["losses"] = run.losses;
        j["layer_weight_sums"] = run.weights;
        j["stash_bytes_per_sample"] = stash_comparison(program, run);
        // Whether each forward ran with the weight version the Program plans.
        j["forward_versions_as_planned"] =
            run.forward_versions == weight_versions(program).forward_version;
      },
      [&](std::ostream& out) {
        out << "losses         ";
        for (double loss : run.losses) out << " " << loss;
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
void report_replay(const RunArgs& args, const ResolvedScenario& setup, const Program& program,
                   const ReplayRunResult& run) {
  report_measured(
      args, setup, program, run.times, program,
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
void report_replay_training(const RunArgs& args, const ReplayTrainingRun& run) {
  write_run_files(run.timeline, args.trace_path, args.timeline_path);
  if (args.json) {
    nlohmann::json j = freeze_run_json(run.phases, run.migrations);
    j["training_time_s"] = run.training_time_s;
    j["iterations_per_phase"] = args.iterations_per_phase;
    j["gpu"] = gpu_json(run.device_name, run.memory, run.shared_gpu_ranks);
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_freeze_phases(std::cout, run.phases, run.migrations);
  std::cout << "training time   " << format_seconds(run.training_time_s) << " (each phase's "
            << args.iterations_per_phase << " replayed iterations standing for all of it)\n";
  print_gpu(std::cout, run.device_name, run.memory, run.shared_gpu_ranks);
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
    write_freeze_log(args.freeze_log, layers, setup.freeze.interval_iterations, run.gradient_norms);
  }
  write_run_files(run.timeline, args.trace_path, args.timeline_path);
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
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_freeze_phases(std::cout, run.phases, run.migrations);
  std::cout << "training time   " << format_seconds(run.training_time_s) << " (measured)\n";
  std::cout << "losses         ";
  for (double loss : run.losses) std::cout << " " << loss;
  std::cout << "\n";
}

void run_command(const RunArgs& args, const std::vector<std::string>& argv) {
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  RealRunOptions options;
  options.timeout_s = args.timeout_s;
  options.seed = args.seed;
  if (args.reference) {
    if (!setup.zoo) {
      throw InputError("--reference needs a zoo model (model.zoo)");
    }
    // A fixed freeze schedule (freeze { at }) freezes the reference alike.
    std::vector<FreezeEvent> freezes;
    for (const auto& [iteration, frozen] : setup.freeze.at) freezes.push_back({iteration, frozen});
    const RealRunResult run = is_asynchronous(setup.schedule.kind)
                                  ? run_stale_reference(setup, options, stale_weights(setup))
                                  : run_reference(setup, options, freezes);
    nlohmann::json j = {{"losses", run.losses}, {"layer_weight_sums", run.weights}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  const Program program = build_program(setup);
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
  } else if (const std::string why = real_run_unsupported(setup, program); !why.empty()) {
    throw InputError(loaded.source_name + ": " + why);
  }
  if (!launched_as_rank()) {
    const int nproc = args.nproc > 0 ? args.nproc : program.num_devices;
    if (nproc != program.num_devices) {
      throw InputError("--nproc " + std::to_string(nproc) + ": the schedule needs " +
                       std::to_string(program.num_devices) + " ranks");
    }
    launch_local_ranks_or_throw(argv, nproc, args.timeout_s);
    return;
  }
  if (!args.freeze_log.empty()) {
    options.gradient_interval = args.freeze_interval > 0 ? args.freeze_interval
                                : setup.freeze.enabled   ? setup.freeze.interval_iterations
                                                         : 10;
  }
  const RankEnvironment env = rank_environment();
  if (replay && setup.freeze.enabled) {
    const ReplayTrainingRun run = replay_freezing_as_rank(setup, env, args.iterations_per_phase);
    if (env.rank == 0) report_replay_training(args, run);
    return;
  }
  if (setup.freeze.enabled) return run_freezing(args, setup, env, options);
  if (replay) {
    const ReplayRunResult run = replay_as_rank(setup, program, env);
    if (env.rank == 0) report_replay(args, setup, program, run);
    return;
  }
  const RealRunResult run = run_as_rank(setup, program, env, options);
  if (env.rank != 0) return;
  if (!args.freeze_log.empty()) {
    write_freeze_log(args.freeze_log, static_cast<int32_t>(setup.model.layers.size()),
                     options.gradient_interval, run.gradient_norms);
  }
  report_model_run(args, setup, program, run);
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
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_option("--timeout", args->timeout_s, "seconds any wait may take")->default_val(60);
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
                "train in one process without a pipeline (the correctness reference)");
  cmd->callback([args, argv] { run_command(*args, argv); });
}

}  // namespace pipetwin
