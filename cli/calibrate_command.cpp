// `pipetwin calibrate SCENARIO [--nproc 2] [--sizes ...] [--backend gloo|cuda] [-o FILE]`:
// measures the link between two ranks (Gloo point-to-point) and writes the scenario again
// with that intra_node bandwidth and latency, so that the simulators predict this machine.
// `--backend cuda` measures the GPUs instead (backend/cuda: NCCL send/recv between GPUs 0
// and 1 for intra_node, pinned host->device copies for host_link), and falls back to Gloo
// when no GPU is visible. Built into `pipetwin-real` only.

#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#if PIPETWIN_HAS_CUDA
#include "backend/cuda/cuda_calibration.h"
#endif
#include "app/calibrate_from_trace.h"
#include "backend/common/local_launcher.h"
#include "backend/torch/link_calibration.h"
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
  std::string backend = "gloo";
  std::vector<std::string> from_timelines;
  bool alone = false;
  std::vector<std::string> overrides;
};

#if PIPETWIN_HAS_CUDA
// The zoo's efficiency and utilisation curve from the GEMMs of the scenario's precision,
// against its gpu.peak_tflops; returns the header lines saying so.
std::string gemm_efficiency(const CudaCalibration& cuda, LoadedScenario& loaded) {
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
  if (!s.model().has_zoo() || !s.cluster().gpu().has_peak_tflops()) {
    std::cerr << "pipetwin calibrate: no zoo model: the GEMM efficiency is not written\n";
    return "";
  }
  const GemmEfficiencyFit fit =
      fit_gemm_efficiency(samples, s.cluster().gpu().peak_tflops() * 1e12);
  proto::Zoo* zoo = s.mutable_model()->mutable_zoo();
  // GEMM rows per sample: a GPT sample is seq_len tokens; an MLP sample one row. VGG's
  // convolutions have a different row count per layer: its efficiency stays flat.
  const double rows = zoo->name() == "gpt" ? zoo->seq_len() : zoo->name() == "mlp" ? 1 : 0;
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

// One process drives the GPUs: copies on GPU 0, NCCL between GPUs 0 and 1.
void calibrate_with_cuda(const CalibrateArgs& args, LoadedScenario& loaded) {
  CudaCalibration cuda;
  try {
    cuda = calibrate_cuda(args.sizes, args.repeats);
  } catch (const std::exception& e) {
    throw RuntimeFailure(std::string("CUDA calibration failed: ") + e.what());
  }
  auto us = [](double seconds) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(2) << std::setw(10) << seconds * 1e6 << " us";
    return text.str();
  };
  std::cerr << "CUDA calibration on " << cuda.device_name << " (" << cuda.device_count
            << " GPU(s) visible)\n"
            << "bytes           host->device      device->host      NCCL p2p 0->1\n";
  for (size_t i = 0; i < cuda.h2d_samples.size(); ++i) {
    std::cerr << std::left << std::setw(14) << static_cast<int64_t>(cuda.h2d_samples[i].first)
              << std::right << "  " << us(cuda.h2d_samples[i].second) << "  "
              << us(cuda.d2h_samples[i].second) << "  "
              << (cuda.nccl_p2p_measured ? us(cuda.nccl_p2p_samples[i].second) : "   -") << "\n";
  }
  auto print_fit = [](const char* name, const LinkFit& fit) {
    std::cerr << name << " fit: latency " << fit.latency_s * 1e6 << " us, bandwidth "
              << fit.bandwidth_bytes_per_s / 1e9 << " GB/s\n";
  };
  print_fit("host->device", cuda.h2d);
  print_fit("device->host", cuda.d2h);
  std::string header =
      "# host_link measured by `pipetwin calibrate --backend cuda` (pinned host->device "
      "copies on " +
      cuda.device_name + ").\n";
  proto::Link* host = loaded.scenario.mutable_cluster()->mutable_host_link();
  host->set_bandwidth_gbytes_per_s(cuda.h2d.bandwidth_bytes_per_s / 1e9);
  host->set_latency_us(cuda.h2d.latency_s * 1e6);
  if (cuda.nccl_p2p_measured) {
    print_fit("NCCL p2p", cuda.nccl_p2p);
    proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
    intra->set_bandwidth_gbytes_per_s(cuda.nccl_p2p.bandwidth_bytes_per_s / 1e9);
    intra->set_latency_us(cuda.nccl_p2p.latency_s * 1e6);
    header +=
        "# intra_node measured by `pipetwin calibrate --backend cuda` (NCCL send/recv "
        "between GPUs 0 and 1).\n";
  } else {
    std::cerr << "pipetwin calibrate: " << cuda.nccl_p2p_note << "\n";
  }
  header += gemm_efficiency(cuda, loaded);
  write_scenario(loaded.scenario, loaded, header, args.output, "calibrated scenario");
}
#endif

// The command line the local ranks run: this one with `--backend gloo`.
std::vector<std::string> with_gloo_backend(std::vector<std::string> argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--backend" && i + 1 < argv.size()) argv[i + 1] = "gloo";
    if (argv[i].rfind("--backend=", 0) == 0) argv[i] = "--backend=gloo";
  }
  return argv;
}

void run_calibrate(const CalibrateArgs& args, const std::vector<std::string>& argv) {
  if (!args.from_timelines.empty()) {
    return calibrate_from_trace(args.scenario, args.overrides, args.from_timelines, args.output);
  }
  LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  for (int64_t s : args.sizes) {
    if (s < 4) throw InputError("--sizes: each message needs at least 4 bytes");
  }
  std::vector<std::string> rank_argv = argv;
  if (args.backend == "cuda") {
#if PIPETWIN_HAS_CUDA
    // Under a launcher (torchrun, ...) rank 0 speaks and, with GPUs, measures them alone.
    const bool speaks = !launched_as_rank() || rank_environment().rank == 0;
    if (const std::string reason = cuda_unavailable(); reason.empty()) {
      if (speaks) calibrate_with_cuda(args, loaded);
      return;
    } else if (speaks) {
      std::cerr << "pipetwin calibrate: " << reason << "; falling back to Gloo on CPU ranks\n";
    }
    rank_argv = with_gloo_backend(argv);  // the local ranks need not look again
#else
    throw RuntimeFailure("this build has no CUDA backend (nvcc not found at configure time)");
#endif
  }
  if (!launched_as_rank()) {
    launch_local_ranks_or_throw(rank_argv, args.nproc, args.timeout_s);
    return;
  }
  const RankEnvironment env = rank_environment();
  // Alone, then as a run sees it: both ranks computing meanwhile.
  const LinkCalibrations links = calibrate_link(env, args.sizes, args.repeats, args.timeout_s);
  const LinkCalibration& idle = links.alone;
  const LinkCalibration& loaded_link = links.under_load;
  if (env.rank != 0) return;
  std::cerr << "bytes        one-way alone   one-way while both ranks compute\n";
  for (size_t k = 0; k < idle.samples.size(); ++k) {
    std::cerr << std::left << std::setw(12) << idle.samples[k].first << std::right << " "
              << std::setw(10) << idle.samples[k].second * 1e6 << " us  " << std::setw(10)
              << loaded_link.samples[k].second * 1e6 << " us\n";
  }
  auto fit_text = [](const LinkCalibration& link) {
    std::ostringstream text;
    text << "latency " << link.latency_s * 1e6 << " us, bandwidth "
         << link.bandwidth_bytes_per_s / 1e9 << " GB/s";
    return text.str();
  };
  std::cerr << "fit alone:        " << fit_text(idle) << "\n"
            << "fit under load:   " << fit_text(loaded_link) << "\n";
  const LinkCalibration& chosen = args.alone ? idle : loaded_link;
  proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
  intra->set_bandwidth_gbytes_per_s(chosen.bandwidth_bytes_per_s / 1e9);
  intra->set_latency_us(chosen.latency_s * 1e6);
  write_scenario(loaded.scenario, loaded,
                 "# intra_node measured by `pipetwin calibrate` (Gloo point-to-point, " +
                     std::to_string(args.nproc) + " ranks" +
                     (args.alone ? ", alone" : ", while every rank computes: the median exchange") +
                     ").\n# Alone: " + fit_text(idle) + "; under load: " + fit_text(loaded_link) +
                     ".\n",
                 args.output, "calibrated scenario");
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
                "write the link as measured with idle ranks (default: while every rank "
                "computes, as in a run)");
  cmd->add_option("--backend", args->backend,
                  "gloo: CPU ranks; cuda: GPUs with CUDA + NCCL (falls back to gloo without one)")
      ->default_val("gloo")
      ->check(CLI::IsMember({"gloo", "cuda"}));
  cmd->callback([args, argv] { run_calibrate(*args, argv); });
}

}  // namespace pipetwin
