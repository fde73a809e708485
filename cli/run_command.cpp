// `pipetwin run SCENARIO [--nproc N] [--timeline FILE] [--trace FILE.json] [--json]
//                        [--set PATH=VALUE]... [--timeout S] [--reference] [--backend B]
//                        [--warmup N] [--repeat R] [--pin] [--report FILE.html]`
// The same Program on real ranks: LibTorch (--backend torch) or the CUDA replay (--backend
// cuda). Without RANK in the environment it spawns the ranks itself on 127.0.0.1; under
// torchrun, srun or mpirun each process is one rank. The run itself is
// backend/run/real_run_driver.h's; this file parses the options and prints what rank 0
// measured. Built into `pipetwin-real` only (cli/CMakeLists.txt): it links the backends.
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "analysis/metrics.h"
#include "analysis/noise_control.h"
#include "app/async_summary.h"
#include "app/freeze_summary.h"
#include "app/run_files.h"
#include "app/run_summary.h"
#include "backend/common/local_launcher.h"
#include "backend/run/built_backends.h"
#include "backend/run/machine_share.h"
#include "backend/run/measured_run_text.h"
#include "backend/run/real_run_driver.h"
#include "backend/run/repeated_runs.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/schedule/weight_versions.h"
#include "traces/atomic_file.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

struct RunArgs {
  std::string scenario;
  std::string trace_path;
  std::string timeline_path;
  std::string report_path;
  std::vector<std::string> overrides;
  bool json = false;
  ResourceOptions resources;
  RealRunRequest request;
};

std::string repeat_report_name(const RunArgs& args) {
  return args.json ? "report.json" : "report.txt";
}

// Rank 0's report and files: to stdout and the paths asked for, or, in a --repeat
// repetition, into its directory for the parent to choose from.
void publish(const RunArgs& args, const Timeline& timeline, const std::string& report) {
  if (args.request.repeat_output.empty()) {
    write_run_files(timeline, args.trace_path, args.timeline_path);
    std::cout << report;
    return;
  }
  const std::filesystem::path dir = args.request.repeat_output;
  write_timeline_file(timeline, (dir / kRepeatTimeline).string());
  write_file_atomically((dir / repeat_report_name(args)).string(),
                        [&](std::ostream& out) { out << report; });
}

class RunPrinter final : public RealRunReporter {
 public:
  explicit RunPrinter(const RunArgs& args) : args_(args) {}

  void reference(const MeasuredRun& run, int32_t warmup) override {
    const nlohmann::json j = {
        {"losses", run.losses}, {"layer_weight_sums", run.weights}, {"warmup_iterations", warmup}};
    std::cout << j.dump(2) << "\n";
  }

  // The simulators' report of the measured run, without the warm-up iterations, with
  // memory as the backend accounts it (measured activations on a model's ranks), and the
  // backend's own figures beside it.
  void program_run(const RealBackend& backend, const RunPlan& plan, const RankEnvironment& env,
                   const MeasuredRun& run) override {
    SimulationResult result;
    result.setup = plan.setup;
    result.program = plan.run_program;
    result.times = run.times;
    const Program memory = backend.memory_program(plan.run_program, run);
    result.memory = memory_curve(without_warmup_allocations(memory, plan.warmup), run.times);
    result.timeline = make_timeline(plan.run_program, plan.setup.cluster, run.times, result.memory,
                                    backend.name());
    drop_warmup_iterations(result.timeline, plan.warmup);
    const RunMetrics metrics = compute_metrics(result.timeline, plan.setup.training.iterations,
                                               plan.setup.training.global_batch);
    const MachineShare machine =
        machine_share(backend.name(), env, result.timeline, args_.request.pin);
    std::ostringstream report;
    if (args_.json) {
      nlohmann::json j = run_summary_json(result, metrics);
      j["instructions"] = result.timeline.spans.size();  // the kept iterations'
      j.update(pipeline_versions_json(result));
      j["warmup_iterations"] = plan.warmup;
      j["machine"] = machine_json(machine);
      if (backend.trains_model()) {
        j["losses"] = run.losses;
        j["layer_weight_sums"] = run.weights;
        j["stash_bytes_per_sample"] = stash_comparison(plan.run_program, run);
        // Whether each forward ran with the weight version the Program plans.
        j["forward_versions_as_planned"] =
            run.forward_versions == weight_versions(plan.run_program).forward_version;
      }
      if (run.gpu) {
        j["gpu"] = gpu_json(*run.gpu);
        j["gpu"]["host_enqueue_s"] = run.gpu->host_enqueue_s;
        j["gpu"]["spin_scale"] = run.gpu->spin_scale;
        j["gpu"]["allocation_stalls"] = run.gpu->allocation_stalls;
      }
      report << j.dump(2) << "\n";
    } else {
      print_run_summary(report, result, metrics);
      if (plan.warmup > 0) {
        report << pad("warm-up", 16) << plan.warmup << " iteration" << (plan.warmup > 1 ? "s" : "")
               << " run first, left out of the timeline and the figures above\n";
      }
      if (backend.trains_model()) print_losses(report, run.losses, plan.warmup);
      if (run.gpu) print_gpu(report, *run.gpu);
      print_machine(report, machine);
    }
    if (!args_.report_path.empty() && args_.request.repeat_output.empty()) {
      std::vector<std::string> notes;
      if (plan.warmup > 0) {
        notes.push_back(std::to_string(plan.warmup) + " warm-up iteration" +
                        (plan.warmup > 1 ? "s" : "") + " run first, left out of the report.");
      }
      write_run_report(args_.report_path, result, metrics, notes);
    }
    publish(args_, result.timeline, report.str());
  }

  // FreezePipe: the phases and migrations as measured.
  void training_run(const RealBackend& backend, const RankEnvironment& env,
                    const MeasuredRun& run) override {
    const FreezingFigures& freezing = *run.freezing;
    const MachineShare machine =
        machine_share(backend.name(), env, freezing.timeline, args_.request.pin);
    const int32_t replayed = args_.request.options.iterations_per_phase;
    std::ostringstream report;
    if (args_.json) {
      nlohmann::json j = freeze_run_json(freezing.phases, freezing.migrations);
      j["training_time_s"] = freezing.training_time_s;
      if (backend.trains_model()) {
        j["losses"] = run.losses;
        j["layer_weight_sums"] = run.weights;
        j["migrations"] = migrations_json(freezing);
      } else {
        j["iterations_per_phase"] = replayed;
      }
      if (run.gpu) j["gpu"] = gpu_json(*run.gpu);
      j["warmup_iterations"] = 0;
      j["machine"] = machine_json(machine);
      report << j.dump(2) << "\n";
    } else {
      print_freeze_phases(report, freezing.phases, freezing.migrations);
      report << "training time   " << format_seconds(freezing.training_time_s);
      if (backend.trains_model()) {
        report << " (measured)\n";
        print_losses(report, run.losses, 0);
      } else {
        report << " (each phase's " << replayed << " replayed iterations standing for all of it)\n";
      }
      if (run.gpu) print_gpu(report, *run.gpu);
      print_machine(report, machine);
    }
    publish(args_, freezing.timeline, report.str());
  }

  // --repeat: the median run's files and report, and the spread of all.
  void repeated(const std::filesystem::path& chosen, const RepeatSummary& summary) override {
    const Timeline timeline = read_timeline_file((chosen / kRepeatTimeline).string());
    write_run_files(timeline, args_.trace_path, args_.timeline_path);
    if (!args_.report_path.empty()) {
      write_timeline_report(args_.report_path, {"the run of median makespan"}, {timeline});
    }
    const std::string report = read_text_file(chosen / repeat_report_name(args_));
    if (args_.json) {
      nlohmann::json j = nlohmann::json::parse(report);
      j["repeat"] = repeat_json(summary);
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << report;
    print_repeat(std::cout, summary);
  }

 private:
  const RunArgs& args_;
};

void run_command(const RunArgs& args, const std::vector<std::string>& argv) {
  const bool parent_report = !args.report_path.empty() && args.request.repeat_output.empty();
  if (parent_report) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  check_resource_limits(setup, args.resources.limits());
  RunPrinter printer(args);
  drive_real_run(args.request, built_backends(), loaded, setup, argv, printer);
}

}  // namespace

// Also real-backend only: profile_command.cpp, calibrate_command.cpp.
void add_profile_command(CLI::App& app);
void add_calibrate_command(CLI::App& app, const std::vector<std::string>& argv);

void add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  // A forked local rank runs this same command line in place (backend/common/local_launcher.h).
  set_rank_entry(&run_cli);
  add_profile_command(app);
  add_calibrate_command(app, argv);
  auto args = std::make_shared<RunArgs>();
  RealRunRequest& request = args->request;
  CLI::App* cmd = app.add_subcommand("run", "run a scenario on real LibTorch ranks or GPUs");
  cmd->add_option("scenario", args->scenario, "scenario .textproto or builtin:NAME");
  cmd->add_option("--nproc", request.nproc, "ranks to spawn locally (default: one per device)");
  cmd->add_option("--trace", args->trace_path, "write a Chrome/Perfetto trace (JSON)");
  cmd->add_option("--timeline", args->timeline_path, "write the measured timeline (protobuf)");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report with plots (docs/reports.md)");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_option("--timeout", request.options.timeout_s, "seconds any wait may take")
      ->default_val(60);
  add_resource_options(cmd, &args->resources);
  cmd->add_option("--seed", request.options.seed, "seed of the weights and the data")
      ->default_val(1);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--backend", request.backend,
                  "torch: LibTorch ranks running the model (CPU, over Gloo; `gloo` is accepted "
                  "for it); cuda: the Program replayed on GPUs with CUDA and NCCL, compute "
                  "sized to the cost model")
      ->default_val("torch");
  cmd->add_option("--freeze-log", request.freeze_log,
                  "write each layer's gradient L1 norm per interval (a freeze log for "
                  "freeze { log: ... })");
  cmd->add_option("--freeze-interval", request.freeze_interval,
                  "iterations per interval of the freeze log (default: the scenario's "
                  "freeze.interval_iterations, else 10)");
  cmd->add_option("--iterations-per-phase", request.options.iterations_per_phase,
                  "--backend cuda with freezing: iterations replayed of each phase (its mean "
                  "stands for the whole phase, as in simulate)")
      ->default_val(2)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--reference", request.reference,
                "train in one process without a pipeline (the correctness reference; it "
                "trains the warm-up iterations too)");
  CLI::Option* warmup =
      cmd->add_option("--warmup", request.warmup,
                      "iterations run first and left out of the timeline, report and files "
                      "(FreezePipe runs and --freeze-log: none)")
          ->default_val(1)
          ->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeat", request.repeat,
                  "launch the whole run this many times and report the one with the median "
                  "makespan, with the spread of all (local launcher only)")
      ->default_val(1)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--pin", request.pin,
                "pin each rank to one core (local rank r on the r-th allowed core, modulo "
                "their count): less run-to-run noise on a shared machine");
  cmd->add_option(kRepeatOutputFlag, request.repeat_output)->group("");  // parent to ranks
  cmd->callback([args, argv, warmup] {
    args->request.warmup_given = warmup->count() > 0;
    run_command(*args, argv);
  });
}

}  // namespace pipetwin
