#include "backend/run/real_run_driver.h"

#include <iostream>

#include "backend/common/core_pinning.h"
#include "backend/common/local_launcher.h"
#include "backend/run/repeated_runs.h"
#include "sim/scenario/freeze_log.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

void write_freeze_log(const std::string& path, int32_t layers, int32_t interval,
                      const IntervalNorms& norms) {
  FreezeLog log;
  log.layers = layers;
  log.interval_iterations = interval;
  log.norms = norms;
  write_file_atomically(path, [&](std::ostream& out) { out << format_freeze_log(log); });
}

// Rank 0's freeze log: where asked, or in a --repeat repetition into its directory.
std::string freeze_log_path(const RealRunRequest& request) {
  if (request.repeat_output.empty()) return request.freeze_log;
  return (std::filesystem::path(request.repeat_output) / kRepeatFreezeLog).string();
}

// The checks a run passes before any rank is spawned, each one line.
void check_runnable(const RealRunRequest& request, const RealBackend& backend,
                    const LoadedScenario& loaded, const RunPlan& plan) {
  if (!plan.setup.schedule.stage_replicas.empty()) {
    // The real backends' reference runs and merged results assume one device per stage in
    // each pipeline replica.
    throw InputError(loaded.where("schedule.stage_replicas") +
                     ": real runs give every stage one rank; simulate replicated stages "
                     "with pipetwin simulate");
  }
  if (!backend.trains_model() && !request.freeze_log.empty()) {
    throw InputError(
        "--freeze-log records a model's gradients: the CUDA replay has no model "
        "(use --backend torch)");
  }
  if (!backend.trains_model() && plan.setup.freeze.enabled && plan.setup.freeze.measured()) {
    throw InputError(loaded.where("freeze") +
                     ": the CUDA replay has no model whose gradients it could measure: give the "
                     "freeze events with at, log or synthetic (or run with --backend torch)");
  }
  if (const std::string why = backend.unsupported(plan.run_setup, plan.run_program); !why.empty()) {
    throw InputError(loaded.source_name + ": " + why);
  }
  // Without a GPU, before anything is spawned: one line, exit 1.
  if (const std::string why = backend.unavailable(); !why.empty()) {
    throw RuntimeFailure(why + "; run on CPU ranks with --backend torch (the default)");
  }
}

// A rank: its part of the run, reported by rank 0.
void run_rank(const RealRunRequest& request, RealBackend& backend, const RunPlan& plan,
              RealRunReporter& reporter) {
  const ResolvedScenario& setup = plan.setup;
  RealRunOptions options = request.options;
  if (!request.freeze_log.empty()) {
    options.gradient_interval = request.freeze_interval > 0 ? request.freeze_interval
                                : setup.freeze.enabled      ? setup.freeze.interval_iterations
                                                            : 10;
  }
  const RankEnvironment env = rank_environment();
  if (request.pin) pin_to_own_core(env);
  const int32_t layers = static_cast<int32_t>(setup.model.layers.size());
  if (setup.freeze.enabled) {
    if (backend.trains_model() && (setup.freeze.log || setup.freeze.synthetic) && env.rank == 0) {
      std::cerr << "note: real ranks freeze by the rule on the gradients they measure; the "
                   "scenario's freeze log or synthetic gradients drive pipetwin simulate only\n";
    }
    const MeasuredRun run = backend.run_freezing(setup, env, options);
    if (env.rank != 0) return;
    if (!request.freeze_log.empty()) {
      write_freeze_log(freeze_log_path(request), layers, setup.freeze.interval_iterations,
                       run.gradient_norms);
    }
    return reporter.training_run(backend, env, run);
  }
  const MeasuredRun run = backend.run(plan.run_setup, plan.run_program, env, options);
  if (env.rank != 0) return;
  if (!request.freeze_log.empty()) {
    write_freeze_log(freeze_log_path(request), layers, options.gradient_interval,
                     run.gradient_norms);
  }
  reporter.program_run(backend, plan, env, run);
}

}  // namespace

std::vector<std::string> with_backend_argument(std::vector<std::string> argv,
                                               const std::string& backend) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--backend" && i + 1 < argv.size()) argv[i + 1] = backend;
    if (argv[i].rfind("--backend=", 0) == 0) argv[i] = "--backend=" + backend;
  }
  return argv;
}

void drive_real_run(const RealRunRequest& request, const BuiltBackends& built,
                    const LoadedScenario& loaded, const ResolvedScenario& setup,
                    const std::vector<std::string>& argv, RealRunReporter& reporter) {
  // The parent, or rank 0 of a job another launcher started, speaks for all.
  const bool speaks = !launched_as_rank() || rank_environment().rank == 0;
  const std::string name = canonical_backend_name(request.backend, speaks ? &std::cerr : nullptr);
  const std::unique_ptr<RealBackend> backend = make_real_backend(name, built, nullptr);
  const int32_t warmup =
      effective_warmup(setup, request.warmup, request.warmup_given, !request.freeze_log.empty());
  if (request.reference) {
    if (!setup.zoo) throw InputError("--reference needs a zoo model (model.zoo)");
    // The iterations the pipeline trains, warm-up included, so that its losses and
    // weights compare with these.
    ResolvedScenario trained = setup;
    trained.training.iterations += warmup;
    return reporter.reference(backend->run_reference(trained, request.options), warmup);
  }
  const RunPlan plan = plan_run(setup, warmup);
  check_runnable(request, *backend, loaded, plan);
  if (!launched_as_rank()) {
    const int devices = plan.run_program.num_devices;
    const int nproc = request.nproc > 0 ? request.nproc : devices;
    if (nproc != devices) {
      throw InputError("--nproc " + std::to_string(nproc) + ": the schedule needs " +
                       std::to_string(devices) + " ranks");
    }
    const std::vector<std::string> rank_argv = with_backend_argument(argv, name);
    const RankStart start = backend->rank_start();
    if (request.repeat <= 1)
      return launch_local_ranks_or_throw(rank_argv, nproc, request.options.timeout_s, start);
    return repeat_local_runs(
        rank_argv, nproc, request.options.timeout_s, start, request.repeat,
        [&](const std::filesystem::path& chosen, const RepeatSummary& summary) {
          if (!request.freeze_log.empty()) {
            const std::string log = read_text_file(chosen / kRepeatFreezeLog);
            write_file_atomically(request.freeze_log, [&](std::ostream& out) { out << log; });
          }
          reporter.repeated(chosen, summary);
        });
  }
  if (request.repeat > 1 && request.repeat_output.empty()) {
    throw InputError(
        "--repeat needs the local launcher: under torchrun, srun or mpirun (RANK is set), "
        "launch the job once per repetition");
  }
  run_rank(request, *backend, plan, reporter);
}

}  // namespace pipetwin
