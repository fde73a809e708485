// `pipetwin-cuda-probe [--sizes B,...] [--repeats N]`: measures this machine's GPUs with
// backend/cuda (no LibTorch) and prints one JSON object on stdout. Without a GPU it prints
// the reason on one line to stderr and exits 1; a failing CUDA/NCCL call also exits 1.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/cuda/cuda_calibration.h"

namespace {

nlohmann::json link_json(const pipetwin::LinkFit& fit,
                         const std::vector<std::pair<double, double>>& samples) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& [bytes, seconds] : samples) points.push_back({bytes, seconds});
  return {{"latency_s", fit.latency_s},
          {"bandwidth_bytes_per_s", fit.bandwidth_bytes_per_s},
          {"samples_bytes_seconds", points}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Measures host<->device copies and NCCL point-to-point with CUDA directly"};
  std::vector<int64_t> sizes = {4096, 65536, 1048576, 4194304, 16777216, 67108864};
  int repeats = 9;
  app.add_option("--sizes", sizes, "message sizes in bytes")->delimiter(',');
  app.add_option("--repeats", repeats, "timed runs per size (the fastest counts)")
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);

  if (const std::string reason = pipetwin::cuda_unavailable(); !reason.empty()) {
    std::cerr << "pipetwin-cuda-probe: " << reason << "\n";
    return 1;
  }
  try {
    const pipetwin::CudaCalibration calibration = pipetwin::calibrate_cuda(sizes, repeats);
    nlohmann::json out = {{"device_name", calibration.device_name},
                          {"device_count", calibration.device_count},
                          {"h2d", link_json(calibration.h2d, calibration.h2d_samples)},
                          {"d2h", link_json(calibration.d2h, calibration.d2h_samples)},
                          {"nccl_p2p", nullptr}};
    if (calibration.nccl_p2p_measured) {
      out["nccl_p2p"] = link_json(calibration.nccl_p2p, calibration.nccl_p2p_samples);
    } else {
      out["nccl_p2p_note"] = calibration.nccl_p2p_note;
      std::cerr << "pipetwin-cuda-probe: " << calibration.nccl_p2p_note << "\n";
    }
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "pipetwin-cuda-probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
