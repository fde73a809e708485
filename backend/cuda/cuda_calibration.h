// backend/cuda: measures a GPU machine with the CUDA runtime and NCCL directly, no
// LibTorch: host<->device copies from pinned memory (the PCIe host link) on device 0, and
// NCCL point-to-point between devices 0 and 1 (the intra-node link), each fitted to
// latency + bytes / bandwidth; and cuBLAS GEMM throughput over shapes and precisions
// (backend/common/gemm_fit.h turns it into the zoo's efficiency). Plain C++ header: no CUDA types,
// callers build with g++.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backend/common/gemm_fit.h"
#include "backend/common/link_fit.h"

namespace pipetwin {

// "" when at least one CUDA device is visible, else a one-line reason such as
// "no CUDA device is visible (cudaGetDeviceCount: no CUDA-capable device is detected)".
// Safe without a driver or a GPU: it never crashes or hangs.
std::string cuda_unavailable();

struct CudaCalibration {
  std::string device_name;  // device 0, which the copies ran on
  int device_count = 0;
  // (bytes, one-way seconds): the fastest of the repeats per size, timed with CUDA events.
  std::vector<std::pair<double, double>> h2d_samples, d2h_samples, nccl_p2p_samples;
  LinkFit h2d, d2h, nccl_p2p;
  bool nccl_p2p_measured = false;  // false with fewer than 2 devices
  std::string nccl_p2p_note;       // why it was not measured
  // cuBLAS GEMMs on device 0 (m rows of an m x k by k x n product, n and k fixed), the
  // fastest of the repeats per shape: BF16 and FP16 inputs with FP32 accumulation, FP32
  // inputs on TF32 tensor cores (what frameworks use for FP32 training by default).
  std::vector<GemmSample> gemm_bf16, gemm_fp16, gemm_fp32;
};

// Times each size `repeats` times after 2 warm-ups and keeps the fastest (noise only adds
// time). Throws std::runtime_error naming the CUDA/NCCL call that failed and its error
// string, or giving cuda_unavailable()'s reason when there is no device.
CudaCalibration calibrate_cuda(const std::vector<int64_t>& sizes, int repeats);

}  // namespace pipetwin
