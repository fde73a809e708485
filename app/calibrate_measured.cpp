#include "app/calibrate_measured.h"

#include <iomanip>
#include <optional>
#include <sstream>

#include "backend/common/gemm_fit.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

// The zoo's efficiency and utilisation curve from the GEMMs of the scenario's precision,
// against its gpu.peak_tflops; returns the header lines saying so.
std::string gemm_efficiency(const Calibration& cuda, LoadedScenario& loaded, bool gemm_curve,
                            std::ostream& log) {
  proto::Scenario& s = loaded.scenario;
  const proto::Precision precision = s.training().precision();
  const std::vector<GemmSample>& samples = precision == proto::BF16   ? cuda.gemm_bf16
                                           : precision == proto::FP16 ? cuda.gemm_fp16
                                                                      : cuda.gemm_fp32;
  const char* name = precision == proto::BF16   ? "BF16"
                     : precision == proto::FP16 ? "FP16"
                                                : "FP32 (TF32 tensor cores)";
  log << "GEMM m x 8192 x 8192    BF16          FP16          FP32/TF32\n";
  for (size_t i = 0; i < cuda.gemm_bf16.size(); ++i) {
    auto tflops = [&](const std::vector<GemmSample>& list) {
      std::ostringstream text;
      text << std::fixed << std::setprecision(1) << std::setw(8)
           << list[i].flops() / list[i].seconds / 1e12 << " TF/s";
      return text.str();
    };
    log << "m = " << std::left << std::setw(18) << cuda.gemm_bf16[i].m << std::right
        << tflops(cuda.gemm_bf16) << tflops(cuda.gemm_fp16) << tflops(cuda.gemm_fp32) << "\n";
  }
  if (cuda.gemm_bf16.empty()) return "";
  if (!s.model().has_zoo() || !s.cluster().gpu().has_peak_tflops()) {
    log << "pipetwin calibrate: no zoo model: the GEMM efficiency is not written\n";
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
    log << line.str().substr(2);
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
  log << line.str().substr(2);
  return line.str();
}

}  // namespace

std::string apply_gpu_calibration(const Calibration& gpu, bool gemm_curve, LoadedScenario& loaded,
                                  std::ostream& log) {
  auto us = [](double seconds) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(2) << std::setw(10) << seconds * 1e6 << " us";
    return text.str();
  };
  const MeasuredLink& h2d = *gpu.host_to_device;
  const MeasuredLink& d2h = *gpu.device_to_host;
  log << "CUDA calibration on " << gpu.device_name << " (" << gpu.device_count
      << " GPU(s) visible)\n"
      << "bytes           host->device      device->host      NCCL p2p 0->1\n";
  for (size_t i = 0; i < h2d.samples.size(); ++i) {
    log << std::left << std::setw(14) << static_cast<int64_t>(h2d.samples[i].first) << std::right
        << "  " << us(h2d.samples[i].second) << "  " << us(d2h.samples[i].second) << "  "
        << (gpu.intra_node ? us(gpu.intra_node->samples[i].second) : "   -") << "\n";
  }
  auto print_fit = [&log](const char* name, const LinkFit& fit) {
    log << name << " fit: latency " << fit.latency_s * 1e6 << " us, bandwidth "
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
    log << "pipetwin calibrate: " << gpu.intra_node_note << "\n";
  }
  header += gemm_efficiency(gpu, loaded, gemm_curve, log);
  return header;
}

std::string apply_rank_link(const Calibration& links, bool idle_link, int ranks,
                            LoadedScenario& loaded, std::ostream& log) {
  const MeasuredLink& idle = *links.intra_node_alone;
  const MeasuredLink& loaded_link = *links.intra_node;
  log << "bytes        one-way alone   one-way while both ranks compute\n";
  for (size_t k = 0; k < idle.samples.size(); ++k) {
    log << std::left << std::setw(12) << idle.samples[k].first << std::right << " " << std::setw(10)
        << idle.samples[k].second * 1e6 << " us  " << std::setw(10)
        << loaded_link.samples[k].second * 1e6 << " us\n";
  }
  auto fit_text = [](const MeasuredLink& link) {
    std::ostringstream text;
    text << "latency " << link.fit.latency_s * 1e6 << " us, bandwidth "
         << link.fit.bandwidth_bytes_per_s / 1e9 << " GB/s";
    return text.str();
  };
  log << "fit alone:        " << fit_text(idle) << "\n"
      << "fit under load:   " << fit_text(loaded_link) << "\n";
  const MeasuredLink& chosen = idle_link ? idle : loaded_link;
  proto::Link* intra = loaded.scenario.mutable_cluster()->mutable_intra_node();
  intra->set_bandwidth_gbytes_per_s(chosen.fit.bandwidth_bytes_per_s / 1e9);
  intra->set_latency_us(chosen.fit.latency_s * 1e6);
  std::string header =
      "# intra_node measured by `pipetwin calibrate` (LibTorch ranks, Gloo point-to-point, ";
  header += std::to_string(ranks);
  header += idle_link ? " ranks, alone" : " ranks, while every rank computes: the median exchange";
  header += ").\n# Alone: ";
  header += fit_text(idle);
  header += "; under load: ";
  header += fit_text(loaded_link);
  header += ".\n";
  return header;
}

}  // namespace pipetwin
