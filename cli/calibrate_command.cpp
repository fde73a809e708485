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

#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/calibrate_from_trace.h"
#include "backend/common/local_launcher.h"
#include "backend/common/temporary_directory.h"
#include "backend/run/built_backends.h"
#include "backend/run/real_run_driver.h"
#include "cli/cli_app.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
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

// The zoo's efficiency and utilisation curve from the GEMMs of the scenario's precision,
// against its gpu.peak_tflops; returns the header lines saying so.
std::string gemm_efficiency(const Calibration& cuda, LoadedScenario& loaded, bool gemm_curve) {
  proto::Scenario& s = loaded.scenario;
  const proto::Precision precision = s.training().precision();
  const std::vector<GemmSample>& samples = precision == proto::BF16   ? cuda.gemm_bf16
                                           : precision == proto::FP16 ? cuda.gemm_fp16
                                                                      : cuda.gemm_fp32;
  const char* name = precision == proto::BF16   ? "BF16"
                     : precision == proto::FP16 ? "FP16"
                                                : "FP32 (TF32 tensor cores)";
  std::cerr << "GEMM m x 8192 x 8192    BF16          FP16          FP32/TF32\n";
  for (size_t i = 0; i < cuda.gemm_bf16.size(); ++i) {
    auto tflops = [&](const std::vector<GemmSample>& list) {
      std::ostringstream text;
      text << std::fixed << std::setprecision(1) << std::setw(8)
           << list[i].flops() / list[i].seconds / 1e12 << " TF/s";
      return text.str();
    };
    std::cerr << "m = " << std::left << std::setw(18) << cuda.gemm_bf16[i].m << std::right
              << tflops(cuda.gemm_bf16) << tflops(cuda.gemm_fp16) << tflops(cuda.gemm_fp32) << "\n";
  }
  if (cuda.gemm_bf16.empty()) return "";
  if (!s.model().has_zoo() || !s.cluster().gpu().has_peak_tflops()) {
    std::cerr << "pipetwin calibrate: no zoo model: the GEMM efficiency is not written\n";
    return "";
  }
  const GemmEfficiencyFit fit =
      fit_gemm_efficiency(samples, s.cluster().gpu().peak_tflops() * 1e12);
  proto::Zoo* zoo = s.mutable_model()->mutable_zoo();
  // GEMM rows per sample: a transformer sample is seq_len tokens; an MLP sample one row.
  // VGG's convolutions have a different row count per layer: its efficiency stays flat.
  const bool transformer = zoo->name() == "gpt" || zoo->name() == "transformer";
  // --gemm-curve, a transformer on a GPU with a GEMM curve: the curve's fraction, and no flat
  // efficiency, so that every GEMM is timed by its shape (docs/models.md).
  if (const std::optional<GemmCurve> curve =
          gemm_curve ? resolve_scenario(loaded).cluster.gemm_curve : std::nullopt;
      transformer && curve) {
    const double fraction = fit_gemm_peak_fraction(samples, *curve);
    s.mutable_cluster()->mutable_gpu()->mutable_gemm_efficiency()->set_peak_fraction(fraction);
    zoo->clear_efficiency();
    zoo->clear_utilization_half_batch();
    std::ostringstream line;
    line << "# cluster.gpu.gemm_efficiency.peak_fraction " << fraction
         << " fitted by `pipetwin calibrate --backend cuda` to cuBLAS " << name << " GEMMs on "
         << cuda.device_name << " (up to " << fit.largest_tflops
         << " TFLOP/s); model.zoo.efficiency left unset, so that the GEMM curve times the "
            "model.\n";
    std::cerr << line.str().substr(2);
    return line.str();
  }
  const double rows = transformer ? zoo->seq_len() : zoo->name() == "mlp" ? 1 : 0;
  zoo->set_efficiency(fit.efficiency);
  if (rows > 0) zoo->set_utilization_half_batch(half_batch_samples(fit, rows));
  std::ostringstream line;
  line << "# model.zoo.efficiency " << fit.efficiency << " of " << s.cluster().gpu().peak_tflops()
       << " TFLOP/s";
  if (rows > 0) line << " and utilization_half_batch " << zoo->utilization_half_batch();
  line << " fitted by `pipetwin calibrate --backend cuda` to cuBLAS " << name << " GEMMs on "
       << cuda.device_name << " (up to " << fit.largest_tflops << " TFLOP/s).\n";
  std::cerr << line.str().substr(2);
  return line.str();
}

// The GPUs as one process measured them: copies on GPU 0, NCCL between GPUs 0 and 1.
void write_gpu_calibration(const CalibrateArgs& args, LoadedScenario& loaded,
                           const Calibration& gpu) {
  auto us = [](double seconds) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(2) << std::setw(10) << seconds * 1e6 << " us";
    return text.str();
  };
  const MeasuredLink& h2d = *gpu.host_to_device;
  const MeasuredLink& d2h = *gpu.device_to_host;
  std::cerr << "CUDA calibration on " << gpu.device_name << " (" << gpu.device_count
            << " GPU(s) visible)\n"
            << "bytes           host->device      device->host      NCCL p2p 0->1\n";
  for (size_t i = 0; i < h2d.samples.size(); ++i) {
    std::cerr << std::left << std::setw(14) << static_cast<int64_t>(h2d.samples[i].first)
              << std::right << "  " << us(h2d.samples[i].second) << "  "
              << us(d2h.samples[i].second) << "  "
              << (gpu.intra_node ? us(gpu.intra_node->samples[i].second) : "   -") << "\n";
  }
  auto print_fit = [](const char* name, const LinkFit& fit) {
    std::cerr << name << " fit: latency " << fit.latency_s * 1e6 << " us, bandwidth "
              << fit.bandwidth_bytes_per_s / 1e9 << " GB/s\n";
  };
  print_fit("host->device", h2d.fit);
  print_fit("device->host", d2h.fit);
  std::string header =
      "# host_link measured by `pipetwin calibrate --backend cuda` (pinned host->device "
      "copies on " +
      gpu.device_name + ").\n";
  proto::Link* host = loaded.scenario.mutable_cluster()->mutable_host_link();
  host->set_bandwidth_gbytes_per_s(h2d.fit.bandwidth_bytes_per_s / 1e9);
  host->set_latency_us(h2d.fit.latency_s * 1e6);
  if (gpu.intra_node) {
    print_fit("NCCL p2p", gpu.intra_node->fit);
    proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
    intra->set_bandwidth_gbytes_per_s(gpu.intra_node->fit.bandwidth_bytes_per_s / 1e9);
    intra->set_latency_us(gpu.intra_node->fit.latency_s * 1e6);
    header +=
        "# intra_node measured by `pipetwin calibrate --backend cuda` (NCCL send/recv "
        "between GPUs 0 and 1).\n";
  } else {
    std::cerr << "pipetwin calibrate: " << gpu.intra_node_note << "\n";
  }
  header += gemm_efficiency(gpu, loaded, args.gemm_curve);
  write_scenario(loaded.scenario, loaded, header, args.output, "calibrated scenario");
}

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
      if (speaks) write_gpu_calibration(args, loaded, backend->calibrate({}, request));
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
  const MeasuredLink& idle = *links.intra_node_alone;
  const MeasuredLink& loaded_link = *links.intra_node;
  if (env.rank != 0) return;
  std::cerr << "bytes        one-way alone   one-way while both ranks compute\n";
  for (size_t k = 0; k < idle.samples.size(); ++k) {
    std::cerr << std::left << std::setw(12) << idle.samples[k].first << std::right << " "
              << std::setw(10) << idle.samples[k].second * 1e6 << " us  " << std::setw(10)
              << loaded_link.samples[k].second * 1e6 << " us\n";
  }
  auto fit_text = [](const MeasuredLink& link) {
    std::ostringstream text;
    text << "latency " << link.fit.latency_s * 1e6 << " us, bandwidth "
         << link.fit.bandwidth_bytes_per_s / 1e9 << " GB/s";
    return text.str();
  };
  std::cerr << "fit alone:        " << fit_text(idle) << "\n"
            << "fit under load:   " << fit_text(loaded_link) << "\n";
  const MeasuredLink& chosen = args.idle_link ? idle : loaded_link;
  proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
  intra->set_bandwidth_gbytes_per_s(chosen.fit.bandwidth_bytes_per_s / 1e9);
  intra->set_latency_us(chosen.fit.latency_s * 1e6);
  write_scenario(
      loaded.scenario, loaded,
      "# intra_node measured by `pipetwin calibrate` (LibTorch ranks, Gloo point-to-point, " +
          std::to_string(args.nproc) + " ranks" +
          (args.idle_link ? ", alone" : ", while every rank computes: the median exchange") +
          ").\n# Alone: " + fit_text(idle) + "; under load: " + fit_text(loaded_link) + ".\n",
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
