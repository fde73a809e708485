// `pipetwin calibrate SCENARIO [--nproc 2] [--sizes ...] [--backend torch|cuda] [-o FILE]`:
// measures the link between two ranks (LibTorch ranks, Gloo point-to-point), then runs the
// scenario a few times for a few iterations and fits it to those runs as `--from` does (the
// costs, the link under load, interference and dispatch gaps: what a run adds to the
// micro-benchmarks), so that the simulators predict this machine. `--alone` stops after the
// micro-benchmarks and writes the scenario with the measured intra_node bandwidth and
// latency. `--backend cuda` measures the GPUs instead (NCCL send/recv between GPUs 0
// and 1 for intra_node, pinned host->device copies for host_link, cuBLAS GEMMs for the
// zoo's efficiency), and falls back to CPU ranks when no GPU is visible. Both go through
// the real-backend seam (backend/common/real_backend.h). Built into `pipetwin-real` only.

#include <iostream>
#include <memory>

#include "app/calibrate_from_trace.h"
#include "app/calibrate_measured.h"
#include "backend/common/local_launcher.h"
#include "backend/common/temporary_directory.h"
#include "backend/run/built_backends.h"
#include "backend/run/real_run_driver.h"
#include "cli/cli_app.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

struct CalibrateArgs {
  std::string scenario;
  int nproc = 2;
  std::vector<int64_t> sizes = {4096, 65536, 262144, 1048576, 4194304, 16777216};
  int repeats = 9;
  double timeout_s = 60;
  std::string output;
  std::string backend = "torch";
  std::vector<std::string> from_timelines;
  bool alone = false;
  bool idle_link = false;
  int run_iterations = 5;
  int runs = 3;
  bool pin = false;
  bool gemm_curve = false;
  std::vector<std::string> overrides;
  std::string links_output;  // parent to ranks: where the micro-benchmarked scenario goes
};

// The micro-benchmarks on the ranks, then `runs` runs of the scenario they wrote, then the fit
// to those runs together (several average over the machine's moods). The fitted scenario
// keeps the user's iteration count.
void calibrate_with_runs(const CalibrateArgs& args, const std::vector<std::string>& argv,
                         const std::string& backend, RankStart start) {
  const TemporaryDirectory dir("pipetwin-calibrate-");
  const std::string links = (dir.path() / "micro-benchmarked.textproto").string();
  std::vector<std::string> ranks = with_backend_argument(argv, backend);
  ranks.insert(ranks.end(), {"--links-output", links});
  launch_local_ranks_or_throw(ranks, args.nproc, args.timeout_s, start);
  const std::string iterations = "training.iterations=" + std::to_string(args.run_iterations);
  const std::string what = std::to_string(args.runs) + " run" + (args.runs > 1 ? "s" : "") +
                           " of " + std::to_string(args.run_iterations) + " iterations";
  std::cerr << "pipetwin calibrate: " << what
            << " (each after one warm-up) to fit what a run adds\n";
  // A run of the micro-benchmarked scenario on the ranks, its timeline written to `timeline`.
  const auto run_scenario = [&](const std::string& timeline, const std::string& extra_set) {
    std::vector<std::string> run = {
        argv[0],      "run",    links,   "--timeout", std::to_string(args.timeout_s),
        "--timeline", timeline, "--set", iterations};
    if (!extra_set.empty()) run.insert(run.end(), {"--set", extra_set});
    if (args.pin) run.push_back("--pin");
    run_own_command_or_throw(run);
  };
  // With an even microbatch count, each run is followed by one with half the microbatches,
  // each twice the size: a second size tells each pass's fixed cost (launches, the
  // collectives inside a split pass) from its cost per sample, which one size leaves to the
  // profiled curve's shape. Its passes and transfers join the fit; the gaps and the makespan
  // stay the scenario's own. The two sizes alternate so that the machine's drift over
  // minutes (10-30% on a shared host) slows both alike instead of bending the line between
  // them.
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const int32_t microbatches = loaded.scenario.training().microbatches();
  const bool resizable = microbatches >= 2 && microbatches % 2 == 0 &&
                         loaded.scenario.schedule().stage_plans_size() == 0;
  const std::string half = std::to_string(microbatches / 2);
  if (resizable) {
    std::cerr << "pipetwin calibrate: each followed by a run of " << args.run_iterations
              << " iterations with " << half << " microbatches of twice the size\n";
  }
  std::vector<std::string> timelines, resized;
  for (int k = 0; k < args.runs; ++k) {
    timelines.push_back((dir.path() / ("run" + std::to_string(k) + ".timeline")).string());
    run_scenario(timelines.back(), "");
    if (!resizable) continue;
    resized.push_back((dir.path() / ("resized" + std::to_string(k) + ".timeline")).string());
    run_scenario(resized.back(), "training.microbatches=" + half);
  }
  const std::string also =
      resizable ? ", each followed by one with " + half + " microbatches of twice the size" : "";
  FittedScenario fitted = fit_scenario_to_runs(links, {iterations}, timelines, resized);
  fitted.scenario.mutable_training()->set_iterations(loaded.scenario.training().iterations());
  const std::string header = "# Calibrated by `pipetwin calibrate` on " +
                             std::to_string(args.nproc) +
                             " LibTorch ranks: link micro-benchmarks, then " + what +
                             " that the scenario is fitted to" + also + ".\n" + fitted.header;
  std::cerr << fitted.header;
  write_scenario(fitted.scenario, loaded, header, args.output, "calibrated scenario");
}

void run_calibrate(const CalibrateArgs& args, const std::vector<std::string>& argv) {
  if (!args.from_timelines.empty()) {
    return calibrate_from_trace(args.scenario, args.overrides, args.from_timelines, args.output);
  }
  LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  for (int64_t s : args.sizes) {
    if (s < 4) throw InputError("--sizes: each message needs at least 4 bytes");
  }
  // Under a launcher (torchrun, ...) rank 0 speaks and, with GPUs, measures them alone.
  const bool speaks = !launched_as_rank() || rank_environment().rank == 0;
  std::string name = canonical_backend_name(args.backend, speaks ? &std::cerr : nullptr);
  std::unique_ptr<RealBackend> backend = make_built_backend(name, nullptr);
  const CalibrationRequest request{args.sizes, args.repeats, args.timeout_s};
  if (backend->calibrates_in_one_process()) {
    if (const std::string reason = backend->unavailable(); reason.empty()) {
      if (speaks) {
        const std::string header = apply_gpu_calibration(backend->calibrate({}, request),
                                                         args.gemm_curve, loaded, std::cerr);
        write_scenario(loaded.scenario, loaded, header, args.output, "calibrated scenario");
      }
      return;
    } else if (speaks) {
      std::cerr << "pipetwin calibrate: " << reason
                << "; falling back to CPU ranks (--backend torch)\n";
    }
    name = "torch";
    backend = make_built_backend(name, nullptr);
  }
  if (!launched_as_rank()) {
    if (!args.alone) return calibrate_with_runs(args, argv, name, backend->rank_start());
    // The local ranks need not resolve the name, nor look for GPUs, again.
    launch_local_ranks_or_throw(with_backend_argument(argv, name), args.nproc, args.timeout_s,
                                backend->rank_start());
    return;
  }
  const RankEnvironment env = rank_environment();
  // Alone, then as a run sees it: both ranks computing meanwhile.
  const Calibration links = backend->calibrate(env, request);
  if (env.rank != 0) return;
  const std::string header = apply_rank_link(links, args.idle_link, args.nproc, loaded, std::cerr);
  write_scenario(loaded.scenario, loaded, header,
                 args.links_output.empty() ? args.output : args.links_output,
                 args.links_output.empty() ? "calibrated scenario" : "");
}

}  // namespace

void add_calibrate_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "measure the links between ranks, or fit a scenario to a measured run");
  cmd->add_option("scenario", args->scenario, "scenario whose cluster to calibrate")->required();
  cmd->add_option("--nproc", args->nproc, "ranks to spawn locally")->default_val(2);
  cmd->add_option("--sizes", args->sizes, "message sizes in bytes")->delimiter(',');
  cmd->add_option("--repeats", args->repeats, "exchanges per size (the fastest counts)")
      ->default_val(9)
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--timeout", args->timeout_s, "seconds any wait may take")->default_val(60);
  cmd->add_option("-o,--output", args->output, "scenario to write (default: stdout)");
  cmd->add_option("--from", args->from_timelines,
                  "fit the scenario's costs, links, interference and dispatch to this measured "
                  "run (a `pipetwin run --timeline` of the scenario; repeatable: several runs "
                  "are fitted together) instead of measuring");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_flag("--alone", args->alone,
                "micro-benchmarks only: write the measured link without running the scenario "
                "(default: then run it for a few iterations and fit it to that run)");
  cmd->add_flag("--idle-link", args->idle_link,
                "with --alone: write the link as measured with idle ranks (default: while "
                "every rank computes, as in a run)");
  cmd->add_option("--run-iterations", args->run_iterations,
                  "iterations of each run the scenario is fitted to (after one warm-up)")
      ->default_val(5)
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--runs", args->runs,
                  "runs of the scenario fitted together (several average over the machine's "
                  "moods); with an even microbatch count each is followed by one with half "
                  "the microbatches, twice the size")
      ->default_val(3)
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--pin", args->pin,
                "pin each rank of those runs to one core, as `pipetwin run --pin` does");
  cmd->add_flag("--gemm-curve", args->gemm_curve,
                "--backend cuda, a gpt or transformer zoo model on a GPU with a GEMM curve: fit "
                "the curve's peak_fraction (cluster.gpu.gemm_efficiency) and leave "
                "model.zoo.efficiency unset, instead of fitting the flat efficiency");
  cmd->add_option("--links-output", args->links_output)->group("");  // parent to ranks
  cmd->add_option("--backend", args->backend,
                  "torch: LibTorch ranks on CPU, over Gloo (`gloo` is accepted for it); cuda: "
                  "GPUs with CUDA + NCCL (falls back to torch without one)")
      ->default_val("torch");
  cmd->callback([args, argv] { run_calibrate(*args, argv); });
}

}  // namespace pipetwin
